"""A person at Claude Code's permission prompt, without a TTY: the SDK's stdio protocol.

``claude -p --input-format stream-json --output-format stream-json --verbose
--permission-prompt-tool stdio`` writes a ``control_request`` of subtype ``can_use_tool`` on
its stdout wherever it would show its permission dialog; the driver answers each one on
stdin with ``allow`` (``updatedInput`` = the input as asked) or ``deny`` (its message becomes
the call's tool_result), after ``delay`` seconds, and stops at the ``result`` event. Claude
Code runs its PermissionRequest hooks at the same time as it asks the driver, so the delay
decides which lands first (real-client.md, "ask without a TTY").

Adapted from the reference driver (shared/tools/cc_stdio_driver.py): used as a module by
``harness.Harness.drive``, or run as a script::

    stdio_driver.py --claude PATH --answer allow|deny [--delay S] --out out.jsonl -- ARGS
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

#: the flags that turn Claude Code's permission dialog into control requests on stdout
STDIO_FLAGS = ("-p", "--input-format", "stream-json", "--output-format", "stream-json",
               "--verbose", "--permission-prompt-tool", "stdio")
DENY_MESSAGE = "DRIVER-DENY: the person at the prompt said no"


@dataclass
class Prompted:
    """One prompt the driver saw, and what it answered."""

    tool_name: str
    input: Any
    tool_use_id: str | None
    answer: str
    reason: Any = None


@dataclass
class Driven:
    """What one driven session gave: Claude Code's exit code and the prompts answered."""

    returncode: int | None
    prompts: list[Prompted] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    timed_out: bool = False


def _answer(request_id: str, req: dict[str, Any], answer: str) -> dict[str, Any]:
    if answer == "allow":
        resp: dict[str, Any] = {"behavior": "allow", "updatedInput": req.get("input") or {}}
    else:
        resp = {"behavior": "deny", "message": DENY_MESSAGE}
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": resp}}


def drive(argv: Sequence[str], *, prompt: str, answers: Sequence[str] = (),
          default: str = "allow", delay: float = 0.0, out: IO[str],
          stderr: IO[bytes] | None = None, env: dict[str, str] | None = None,
          cwd: Path | None = None,
          timeout: float = 120.0, on_start: Any = None) -> Driven:
    """Run ``argv`` (the claude binary and its own arguments, without :data:`STDIO_FLAGS`)
    and answer its prompts: the i-th prompt gets ``answers[i]``, later ones ``default``.
    Every stdout line is copied to ``out``. ``on_start(pid)`` is told the process group."""
    cmd = [argv[0], *STDIO_FLAGS, *argv[1:]]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=stderr, text=True, env=env, cwd=cwd, start_new_session=True)
    if on_start is not None:
        on_start(proc.pid)
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    driven = Driven(None)
    user = {"type": "user", "message": {"role": "user", "content": prompt}}
    stdin.write(json.dumps(user) + "\n")
    stdin.flush()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        for line in stdout:
            out.write(line)
            out.flush()
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            kind = msg.get("type")
            req = msg.get("request") or {}
            if kind == "control_request" and req.get("subtype") == "can_use_tool":
                n = len(driven.prompts)
                answer = answers[n] if n < len(answers) else default
                driven.prompts.append(Prompted(str(req.get("tool_name")), req.get("input"),
                                               req.get("tool_use_id"), answer,
                                               req.get("decision_reason")))
                if delay:
                    time.sleep(delay)
                stdin.write(json.dumps(_answer(msg["request_id"], req, answer)) + "\n")
                stdin.flush()
            elif kind == "control_cancel_request":
                driven.cancelled.append(str(msg.get("request_id")))
            elif kind == "result":
                stdin.close()
                break
    finally:
        driven.timed_out = not timer.is_alive()
        timer.cancel()
    try:
        driven.returncode = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        driven.returncode = proc.wait()
    return driven


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claude", required=True)
    ap.add_argument("--answer", choices=["allow", "deny"], default="allow")
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--prompt", default="do the thing")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    with open(a.out, "w", encoding="utf-8") as out:
        driven = drive([a.claude, *a.extra], prompt=a.prompt, default=a.answer,
                       delay=a.delay, out=out, timeout=a.timeout)
    for p in driven.prompts:
        print("can_use_tool:", p.tool_name, json.dumps(p.input)[:120], "->", p.answer)
    return 124 if driven.timed_out else int(driven.returncode or 0)


if __name__ == "__main__":
    sys.exit(main())
