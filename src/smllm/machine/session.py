"""An smllm session's calls, end to end: lock, state, decide, audit (fsync), apply.

Every call takes the session's lock, brings the state up to date with the audit
(replaying it if the state file lags behind), decides, appends the audit line and
fsyncs it, and only then returns the text to print. The commands, the MCP server
and the hooks all go through here.
"""

from __future__ import annotations

from smllm import machine as machine_pkg
from smllm.base import clock, paths
from smllm.base import osfast as os
from smllm.base.errors import ConfigError, SessionNotFound, SmllmError
from smllm.machine import catalog, engine, locations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from smllm.base.shapes import Machines
    from smllm.machine.engine import Decision


class NoSession(SmllmError):
    """A fire named no session and cannot start one."""


#: the hosts whose sessions smllm binds, as their environment names them to the commands
#: they run: (harness, the variable holding the host session's id, the host's name)
HOSTS = (("claude", "CLAUDE_CODE_SESSION_ID", "Claude Code"),
         ("codex", "CODEX_THREAD_ID", "Codex"),
         ("copilot", "COPILOT_AGENT_SESSION_ID", "Copilot"),
         ("gemini", "GEMINI_SESSION_ID", "Gemini CLI"))


def hosted(env: Mapping[str, str]) -> str | None:
    """The host a command runs under (its name), as its environment says, else None (a
    person's own shell): inside one, smllm's hooks bind the smllm session."""
    for _, var, name in HOSTS:
        if env.get(var):
            return name
    return "Claude Code" if env.get("CLAUDECODE") else None


def resolve_key(explicit: str | None, env: Mapping[str, str]) -> str | None:
    """The session a command means: given, else ``$SMLLM_SESSION``, else the one bound to
    the Claude Code session it runs in (``$CLAUDE_CODE_SESSION_ID``), the Codex thread
    (``$CODEX_THREAD_ID``, which Codex gives the agent's commands), the Copilot session
    (``$COPILOT_AGENT_SESSION_ID``, likewise) or the Gemini CLI session
    (``$GEMINI_SESSION_ID``, which Gemini gives its hooks), else none."""
    if explicit:
        return explicit
    if env.get("SMLLM_SESSION"):
        return env["SMLLM_SESSION"]
    for harness, var, _ in HOSTS:
        if env.get(var):
            return locations.read_binding(harness, env[var])
    return None


def _machines_for(state: dict[str, Any]) -> Machines:
    binding = state.get("binding") or {}
    return catalog.load(list(binding.get("configs") or []))


def _current(key: str) -> tuple[dict[str, Any], Machines]:
    """The session's state, rebuilt from the audit if the state file lags (lock held)."""
    state = locations.read_state(key)
    size = locations.audit_size(key)
    if size == 0:
        raise SessionNotFound(f"no smllm session {key!r}",
                              "run `smllm session list` to see the sessions")
    if state is not None and state.get("auditSize") == size:
        machines = _machines_for(state)
    else:
        lines = locations.read_audit(key)
        binding = next((ln["binding"] for ln in lines if ln.get("binding")), None) or {}
        machines = catalog.load(list(binding.get("configs") or []))
        try:
            state = engine.replay(key, lines, machines)
        except KeyError as exc:
            raise ConfigError(f"the audit of {key} names {exc}, which its machines no longer "
                              "have", "restore the machine file, or start a new session"
                              ) from None
        state["auditSize"] = size
    _check_instances(state, machines)
    return state, machines


def _check_instances(state: dict[str, Any], machines: Machines) -> None:
    """Every open instance's machine and state must still exist (files can be edited)."""
    for inst in state["instances"].values():
        if inst["status"] == "done":
            continue
        machine = machines.get(inst["machine"])
        if machine is None or inst["state"] not in machine["states"]:
            where = machine["file"] if machine else f"machine {inst['machine']!r}"
            raise ConfigError(
                f"{inst['id']} is in {inst['machine']} › {inst['state']}, which "
                f"{where} no longer has",
                f"restore state {inst['state']}, or start a new session")


def _commit(key: str, state: dict[str, Any], decision: Decision,
            machines: Machines) -> None:
    size = locations.append_audit(key, decision.line)
    engine.apply(state, decision.line, machines)
    state["auditSize"] = size
    locations.write_state(key, state)


def location(key: str) -> tuple[dict[str, Any], Machines]:
    with locations.session_lock(key):
        return _current(key)


def location_of(state: dict[str, Any], machines: Machines) -> dict[str, Any]:
    inst = engine.focused(state)
    if inst is None:
        return {"machine": None, "state": None, "instance": None, "ref": None}
    return {"machine": inst["machine"], "state": inst["state"], "instance": inst["id"],
            "ref": inst["ref"]}


