"""Run the real Codex CLI against a scripted model, in a scratch HOME and project.

The ``codex`` fixture (``tests/e2e/conftest.py``) gives each test one :class:`CodexHarness`:

* ``home`` with ``CODEX_HOME = home/.codex`` (its ``config.toml`` points Codex at the mock,
  trusts the project, turns plugins off so nothing resolves ``github.com``);
* ``project``: a git-initialised project folder, the cwd of every run;
* ``tmp``: Codex's ``TMPDIR``, beside (not above) ``CODEX_HOME``, which Codex needs for
  its sandbox helpers (shared/ref/codex-hooks.md §6);
* one mock Responses API (``mock_codex_responses.py``) on 127.0.0.1, killed by PID.

``run(prompt, script)`` runs ``codex exec --json PROMPT`` (stdin closed) with that
environment and returns a :class:`CodexRun`: the JSONL events, stderr and the mock's
requests of this run.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mock_process import HostHarness, HostRun, jsonl, wait_or_kill

HERE = Path(__file__).resolve().parent
MOCK = HERE / "mock_codex_responses.py"
PYTHON = sys.executable
#: variables from the outer environment that would change what Codex or smllm does
_SCRUB_PREFIXES = ("CODEX", "OPENAI", "CLAUDE", "ANTHROPIC_", "SMLLM_")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class CodexRun(HostRun):
    @property
    def thread_id(self) -> str:
        """Codex's session id (``thread.started``), the hooks' ``session_id``."""
        for e in self.events:
            if e.get("type") == "thread.started":
                return str(e["thread_id"])
        raise AssertionError(f"no thread.started in the run's output: {self.stderr[-2000:]}")

    def tool_outputs(self) -> dict[str, str]:
        """What the model received for each call: call_id -> the output text."""
        out: dict[str, str] = {}
        for body in self.requests:
            for item in body.get("input") or []:
                if isinstance(item, dict) and item.get("type") in (
                        "function_call_output", "custom_tool_call_output"):
                    out[str(item.get("call_id"))] = " ".join(_strings(item.get("output")))
        return out


class CodexHarness(HostHarness):
    HARNESS = "codex"
    MOCK = MOCK
    SCRUB = _SCRUB_PREFIXES

    def __init__(self, root: Path, codex_bin: Path, smllm_home: Path) -> None:
        self.codex_home = root / "home" / ".codex"
        self.tmp = root / "tmp"
        super().__init__(root, codex_bin, smllm_home, self.codex_home, self.tmp)
        self.write_config()

    # ------------------------------------------------------------------ Codex

    def write_config(self, extra: str = "", *, sandbox_mode: str | None = "workspace-write"
                     ) -> None:
        """Codex's user config: the mock provider, approvals never, the workspace-write
        sandbox (None: none chosen here, so a project's permission profile decides),
        plugins off, the project trusted (what a person does at Codex's prompt)."""
        mode = f'sandbox_mode = "{sandbox_mode}"' if sandbox_mode else ""
        (self.codex_home / "config.toml").write_text(f'''model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
{mode}
check_for_update_on_startup = false
web_search = "disabled"
{extra}
[analytics]
enabled = false

[features]
plugins = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{self.port}/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects."{self.project}"]
trust_level = "trusted"
''')

    def host_env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex_home), "TMPDIR": str(self.tmp),
                "MOCK_API_KEY": "sk-mock"}

    def run(self, prompt: str, script: Sequence[Mapping[str, Any]], *,
            extra: Mapping[str, str] | None = None, args: Sequence[str] = (),
            timeout: float = 180, kill_when: Callable[[], bool] | None = None) -> CodexRun:
        """``codex exec --json [ARGS] PROMPT``; with ``kill_when``, the process group this
        started is SIGKILLed as soon as it returns True (polled)."""
        self.set_script(script)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        out_path, err_path = self.root / "codex.out", self.root / "codex.err"
        with open(out_path, "wb") as out_fh, open(err_path, "wb") as err_fh:
            proc = subprocess.Popen([str(self.cli), "exec", "--json", *args, prompt],
                                    cwd=self.project, env=self.env(extra),
                                    stdin=subprocess.DEVNULL, stdout=out_fh, stderr=err_fh,
                                    start_new_session=True)
            wait_or_kill(proc, timeout, kill_when)
        out, err = out_path.read_bytes(), err_path.read_bytes()
        events = []
        for line in out.decode("utf-8", "replace").splitlines():
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    events.append(obj)
        return CodexRun(proc.returncode, events, err.decode("utf-8", "replace"),
                        jsonl(self.log_path, offset))
