"""Run the real GitHub Copilot CLI against the scripted Anthropic model, in a scratch HOME
and project.

The ``copilot`` fixture (``tests/e2e/conftest.py``) gives each test one
:class:`CopilotHarness`:

* ``home``: an empty HOME (``~/.copilot`` made by smllm's install or by the test);
* ``project``: a git-initialised project folder, the cwd of every run;
* one mock Anthropic Messages API (``mock_anthropic.py``) on 127.0.0.1, killed by PID:
  Copilot speaks it through its bring-your-own-key provider
  (``COPILOT_PROVIDER_TYPE=anthropic``, ``COPILOT_OFFLINE=true``: no GitHub login, no other
  connection; shared/ref/copilot-hooks.md §3);
* the CLI's unpacked files in one cache folder for every test (``COPILOT_PKG_CACHE_HOME``),
  so a fresh HOME does not unpack 190 MB again.

``run(prompt, script)`` runs ``copilot -p PROMPT --allow-all-tools --output-format json``
(stdin closed) and returns a :class:`CopilotRun`: the JSONL events, stderr and the mock's
requests of this run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from claude_cli import cache_root
from mock_process import HostHarness, HostRun, jsonl, wait_or_kill

HERE = Path(__file__).resolve().parent
MOCK = HERE / "mock_anthropic.py"
PYTHON = sys.executable
#: variables from the outer environment that would change what Copilot or smllm does
#: (COPILOT_ALLOW_ALL=true would trust every folder; a token would log in)
_SCRUB_PREFIXES = ("COPILOT", "GITHUB_TOKEN", "GH_", "CLAUDE", "ANTHROPIC_", "SMLLM_", "XDG_")


class CopilotRun(HostRun):
    @property
    def session_id(self) -> str:
        """Copilot's session id (the final ``result`` event), the hooks' ``sessionId``."""
        for e in self.events:
            if e.get("type") == "result" and e.get("sessionId"):
                return str(e["sessionId"])
        raise AssertionError(f"no result event in the run's output: {self.stderr[-2000:]}")

    def tool_results(self) -> dict[str, str]:
        """What the model received for each tool use: tool_use_id -> the result text."""
        out: dict[str, str] = {}
        for body in self.requests:
            for message in body.get("messages") or []:
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        inner = block.get("content")
                        text = inner if isinstance(inner, str) else " ".join(
                            b.get("text", "") for b in inner or [] if isinstance(b, dict))
                        out[str(block.get("tool_use_id"))] = text
        return out

    def user_texts(self) -> list[str]:
        """Every user text the model received (prompts, and Copilot's turns made of a
        Stop hook's reason), from the last request."""
        if not self.requests:
            return []
        out = []
        for message in self.requests[-1].get("messages") or []:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            out += [b["text"] for b in blocks or [] if isinstance(b, dict)
                    and b.get("type") == "text"]
        return out


class CopilotHarness(HostHarness):
    HARNESS = "copilot"
    MOCK = MOCK
    SCRUB = _SCRUB_PREFIXES

    # ------------------------------------------------------------------ Copilot

    def host_env(self) -> dict[str, str]:
        return {"COPILOT_PKG_CACHE_HOME": str(cache_root() / "copilot-pkg"),
                # the agent's shell finds this installation's `smllm` (smllm fire)
                "PATH": f"{Path(PYTHON).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    def copilot_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The CLI's environment: offline, the mock as its Anthropic provider."""
        return self.env({"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                         "COPILOT_PROVIDER_TYPE": "anthropic",
                         "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{self.port}",
                         "COPILOT_PROVIDER_API_KEY": "sk-ant-mock",
                         "COPILOT_MODEL": "claude-sonnet-4.5", **(extra or {})})

    def sessions(self) -> list[str]:
        """The session ids Copilot keeps state for in this HOME."""
        state = self.home / ".copilot" / "session-state"
        return sorted(p.name for p in state.iterdir() if not p.name.startswith(".")) \
            if state.is_dir() else []

    def run(self, prompt: str, script: Sequence[Mapping[str, Any]], *,
            extra: Mapping[str, str] | None = None, args: Sequence[str] = (),
            timeout: float = 180, kill_when: Callable[[], bool] | None = None) -> CopilotRun:
        """``copilot -p PROMPT --allow-all-tools --output-format json [ARGS]``; with
        ``kill_when``, the process group this started is SIGKILLed as soon as it returns
        True (polled)."""
        self.set_script(script)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        out_path, err_path = self.root / "copilot.out", self.root / "copilot.err"
        with open(out_path, "wb") as out_fh, open(err_path, "wb") as err_fh:
            proc = subprocess.Popen(
                [str(self.cli), "-p", prompt, "--allow-all-tools", "--output-format",
                 "json", "--no-auto-update", *args],
                cwd=self.project, env=self.copilot_env(extra), stdin=subprocess.DEVNULL,
                stdout=out_fh, stderr=err_fh, start_new_session=True)
            wait_or_kill(proc, timeout, kill_when)
        events = jsonl(out_path)
        return CopilotRun(proc.returncode, events,
                          err_path.read_bytes().decode("utf-8", "replace"),
                          jsonl(self.log_path, offset))