def fire(key: str | None, event: str, params: dict[str, str], *, cwd: str,
         env: dict[str, str] | None = None, harness: str = "cli",
         now_ms: int | None = None) -> tuple[str, Decision, dict[str, Any]]:
    """Fire one event; return (session key, decision, location after it)."""
    env = dict(os.environ) if env is None else env
    at = clock.now_ms() if now_ms is None else now_ms
    if key is None:
        return _fire_new(event, params, cwd=cwd, env=env, harness=harness, at=at)
    with locations.session_lock(key):
        state, machines = _current(key)
        root = catalog.session_root(state.get("binding") or {}, cwd)
        decision = engine.decide_fire(state, machines, at, event, params, env=env, cwd=root,
                                      new_instance=lambda: clock.new_id("i-"))
        _commit(key, state, decision, machines)
    return key, decision, location_of(state, machines)


def _fire_new(event: str, params: dict[str, str], *, cwd: str, env: dict[str, str],
              harness: str, at: int) -> tuple[str, Decision, dict[str, Any]]:
    if event != "enter":
        raise NoSession(
            f"no smllm session to fire {event} in",
            "pass --session KEY, set SMLLM_SESSION, or fire enter to start a session")
    configs = new_session_configs(cwd, env)
    machines = catalog.load(configs)
    locations.ensure_root()
    key = clock.new_id("sm-")
    with locations.session_lock(key):
        state = engine.new_state(key)
        binding = {"harness": harness, "hostSession": None, "cwd": cwd, "configs": configs}
        state["binding"] = binding
        decision = engine.decide_fire(state, machines, at, event, params, env=env,
                                      cwd=catalog.project_root(configs) or cwd,
                                      new_instance=lambda: clock.new_id("i-"))
        if decision.ok:
            decision.line["binding"] = binding
            _commit(key, state, decision, machines)
    return key, decision, location_of(state, machines)


def new_session_configs(cwd: str, env: Mapping[str, str]) -> list[str]:
    """The configs a session started by ``fire enter`` in ``cwd`` runs: those of the project
    the folder is in (:func:`smllm.machine.project_configs`). Only from a person's own shell:
    under a host its hooks bind the session (from the project the host runs in), and the
    agent's folder, which it chooses, never decides which machines run."""
    host = hosted(env)
    if host is not None:
        raise NoSession(
            f"no smllm session is bound to this {host} session",
            "smllm's hooks bind one when a session starts in a project whose .smllm/"
            "config.toml names machines: add them there and start a new session, or pass "
            "--session KEY")
    project = paths.find_project(cwd, env)
    if project is None:
        raise ConfigError(f"{cwd} is in no project (no .smllm/ or .git in it or above)",
                          "run it in your project's folder")
    configs = machine_pkg.project_configs(project)
    if not configs:
        raise ConfigError(f"no .smllm/config.toml in {project}",
                          'create one with [machines] files = ["fix.smllm.yaml"]')
    return configs


def stop(key: str, *, stop_hook_active: bool, now_ms: int) -> Decision:
    with locations.session_lock(key):
        state, machines = _current(key)
        decision = engine.decide_stop(state, machines, now_ms, stop_hook_active)
        _commit(key, state, decision, machines)
    return decision


def bind(harness: str, host: str, cwd: str, *, project: str, now_ms: int,
         channel: str = "mcp") -> tuple[str, str | None] | None:
    """Bind a host session to an smllm session (once); return (key, text to show).

    The machines are those of ``project``, the folder the host runs in (its own config and
    the user's), whatever ``cwd`` is. ``None`` when the project configures no machines. A
    host session bound before (resume, compaction, ``/clear``) keeps its smllm session and
    gets its location.
    """
    lock, keyfile = locations.binding_files(harness, host)
    with lock:
        key = locations.read_binding(harness, host)
        if key is not None and locations.exists(key):
            state, machines = location(key)
            return key, engine.location_text(state, machines)
        configs = machine_pkg.project_configs(project)
        if not configs:
            return None
        machines = catalog.load(configs)
        key = clock.new_id("sm-")
        binding = {"harness": harness, "hostSession": host, "cwd": cwd, "configs": configs}
        if channel != "mcp":  # seed 001's bind line has no channel: the MCP tool is implied
            binding["channel"] = channel
        with locations.session_lock(key):
            state = engine.new_state(key)
            decision = engine.decide_bind(state, machines, now_ms, binding)
            _commit(key, state, decision, machines)
        paths.write_private(keyfile, (key + "\n").encode())
    return key, decision.text
