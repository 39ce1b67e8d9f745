"""Guards on transitions: pure tests of the params, and command checks with a timeout.

A command guard runs the check the machine names (``/bin/sh -c RUN`` in the project
folder, params passed as ``SMLLM_PARAM_<name>`` environment variables, never pasted
into the command) and holds when its exit status is what ``expect`` says: ``pass``
(exit 0) or ``fail`` (non-zero; "the reproducing test fails"). The check runs what the
agent wrote (a test suite, a ``conftest.py``), from a surface outside the agent's own
sandbox (``smllm fire``, the MCP server, Codex's hook), so it runs in smllm's sandbox
(:mod:`smllm.base.bwrap`): the project's protected set read-only
(:func:`smllm.base.protected.with_policy`); smllm's data, state and config folders, its
key, Claude Code's transcripts and the credential stores hidden; no network or Unix
socket; a private ``/tmp``. Where no sandbox can run, the check does not run and the guard
fails with the reason, unless the user's own config opts out (``[guards] sandbox = false``,
:func:`settings`). A check that outlives its timeout is killed with everything it
started, and the guard fails. Every evaluation adds one entry to the audit's ``trace``.
"""

from __future__ import annotations

import time

from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import Machines

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


def runs_commands(machines: Machines) -> bool:
    """Does any transition of these machines have a ``command`` guard (at any depth)?"""
    def has(guard: Any) -> bool:
        if not isinstance(guard, dict):
            return False
        return guard.get("type") == "command" or any(has(g) for g in guard.get("guards") or [])

    return any(has(t.get("guard"))
               for machine in machines.values()
               for st in machine["states"].values()
               for ts in st["on"].values() for t in ts)


def _describe(guard: dict[str, Any], default: str) -> str:
    desc = guard.get("description")
    return desc if isinstance(desc, str) and desc else default


def _command(guard: dict[str, Any], p: dict[str, Any], params: dict[str, str],
             env: dict[str, str], cwd: str) -> Result:
    from smllm.base.errors import SmllmError  # noqa: PLC0415 - command guards only

    run = str(p["run"])
    expect = p.get("expect", "pass")
    timeout = float(p.get("timeout", DEFAULT_TIMEOUT))
    child_env = dict(env)
    child_env.update({f"SMLLM_PARAM_{k}": v for k, v in params.items()})
    desc = guard.get("description")
    start = time.monotonic()
    try:
        code, out, timed_out, how = _execute(["/bin/sh", "-c", run], cwd, child_env, timeout)
    except SmllmError as exc:  # no sandbox: the check does not run, the guard fails
        why = f"check `{run}` did not run: {exc.render()}"
        return Result(False, [{"guard": "command", "run": run, "expect": expect, "exit": None,
                               "timedOut": False, "ms": 0, "ok": False, "sandbox": "none",
                               "output": exc.render()}],
                      f"{desc}: {why}" if isinstance(desc, str) and desc else why,
                      exc.render())
    ms = int((time.monotonic() - start) * 1000)
    text = out.decode("utf-8", "replace")[-OUTPUT_TAIL:]
    ok = not timed_out and ((code == 0) == (expect == "pass"))
    entry: dict[str, Any] = {"guard": "command", "run": run, "expect": expect, "exit": code,
                             "timedOut": timed_out, "ms": ms, "ok": ok, "sandbox": how,
                             "output": text}
    if timed_out:
        why = f"check `{run}` timed out after {timeout:g}s and was stopped"
    elif expect == "pass":
        why = f"check `{run}` failed (exit {code}) but must pass"
    else:
        why = f"check `{run}` passed (exit 0) but must fail"
    reason = f"{desc}: {why}" if isinstance(desc, str) and desc else why
    return Result(ok, [entry], reason, text)


def _execute(argv: list[str], project: str, env: dict[str, str],
             timeout: float) -> tuple[int | None, bytes, bool, str]:
    """Run a check: (exit status, output, timed out, ``bwrap`` or ``off``)."""
    sandboxed, binary = settings()
    if not sandboxed:
        code, out, timed_out = _bare(argv, project, env, timeout)
        return code, out, timed_out, "off"
    from smllm.base import bwrap  # noqa: PLC0415 - command guards only

    found = bwrap.find(binary)
    readonly, hidden = boundary(project)
    done = bwrap.run(argv, bwrap=found, project=project, readonly=readonly, hidden=hidden,
                     env=env, timeout=timeout)
    return done.code, done.output, done.timed_out, "bwrap"


def boundary(project: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a check in ``project`` may read but not change (the protected set with the
    policy's ``sensitive`` paths: the same set the gate protects) and what it may not even
    see (smllm's data, state and config folders: journals, audit, key, caches, the team
    store's URL; Claude Code's transcripts; the credential stores in the home folder)."""
    from smllm.base import credentials, paths, protected  # noqa: PLC0415 - command guards only
    from smllm.base.errors import SandboxUnavailable  # noqa: PLC0415 - command guards only
    from smllm.gate import policy  # noqa: PLC0415 - command guards only

    compiled = policy.load(project)
    if compiled.get("error"):
        raise SandboxUnavailable(f"the policy cannot be loaded, so the paths it protects are "
                                 f"unknown: {compiled['error']}", "fix the policy file")
    readonly = protected.with_policy(project, list(compiled.get("sensitive") or []))
    home = os.path.expanduser("~")
    hidden = (paths.data_root(), paths.state_root(), paths.config_root(),
              *protected.unreadable(),
              *(os.path.join(home, s) for s in credentials.HOME_STORES))
    return readonly, tuple(dict.fromkeys(hidden))


def settings() -> tuple[bool, str | None]:
    """``[guards]`` of the user's config (smllm's config folder, which the agent cannot
    write; a project's config may not set it): do command guards run sandboxed
    (``sandbox``, default true), and which ``bwrap`` (``bwrap``, an absolute path; by
    default the system's)."""
    from smllm.base import paths  # noqa: PLC0415 - command guards only
    from smllm.base.errors import ConfigError  # noqa: PLC0415 - command guards only
    from smllm.machine import catalog  # noqa: PLC0415 - command guards only

    path = paths.user_config_file()
    try:
        with open(path, "rb") as f:
            if b"guards" not in f.read():
                return True, None
    except FileNotFoundError:
        return True, None
    table = catalog.parse_toml(path)[0].get("guards", {})
    if not isinstance(table, dict) or set(table) - {"sandbox", "bwrap"}:
        raise ConfigError("[guards] takes sandbox (true or false) and bwrap (a path) only",
                          "fix the table", where=path)
    sandboxed = table.get("sandbox", True)
    binary = table.get("bwrap")
    if not isinstance(sandboxed, bool):
        raise ConfigError("[guards] sandbox must be true or false", "write sandbox = true",
                          where=path)
    if binary is not None and not (isinstance(binary, str) and binary.startswith("/")):
        raise ConfigError("[guards] bwrap must be an absolute path",
                          'write bwrap = "/usr/bin/bwrap"', where=path)
    return sandboxed, binary


def _bare(argv: list[str], cwd: str, env: dict[str, str],
          timeout: float) -> tuple[int | None, bytes, bool]:
    """A check run without a sandbox (the user opted out): its own process group, killed
    whole at the timeout."""
    import subprocess  # noqa: PLC0415 - command guards only

    from smllm.base import bwrap  # noqa: PLC0415 - command guards only: its wait

    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    out, timed_out = bwrap.wait(proc, timeout)
    return None if timed_out else proc.returncode, out, timed_out
