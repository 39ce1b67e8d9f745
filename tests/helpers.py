"""Helpers shared by the tests: run the real hook entry point, read journals."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from smllm import journal
from smllm.base import knobs

PYTHON = sys.executable
REPO = Path(__file__).resolve().parent.parent


def hook(event: str, payload: dict[str, Any] | bytes | str, *, env: dict[str, str] | None = None,
         cwd: Path | None = None, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
    """Run the hook as installed (``python -c 'from smllm.hooks import cli; cli()' EVENT``),
    as Claude Code would: stdin JSON, capture stdout."""
    if isinstance(payload, dict):
        data = (json.dumps(payload) + "\n").encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = payload
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([PYTHON, "-c", "from smllm.hooks import cli; cli()", event], input=data,
                          capture_output=True, env=full_env, cwd=cwd, timeout=timeout, check=False)


def allow_test_knobs(home: Path, allow: bool = True) -> None:
    """Let the hooks of the smllm home ``home`` honour the test knobs (or, ``allow=False``,
    not)."""
    switch = home / knobs.SWITCH
    if allow:
        switch.touch(mode=0o600)
    else:
        switch.unlink(missing_ok=True)


def hook_output(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any] | None:
    """The hook's decision: None when stdout is empty; fails unless it is one JSON object."""
    out = proc.stdout.decode()
    if not out.strip():
        return None
    obj = json.loads(out)  # raises if anything surrounds the object
    assert isinstance(obj, dict)
    return obj


def smllm(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
          input: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the ``smllm`` CLI in a subprocess (text mode)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([PYTHON, "-m", "smllm", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, input=input.decode() if input else None,
                          timeout=timeout, check=False)


def records(session_id: str) -> list[dict[str, Any]]:
    return list(journal.iter_records(journal.log_path(session_id)))


def kind(rec: dict[str, Any]) -> str:
    """``payload.event.kind // payload_type``, as seed 000's jq reads it."""
    ev = (rec.get("payload") or {}).get("event")
    if isinstance(ev, dict) and "kind" in ev:
        return str(ev["kind"])
    return str(rec.get("payload_type"))


def base(event: str, session_id: str, **extra: Any) -> dict[str, Any]:
    """A hook payload with Claude Code 2.1.332's common fields."""
    p: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/tmp/smllm-test-transcripts/{session_id}.jsonl",
        "cwd": "/tmp",
        "hook_event_name": event,
    }
    if event not in ("SessionStart", "SessionEnd"):
        p["permission_mode"] = "default"
    p.update(extra)
    return p


_CONSOLE_BLOCK = re.compile(r"```console\n(.*?)```", re.S)


def console_transcript(page: Path) -> list[tuple[str, str]]:
    """(command, expected output) pairs of every console block of a docs page, in order."""
    steps: list[tuple[str, list[str]]] = []
    for block in _CONSOLE_BLOCK.findall(page.read_text()):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return [(cmd, "\n".join(out)) for cmd, out in steps]


def protect_check(tool: str, tool_input: dict[str, Any], cwd: str, project: str) -> str | None:
    """Self-protection on one call, as :func:`smllm.gate.decide` runs it (one analysis)."""
    from smllm.base.catalogue import ToolCall
    from smllm.base.protected import protected_set
    from smllm.gate import analysis, protect

    call = ToolCall(tool, tool_input, cwd=cwd, project=project)
    guard = protected_set(project)
    return protect.check(call, analysis.of(call, guard), guard)


def assess_call(tool: str, tool_input: dict[str, Any], *, cwd: str, project: str,
                compiled: Any, home: str | None = None) -> Any:
    """The policy's assessment of one call over its one analysis."""
    from smllm.base.catalogue import ToolCall
    from smllm.gate import analysis
    from smllm.gate.policy.assess import assess, sensitive_paths

    call = ToolCall(tool, tool_input, cwd=cwd, project=project)
    return assess(call, analysis.of(call, sensitive_paths(compiled, project), home), compiled)
