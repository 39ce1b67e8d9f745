"""The command reviewer: any program; the request as JSON on stdin, a verdict on stdout.

stdin: ``{"version": 1, "tool_name", "tool_input", "cwd", "session_id",
"pending_action_id", "policy": {rule, reason, findings}, "choices": [...]}``.
stdout: exactly ``{"verdict": "allow_once"|"always_allow_in_workspace"|"reject",
"reason": "..."}``. A non-zero exit, a timeout or anything else on stdout is a failure.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
from typing import Any

from smllm.gate.reviewers import Request, Result, parse_verdict

DEFAULT_TIMEOUT = 20.0


def review(request: Request, config: dict[str, Any]) -> Result:
    argv = [str(a) for a in config.get("argv") or []]
    data = json.dumps(
        {"version": 1, **request.as_json()}, sort_keys=True, ensure_ascii=False
    ).encode("utf-8")
    source: dict[str, Any] = {
        "kind": "command",
        "argv": argv,
        "context_digest": "sha256:" + hashlib.sha256(data).hexdigest(),
    }
    timeout = float(config.get("timeout") or DEFAULT_TIMEOUT)
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv, input=data, capture_output=True, timeout=timeout, cwd=request.cwd, check=False
        )
    except subprocess.TimeoutExpired:
        return _failed(source, started, f"the command reviewer timed out after {timeout:g}s")
    except OSError as exc:
        return _failed(source, started, f"cannot run the command reviewer {argv!r}: {exc}")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()[:300]
        return _failed(source, started, f"the command reviewer exited {proc.returncode}: {err}")
    try:
        choice, reason = parse_verdict(proc.stdout.decode("utf-8", "replace"))
    except ValueError as exc:
        return _failed(source, started, str(exc))
    source["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    return Result("command", choice, reason, source)


def _failed(source: dict[str, Any], started: float, error: str) -> Result:
    source["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    return Result("command", None, "", source, error)
