"""Run the real Gemini CLI against a scripted model, in a scratch HOME and project.

The ``gemini`` fixture (``tests/e2e/conftest.py``) gives each test one
:class:`GeminiHarness`:

* ``home``: the CLI's ``HOME``, whose ``~/.gemini/settings.json`` selects API-key auth
  (else ``gemini -p`` exits 41) and turns off telemetry and update checks;
* ``project``: a git-initialised project folder, the cwd of every run;
* one mock Gemini API (``mock_gemini.py``) on 127.0.0.1, killed by PID.

``run(prompt, script)`` runs ``gemini -p PROMPT --approval-mode yolo --output-format json``
(stdin closed; yolo, because in ``-p`` the default mode has no shell or edit tool at all)
with ``GEMINI_CLI_TRUST_WORKSPACE=true`` (what a person does at the trust prompt) under a
deadline, and returns a :class:`GeminiRun`: the JSON result, stderr, whether the run ended
by itself, and the mock's requests of this run. The deadline matters: a hook that answers
``ask`` hangs a headless Gemini run for ever (shared/ref/gemini-hooks.md §4), so every test
asserts the run ended on its own.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mock_process import HostHarness, jsonl, wait_or_kill

HERE = Path(__file__).resolve().parent
MOCK = HERE / "mock_gemini.py"
PYTHON = sys.executable
#: variables from the outer environment that would change what Gemini CLI or smllm does
_SCRUB_PREFIXES = ("GEMINI", "GOOGLE", "CLAUDE", "CODEX", "ANTHROPIC_", "OPENAI", "SMLLM_")
#: the user settings every run starts from (the CLI migrates the two `general` keys)
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "telemetry": {"enabled": False},
}


def fields(rec: dict[str, Any]) -> dict[str, Any]:
    """A journal record's own fields (an event's or a fact's)."""
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def records_of(session: str) -> list[dict[str, Any]]:
    """The records of a host session's journal (in this test's SMLLM_HOME)."""
    from smllm import journal

    return list(journal.iter_records(journal.log_path(session)))


def dicts(value: Any) -> list[dict[str, Any]]:
    """Every object nested in a JSON value (an export), outermost first."""
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in dicts(v))]
    if isinstance(value, list):
        return [d for v in value for d in dicts(v)]
    return []


@dataclass
class GeminiRun:
    returncode: int | None
    ended: bool  #: the CLI exited by itself (False: killed at the deadline)
    seconds: float
    result: dict[str, Any]
    stderr: str
    log: list[dict[str, Any]]

    @property
    def session_id(self) -> str:
        """Gemini's session id (the JSON result's), the hooks' ``session_id``."""
        sid = self.result.get("session_id")
        if not isinstance(sid, str):
            raise AssertionError(f"no session_id in the run's output: {self.stderr[-2000:]}")
        return sid

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of the main requests the model received, in order."""
        return [r.get("body") or {} for r in self.log if r.get("kind") == "main"]

    def tool_outputs(self) -> dict[str, str]:
        """What the model received for each call: the call's id -> its response (the
        ``output`` or the ``error`` text)."""
        out: dict[str, str] = {}
        for body in self.requests:
            for content in body.get("contents") or []:
                for part in content.get("parts") or []:
                    answer = part.get("functionResponse") if isinstance(part, dict) else None
                    if isinstance(answer, dict):
                        response = answer.get("response") or {}
                        text = response.get("error", response.get("output"))
                        out[str(answer.get("id"))] = text if isinstance(text, str) else \
                            json.dumps(response)
        return out

    def user_texts(self) -> list[str]:
        """The user turns of the last main request (prompts, and stop-hook reasons)."""
        body = self.requests[-1] if self.requests else {}
        return [str(part.get("text")) for content in body.get("contents") or []
                if content.get("role") == "user" for part in content.get("parts") or []
                if isinstance(part, dict) and isinstance(part.get("text"), str)]


class GeminiHarness(HostHarness):
    HARNESS = "gemini"
    MOCK = MOCK
    SCRUB = _SCRUB_PREFIXES

    def __init__(self, root: Path, gemini_bin: Path, smllm_home: Path) -> None:
        self.settings_dir = root / "home" / ".gemini"
        super().__init__(root, gemini_bin, smllm_home, self.settings_dir)
        self.write_settings()

    # ------------------------------------------------------------------ Gemini CLI

    def write_settings(self, extra: Mapping[str, Any] | None = None) -> None:
        """The user's ~/.gemini/settings.json: :data:`USER_SETTINGS` and ``extra``."""
        data = {**USER_SETTINGS, **(extra or {})}
        (self.settings_dir / "settings.json").write_text(json.dumps(data, indent=2) + "\n")

    def host_env(self) -> dict[str, str]:
        return {"GEMINI_API_KEY": "mock-key",
                "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{self.port}",
                "GEMINI_CLI_TRUST_WORKSPACE": "true", "NO_COLOR": "1"}

    def run(self, prompt: str, script: Sequence[Mapping[str, Any]], *,
            extra: Mapping[str, str] | None = None, args: Sequence[str] = (),
            timeout: float = 150, kill_when: Callable[[], bool] | None = None) -> GeminiRun:
        """``gemini -p PROMPT --approval-mode yolo --output-format json [ARGS]``; the process
        group this started is SIGKILLed at ``timeout`` (the run then did not end), or as
        soon as ``kill_when`` returns True (polled: a crash)."""
        self.mock.set_script(script)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        out_path, err_path = self.root / "gemini.out", self.root / "gemini.err"
        started = time.monotonic()
        with open(out_path, "wb") as out_fh, open(err_path, "wb") as err_fh:
            proc = subprocess.Popen(
                [str(self.cli), "-p", prompt, "--approval-mode", "yolo",
                 "--output-format", "json", *args],
                cwd=self.project, env=self.env(extra), stdin=subprocess.DEVNULL,
                stdout=out_fh, stderr=err_fh, start_new_session=True)
            wait_or_kill(proc, timeout, kill_when)
            ended = proc.returncode is not None and proc.returncode >= 0
        seconds = time.monotonic() - started
        out = out_path.read_bytes().decode("utf-8", "replace")
        result: dict[str, Any] = {}
        with contextlib.suppress(ValueError):
            start = out.find("{")
            parsed = json.loads(out[start:]) if start >= 0 else {}
            result = parsed if isinstance(parsed, dict) else {}
        return GeminiRun(proc.returncode, ended, seconds, result,
                         err_path.read_bytes().decode("utf-8", "replace"),
                         jsonl(self.log_path, offset))
