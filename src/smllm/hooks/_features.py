"""The seams between the hook handlers and the features built on the journal.

Each function here is the one place a hook consults a feature (state machines,
crash reconciliation, the tripwire). A feature module is imported only when its hook runs, and only
when the feature is in play: a machine bound to the session, an effect a crash left
unknown.
"""

from __future__ import annotations

from smllm import journal, tripwire
from smllm.base import paths
from smllm.hooks._context import HookContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import UnknownEffect
    from smllm.gate.protect import Fresh


def unknown_effects_text(unknown: list[UnknownEffect]) -> str:
    """What the agent is told at a resume about effects left in flight."""
    from smllm.journal import reconcile  # noqa: PLC0415 - a resume after a crash only

    return reconcile.unknown_effects_text(unknown)


def held_effect(ctx: HookContext, call: ToolCall) -> str | None:
    """Why this call must wait for reconciliation (a re-attempt of an unknown effect)."""
    log = ctx.main_log_path
    if not journal.read_state(log).get("unknown"):
        return None  # no crash left an effect unknown: the reconciler is not even loaded
    from smllm.journal import reconcile  # noqa: PLC0415 - PreToolUse after a crash only

    return reconcile.hold_reason(log, call)


def _project(ctx: HookContext) -> str:
    """The project the host session runs in (Claude Code's ``CLAUDE_PROJECT_DIR``; for
    Codex, the project of its ``cwd``): the only place its machines come from."""
    return ctx.project or paths.project_root(ctx.cwd)


def machine_session_start(ctx: HookContext) -> str | None:
    """Bind the host session to an smllm session; the location text, if any."""
    from smllm import machine  # noqa: PLC0415 - the hooks that consult machines only

    if ctx.agent_id is not None:
        return None
    project = _project(ctx)
    if not machine.is_bound(ctx.session_id, ctx.harness) and not machine.project_configs(
            project):
        return None  # no machine in play: skip loading the rest of the package
    from smllm.machine import hostview  # noqa: PLC0415 - a machine in play only

    return hostview.on_session_start(ctx, project)


def _unbound(ctx: HookContext) -> bool:
    """No smllm session is bound to this host session: nothing for the machine to say.

    Checked with the machine package's light ``__init__`` only, so that hooks of sessions
    without a machine never import the rest of it.
    """
    from smllm import machine  # noqa: PLC0415 - the hooks that consult machines only

    # a subagent works for the main agent's session; it never drives a machine
    return ctx.agent_id is not None or not machine.is_bound(ctx.session_id, ctx.harness)


def machine_prompt(ctx: HookContext) -> str | None:
    """The current location, given to the agent with each prompt."""
    if _unbound(ctx):
        return None
    from smllm.machine import hostview  # noqa: PLC0415 - a machine in play only

    return hostview.on_prompt(ctx)


def machine_stop(ctx: HookContext) -> str | None:
    """The block reason when the machine refuses the stop (or cannot be loaded), else None."""
    if ctx.agent_id is not None:
        return None
    from smllm import machine  # noqa: PLC0415 - the hooks that consult machines only

    if not machine.is_bound(ctx.session_id, ctx.harness):
        configs = machine.project_configs(_project(ctx))
        if not configs:
            return None  # no machine in play
        from smllm.machine import hostview  # noqa: PLC0415 - a machine in play only

        return hostview.on_unbound_stop(ctx, configs)
    from smllm.machine import hostview  # noqa: PLC0415 - a machine in play only

    return hostview.on_stop(ctx)


def machine_tool_rule(ctx: HookContext, call: ToolCall) -> tuple[str, str] | None:
    """(``deny`` or ``ask``, reason) when the current state's tool rules forbid the call;
    (``allow``, reason) for smllm's own firing."""
    if _unbound(ctx):
        return None
    from smllm.machine import hostview  # noqa: PLC0415 - a machine in play only

    return hostview.tool_rule(call)


def ship_in_background(ctx: HookContext) -> None:
    """SessionEnd and Stop: start a detached shipper when a team store is configured."""
    if ctx.agent_id is not None:
        return
    from smllm import store  # noqa: PLC0415 - SessionEnd and Stop only

    if not store.configured():
        return  # no team store: the shipper's module is not even loaded
    from smllm.store import trigger  # noqa: PLC0415 - a store is configured

    trigger.start()


def _tripwire_project(ctx: HookContext) -> str:
    from smllm.base import paths  # noqa: PLC0415 - loaded by every hook already

    return ctx.project or paths.project_root(ctx.cwd, ctx.env)


def _journal_tripwire(ctx: HookContext, watch: tripwire.Watch) -> None:
    if watch.entries:
        with ctx.transaction(main=True) as txn:
            txn.extend(watch.entries)
    ctx.tripped = watch.reason


def tripwire_watch(ctx: HookContext) -> None:
    """Every hook but SessionStart: compare the protected files with the tripwire's record
    (:func:`smllm.tripwire.watch`), journal what it settled, and keep why gated calls are
    denied on ``ctx.tripped``. A failure denies a gated call (fail closed) and leaves an
    observing hook alone (fail open)."""
    try:
        _journal_tripwire(ctx, tripwire.watch(
            _tripwire_project(ctx), event=ctx.event, log=ctx.main_log_path,
            session=ctx.session_id if ctx.agent_id is None else None))
    except Exception as exc:
        ctx.tripped = (f"smllm's tripwire could not check the protected files and denies "
                       f"this call (fail closed): {type(exc).__name__}: {exc}")


def tripwire_start(ctx: HookContext, clean: bool) -> None:
    """SessionStart: the session is live; a person's edits since the last session are
    adopted when ``clean`` (this session's previous run ended) and no other session of
    the project is live (:func:`smllm.tripwire.session_started`)."""
    if ctx.agent_id is not None:
        tripwire_watch(ctx)
        return
    try:
        _journal_tripwire(ctx, tripwire.session_started(
            _tripwire_project(ctx), ctx.session_id, ctx.main_log_path, clean=clean))
    except Exception as exc:
        ctx.tripped = (f"smllm's tripwire could not check the protected files: "
                       f"{type(exc).__name__}: {exc}")


def tripwire_end(ctx: HookContext) -> None:
    """SessionEnd: the session is no longer live."""
    if ctx.agent_id is None:
        tripwire.session_ended(ctx.session_id)


def fresh(ctx: HookContext) -> Fresh | None:
    """The session's start (real clock) and the folders its file tools made, for the
    gate's check of links and folders made in this session; None before any SessionStart
    (no session to measure against)."""
    state = journal.read_state(ctx.main_log_path)
    since = state.get("started_ns")
    if not isinstance(since, int):
        return None
    from smllm.gate.protect import Fresh  # noqa: PLC0415 - loaded for file tools already

    made = state.get("host_dirs")
    return Fresh(since, frozenset(made) if isinstance(made, list) else frozenset())


#: the folders a session remembers its file tools made (the oldest are forgotten first)
HOST_DIRS_KEPT = 1000


def record_host_folder(txn: journal.Transaction, call: ToolCall) -> None:
    """A file tool smllm lets run will create its missing folders: remember them (the host
    made them, not the agent's commands)."""
    from smllm.gate import protect  # noqa: PLC0415 - loaded for file tools already

    made = protect.host_folders(call)
    if not made:
        return
    known = [d for d in txn.state.get("host_dirs", []) if d not in made]
    txn.set_state("host_dirs", [*known, *made][-HOST_DIRS_KEPT:])
