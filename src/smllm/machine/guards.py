"""Guards on transitions: pure tests of the params, and command checks with a timeout.

A command guard runs the check the machine names (``/bin/sh -c RUN`` in the project
folder, params passed as ``SMLLM_PARAM_<name>`` environment variables, never pasted
into the command) and holds when its exit status is what ``expect`` says: ``pass``
(exit 0) or ``fail`` (non-zero; "the reproducing test fails"). A check that outlives
its timeout is killed (its whole process group, which it alone belongs to) and the
guard fails. Every evaluation adds one entry to the audit's ``trace``.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OUTPUT_TAIL = 2000
DEFAULT_TIMEOUT = 60.0


class Result:
    """A guard's verdict, the trace entries it produced, and the output to show."""

    __slots__ = ("ok", "output", "reason", "trace")

    def __init__(self, ok: bool, trace: list[dict[str, Any]], reason: str = "",
                 output: str | None = None) -> None:
        self.ok = ok
        self.trace = trace
        self.reason = reason
        self.output = output


def evaluate(guard: dict[str, Any], params: dict[str, str], env: dict[str, str],
             cwd: str) -> Result:
    kind = guard["type"]
    p = guard.get("params") or {}
    if kind == "command":
        return _command(guard, p, params, env, cwd)
    if kind == "paramMatches":
        import re  # noqa: PLC0415 - paramMatches guards only

        value = params.get(p["param"], "")
        ok = re.fullmatch(p["pattern"], value) is not None
        return Result(ok, [{"guard": kind, "param": p["param"], "pattern": p["pattern"],
                            "ok": ok}], _describe(guard, f"{p['param']} must match "
                                                         f"{p['pattern']}"))
    if kind == "paramIn":
        value = params.get(p["param"], "")
        ok = value in p["values"]
        return Result(ok, [{"guard": kind, "param": p["param"], "ok": ok}],
                      _describe(guard, f"{p['param']} must be one of: "
                                       f"{', '.join(p['values'])}"))
    subs = guard.get("guards") or []
    trace: list[dict[str, Any]] = []
    if kind == "not":
        inner = evaluate(subs[0], params, env, cwd)
        trace += inner.trace
        ok = not inner.ok
        trace.append({"guard": "not", "ok": ok})
        return Result(ok, trace, _describe(guard, f"not ({inner.reason})"), inner.output)
    results: list[Result] = []
    for sub in subs:  # and/or short-circuit, like the languages they are named after
        r = evaluate(sub, params, env, cwd)
        results.append(r)
        trace += r.trace
        if (kind == "and") != r.ok:
            break
    ok = all(r.ok for r in results) if kind == "and" else any(r.ok for r in results)
    trace.append({"guard": kind, "ok": ok})
    failed = next((r for r in results if not r.ok), None)
    reason = _describe(guard, failed.reason if failed and kind == "and" else
                       " or ".join(r.reason for r in results))
    return Result(ok, trace, reason, failed.output if failed else None)


def _describe(guard: dict[str, Any], default: str) -> str:
    desc = guard.get("description")
    return desc if isinstance(desc, str) and desc else default


def _command(guard: dict[str, Any], p: dict[str, Any], params: dict[str, str],
             env: dict[str, str], cwd: str) -> Result:
    import contextlib  # noqa: PLC0415 - command guards only
    import signal  # noqa: PLC0415 - command guards only
    import subprocess  # noqa: PLC0415 - command guards only

    run = str(p["run"])
    expect = p.get("expect", "pass")
    timeout = float(p.get("timeout", DEFAULT_TIMEOUT))
    child_env = dict(env)
    child_env.update({f"SMLLM_PARAM_{k}": v for k, v in params.items()})
    start = time.monotonic()
    proc = subprocess.Popen(["/bin/sh", "-c", run], cwd=cwd, env=child_env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the group our child leads, nothing else
        out, _ = proc.communicate()
    ms = int((time.monotonic() - start) * 1000)
    text = out.decode("utf-8", "replace")[-OUTPUT_TAIL:]
    code = proc.returncode
    ok = not timed_out and ((code == 0) == (expect == "pass"))
    entry: dict[str, Any] = {"guard": "command", "run": run, "expect": expect, "exit": code,
                             "timedOut": timed_out, "ms": ms, "ok": ok, "output": text}
    if timed_out:
        why = f"check `{run}` timed out after {timeout:g}s and was stopped"
    elif expect == "pass":
        why = f"check `{run}` failed (exit {code}) but must pass"
    else:
        why = f"check `{run}` passed (exit 0) but must fail"
    desc = guard.get("description")
    reason = f"{desc}: {why}" if isinstance(desc, str) and desc else why
    return Result(ok, [entry], reason, text)
