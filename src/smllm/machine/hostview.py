"""What the Claude Code hooks ask of the state-machine feature.

Until a project configures machines (``.smllm/config.toml``), every answer is
neutral: no location text, no stop block, no tool rule. Configured machines that cannot
be loaded fail closed, like a broken policy: SessionStart says what is broken, and the
Stop hook blocks with the error (once per stop: the stop after a block goes through, so
a broken file never traps the agent).
"""

from __future__ import annotations

from smllm.base.errors import SmllmError
from smllm.machine import HARNESS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Protocol

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import Machines

    class HostEvent(Protocol):
        """What the hooks tell the machines of the event they handle."""

        session_id: str
        agent_id: str | None
        now_ms: int
        env: Mapping[str, str]
        payload: dict[str, Any]

        @property
        def cwd(self) -> str: ...



def _harness(ctx: HostEvent | ToolCall) -> str:
    """The host the event comes from, as bindings and audit lines name it (``claude``,
    ``codex``)."""
    name = getattr(ctx, "harness", None)
    return name if isinstance(name, str) and name else HARNESS


def _key(ctx: HostEvent | ToolCall) -> str | None:
    from smllm.machine import locations  # noqa: PLC0415 - the machine engine: a bound session only

    if ctx.agent_id is not None or ctx.session_id is None:
        return None  # a subagent works for the main agent's session; it does not drive it
    key = locations.read_binding(_harness(ctx), ctx.session_id)
    return key if key is not None and locations.exists(key) else None


def _export(ctx: HostEvent, key: str) -> None:
    """Tell the agent's shell its session: ``export SMLLM_SESSION=KEY`` in $CLAUDE_ENV_FILE."""
    env_file = ctx.env.get("CLAUDE_ENV_FILE")
    if not env_file:
        return
    try:
        with open(env_file, "a", encoding="utf-8") as f:
            f.write(f"export SMLLM_SESSION={key}\n")
    except OSError:
        pass


def on_session_start(ctx: HostEvent, project: str) -> str | None:
    """Bind (audit ``bind``) with the machines of ``project`` (the folder the host runs
    in), export SMLLM_SESSION, and return the text to show, if any."""
    if ctx.agent_id is not None:
        return None
    from smllm.machine import channel, session  # noqa: PLC0415 - the machine engine: a bound session only

    try:
        bound = session.bind(_harness(ctx), ctx.session_id, ctx.cwd, project=project,
                             now_ms=ctx.now_ms,
                             channel=channel.detect(ctx.cwd, ctx.env, _harness(ctx)))
    except SmllmError as exc:
        return f"smllm: the state machines cannot be loaded: {exc.render()}"
    if bound is None:
        return None
    key, text = bound
    _export(ctx, key)
    return text


def _location(ctx: HostEvent | ToolCall) -> tuple[dict[str, Any], Machines] | None:
    """The bound smllm session's state and machines, or None (unbound, or unreadable)."""
    key = _key(ctx)
    if key is None:
        return None
    from smllm.machine import session  # noqa: PLC0415 - the machine engine: a bound session only

    try:
        return session.location(key)
    except SmllmError:
        return None


def on_prompt(ctx: HostEvent) -> str | None:
    """The current location while an instance is active or waiting to be resumed."""
    found = _location(ctx)
    if found is None:
        return None
    from smllm.machine import engine  # noqa: PLC0415 - the machine engine: a bound session only

    state, machines = found
    if engine.focused(state) is None and not any(
            i["status"] in ("paused", "unmatched") for i in state["instances"].values()):
        return None
    return engine.location_text(state, machines)


def broken_text(error: SmllmError) -> str:
    """The stop block while the configured machines cannot be loaded (fail closed)."""
    return ("<smllm>\n"
            f"error: the state machines cannot be loaded: {error.render()}\n"
            "smllm cannot tell whether the work is done. Tell the user about this error "
            "(`smllm machine validate` shows it); do not edit the machine files yourself. "
            "You may stop after that.\n"
            "</smllm>\n")


def on_stop(ctx: HostEvent) -> str | None:
    """The block text while the focused instance is in a non-final state (audit ``stop``),
    or while its machines cannot be loaded."""
    key = _key(ctx)
    if key is None:
        return None
    from smllm.machine import session  # noqa: PLC0415 - the machine engine: a bound session only

    active = bool(ctx.payload.get("stop_hook_active"))
    try:
        decision = session.stop(key, stop_hook_active=active, now_ms=ctx.now_ms)
    except SmllmError as exc:
        return None if active else broken_text(exc)
    return decision.text if decision.line["outcome"] == "block" else None


def on_unbound_stop(ctx: HostEvent, configs: list[str]) -> str | None:
    """A session with configured machines that never bound (SessionStart could not load
    them): block with the error, like a broken policy denies. As with any block, the stop
    that follows it (``stop_hook_active``) is let through: it never traps the agent."""
    from smllm.machine import catalog  # noqa: PLC0415 - the machine engine: a bound session only

    try:
        catalog.load(configs)
    except SmllmError as exc:
        return None if ctx.payload.get("stop_hook_active") else broken_text(exc)
    return None


#: why smllm allows its own firing (the intent's reason; rule ``machine.fire``)
OWN_FIRE = ("smllm allows its own state-machine calls (smllm fire or status, its MCP tool) "
            "in a session bound to a machine, so that no permission mode can trap the agent")


def tool_rule(call: ToolCall) -> tuple[str, str] | None:
    """``("deny", reason)`` when the current state's ``meta.tools`` forbid this call;
    ``("allow", reason)`` for smllm's own firing, which Claude Code would otherwise ask
    about (and, where nobody can answer, refuse)."""
    from smllm.machine import catalog, engine, tools  # noqa: PLC0415 - the machine engine: a bound session only

    tool, tool_input = call.tool, call.input
    if tools.own_fire(tool, tool_input):
        return ("allow", OWN_FIRE)
    found = _location(call)
    if found is None:
        return None
    state, machines = found
    inst = engine.focused(state)
    if inst is None:
        return None
    machine = machines[inst["machine"]]
    rules = machine["states"][inst["state"]]["tools"]
    root = catalog.session_root(state.get("binding") or {}, call.cwd)
    why = tools.check(rules, tool, tool_input, root)
    if why is None:
        return None
    shown = tools.describe_call(tool, tool_input, root)
    return ("deny", f"smllm: {machine['kind']} {inst.get('ref') or inst['id']} is in "
                    f"{inst['state']}, where {shown} is {why}. Fire an event to move on "
                    f"(smllm status shows what is offered).")
