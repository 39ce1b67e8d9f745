"""Count the permission prompts the real Claude Code CLI shows, by answering them over stdio.

``claude -p`` has no TTY, so a call that needs a person's approval is refused outright.
With ``--input-format stream-json --permission-prompt-tool stdio`` (the option the Agent
SDK uses; shared/ref/real-client.md, "ask without a TTY") the CLI writes a
``control_request`` of subtype ``can_use_tool`` on stdout wherever it would show its
permission dialog, a hook's ``ask`` included, and waits for a ``control_response`` on
stdin. :func:`run_session` plays the person: it answers each request with ``answer``
(allow or deny), records it as a :class:`Prompt`, and returns them with the ordinary
:class:`harness.Run` of the session (events, mock requests, journal).

This module is a small reusable driver for any e2e test that needs prompts answered::

    session = prompt_counter.run_session(claude, "go", script, permission_mode="default",
                                         answer=lambda p: p.command != "rm -rf build")
    assert len(session.prompts) == 3
    assert session.prompted("make test")
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from harness import Harness, Run


@dataclass
class Prompt:
    """One ``can_use_tool`` request: what Claude Code asked the person, and the answer."""

    tool: str
    input: dict[str, Any]
    reason: str | None  # ``decision_reason``: a hook's ask reason, or the host's own
    reason_type: str | None  # ``decision_reason_type``: "hook" when a hook asked
    allowed: bool = False

    @property
    def command(self) -> str | None:
        """The Bash command prompted for (None for other tools)."""
        value = self.input.get("command")
        return value if isinstance(value, str) else None


Answer = Callable[[Prompt], bool]


@dataclass
class Session:
    """A session driven over stdio: its :class:`Run` and every prompt, in order."""

    run: Run
    prompts: list[Prompt]

    def prompted(self, command: str) -> bool:
        """Was the person asked about this exact Bash command?"""
        return any(p.command == command for p in self.prompts)


def _allow_all(_prompt: Prompt) -> bool:
    return True


def _respond(stdin: IO[str], request_id: str, body: Mapping[str, Any]) -> None:
    msg = {"type": "control_response",
           "response": {"subtype": "success", "request_id": request_id, "response": body}}
    stdin.write(json.dumps(msg) + "\n")
    stdin.flush()


def _drive(proc: subprocess.Popen[str], out: IO[str], answer: Answer,
           prompts: list[Prompt]) -> None:
    """Read the CLI's stdout to its ``result``, answering every ``can_use_tool``."""
    assert proc.stdout is not None
    assert proc.stdin is not None
    for line in proc.stdout:
        out.write(line)
        out.flush()
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        request = event.get("request")
        if event.get("type") == "control_request" and isinstance(request, dict) and \
                request.get("subtype") == "can_use_tool":
            tool_input = request.get("input")
            prompt = Prompt(str(request.get("tool_name")),
                            tool_input if isinstance(tool_input, dict) else {},
                            request.get("decision_reason"), request.get("decision_reason_type"))
            prompt.allowed = bool(answer(prompt))
            prompts.append(prompt)
            body: dict[str, Any] = (
                {"behavior": "allow", "updatedInput": prompt.input} if prompt.allowed
                else {"behavior": "deny", "message": "PROMPT-COUNTER: the person said no"})
            _respond(proc.stdin, str(event.get("request_id")), body)
        elif event.get("type") == "result":
            break
    with contextlib.suppress(OSError):
        proc.stdin.close()  # the end of input: the CLI ends the session (SessionEnd)


def run_session(claude: Harness, prompt: str, script: Sequence[Mapping[str, Any]], *,
                answer: Answer = _allow_all, permission_mode: str = "default",
                env: Mapping[str, str | None] | None = None,
                extra_args: Sequence[str] = (), timeout: float = 300) -> Session:
    """Run one scripted session of the real CLI in ``claude.project``, answering its
    permission prompts with ``answer`` (allow everything by default). The process group
    is killed (by its id) when ``timeout`` seconds pass or the session is over."""
    mock = claude.mock
    mock.control({"script": list(script)})
    sid = str(uuid.uuid4())
    argv = [str(claude.binary), "-p", "--input-format", "stream-json", "--output-format",
            "stream-json", "--verbose", "--include-hook-events", "--permission-prompt-tool",
            "stdio", "--permission-mode", permission_mode, "--session-id", sid, *extra_args]
    n = len(claude.runs)
    out_path, err_path = claude.root / f"run{n}.stdout", claude.root / f"run{n}.stderr"
    offset = mock.log_size()
    prompts: list[Prompt] = []
    start = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, cwd=claude.project, env=claude.env(env),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                text=True, start_new_session=True)
        timer = threading.Timer(timeout, _kill_group, (proc.pid,))
        timer.start()
        try:
            assert proc.stdin is not None
            user = {"type": "user", "message": {"role": "user", "content": prompt}}
            proc.stdin.write(json.dumps(user) + "\n")
            proc.stdin.flush()
            _drive(proc, out, answer, prompts)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=60)
        finally:
            timed_out = not timer.is_alive() and proc.returncode is None
            timer.cancel()
            _kill_group(proc.pid)  # the CLI if it hangs, and stray hook processes
            proc.wait()
    events = []
    for line in out_path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    run = Run(returncode=proc.returncode, events=events,
              stderr=err_path.read_text(errors="replace"), log=mock.entries(offset),
              session_id=sid, project=claude.project, home=claude.home,
              smllm_home=claude.smllm_home, argv=argv, duration=time.monotonic() - start,
              timed_out=timed_out)
    claude.runs.append(run)
    return Session(run, prompts)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
