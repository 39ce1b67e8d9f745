"""SessionStart: ``session.start``, or on ``resume`` the crash inference and
``session.resumed``; then the agent's bearings (unknown effects, machine location).

On a resume after a crash (the log's last start or resume has no ``session.end``):

1. the intents still open are taken out of the sidecar *before* the transcript is
   read, so a synthetic ``tool_result`` the host writes for the killed call cannot be
   mistaken for an observed outcome — they are **unknown**;
2. the transcript's tail is ingested (the crashed run's model calls are history);
3. ``session.end`` ``crash_inferred`` closes the crashed run, in the main log and in
   every subagent log it left open, and ``session.resumed`` records
   ``prior_turn_count``, ``resumed_from_sequence`` and the unknown effects;
4. the agent is told each unknown effect (see :mod:`smllm.journal.reconcile`).
"""

from __future__ import annotations

import time

from smllm import VERSION, journal
from smllm.base import clock
from smllm.base import osfast as os
from smllm.hooks import _features
from smllm.journal import hostcall, records, sidecar, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import UnknownEffect
    from smllm.hooks._context import HookContext


def _start_record(ctx: HookContext, source: str) -> journal.Entry:
    p = ctx.payload
    return records.new(
        "session.start",
        session_id=ctx.session_id,
        source=source,
        cwd=ctx.cwd,
        transcript_path=p.get("transcript_path"),
        model=p.get("model"),
        host="claude-code" if ctx.harness == "claude" else ctx.harness,
        build={"display": f"smllm {VERSION}", "smllm": VERSION},
        # another host's session names its harness; Claude Code's records stay as they were
        **({} if ctx.harness == "claude" else {"harness": ctx.harness}),
    )


def _end_crashed(txn: journal.Transaction) -> None:
    """``session.end crash_inferred``; its uptime runs to the log's last record."""
    started = int(txn.state.get("started_at_ms") or txn.now_ms)
    tail_at = clock.parse_iso_ms(txn.tail.recorded_at)
    last = max(tail_at or 0, started)
    txn.append(records.new("session.end", exit_reason="crash_inferred",
                           uptime_ms=max(0, last - started), host_reason=None))
    txn.set_state("open", False)


def _in_flight(txn: journal.Transaction, stream: str | None = None) -> list[UnknownEffect]:
    """The intents still open in ``txn``'s sidecar, oldest first; removes them from it. A
    call Claude Code decided that PostToolUse saw run closes on what was seen (inferred),
    and a prompt still open closes ``unknown`` first (journal/hostcall.py)."""
    open_intents = hostcall.close_in_flight(txn, dict(txn.state.get("open_intents") or {}),
                                            crashed=True)
    out = []
    for tid, v in sorted(open_intents.items(), key=lambda kv: int(kv[1].get("seq") or 0)):
        u: UnknownEffect = {"sequence": v.get("seq"), "tool_use_id": tid,
                            "operation": v.get("operation"), "idempotency_key": v.get("key"),
                            "input": v.get("input")}
        if stream is not None:
            u["stream"] = stream
        out.append(u)
    if txn.state.get("open_intents"):
        txn.set_state("open_intents", {})
    return out


def _close_subagents(main_log: str) -> list[UnknownEffect]:
    """Close every subagent log a crash left open; their unknown effects."""
    root = os.path.join(os.path.dirname(main_log), "subagent")
    try:
        agents = sorted(os.listdir(root))
    except OSError:
        return []
    unknown: list[UnknownEffect] = []
    for agent in agents:
        log = os.path.join(root, agent, journal.LOG_NAME)
        if not os.path.isfile(log):
            continue
        with journal.transaction(log) as child:
            if not child.state.get("open"):
                continue
            unknown += _in_flight(child, f"subagent/{agent}")
            _end_crashed(child)
    return unknown


def _resume(ctx: HookContext, txn: journal.Transaction,
            unknown: list[UnknownEffect], crashed: bool) -> None:
    if crashed:
        _end_crashed(txn)
    resumed_from = txn.next_sequence - 1
    txn.append(
        records.new(
            "session.resumed",
            session_id=ctx.session_id,
            prior_turn_count=int(txn.state.get("turns", 0)),
            resumed_from_sequence=resumed_from,
            crash_inferred=crashed,
            unknown_effects=[u["sequence"] for u in unknown if "stream" not in u],
            unknown_subagent_effects=[
                {"stream": u["stream"], "sequence": u["sequence"]}
                for u in unknown if "stream" in u],
        )
    )
    mine = {str(u["sequence"]): u for u in unknown if "stream" not in u}
    if mine:
        held = dict(txn.state.get("unknown") or {})
        held.update(mine)
        txn.set_state("unknown", held)


def handle(ctx: HookContext) -> dict[str, Any] | None:
    source = str(ctx.payload.get("source") or "startup")
    unknown: list[UnknownEffect] = []
    with ctx.transaction() as txn:
        sidecar.ensure(txn)
        # this session's previous run ended (or there was none): edits since are a person's
        clean = not txn.state.get("open") and source != "compact"
        crashed = bool(txn.state.get("open")) and source == "resume"
        if crashed:
            unknown = _in_flight(txn)
        transcript.ingest(txn, ctx.transcript)
        if source == "resume":
            if crashed and ctx.agent_id is None:
                unknown += _close_subagents(str(txn.path))
            _resume(ctx, txn, unknown, crashed)
        elif source == "compact":
            txn.append(records.new("session.compacted", session_id=ctx.session_id))
        else:
            if txn.state.get("open"):
                _end_crashed(txn)
            txn.append(_start_record(ctx, source))
        if source != "compact":
            txn.set_state("open", True)
            txn.set_state("started_at_ms", ctx.now_ms)
            # the real clock (not SMLLM_NOW): what file times are compared with (the gate's
            # check of folders and links made in this session, gate/protect.py)
            txn.set_state("started_ns", time.time_ns())
    _features.tripwire_start(ctx, clean)
    parts = [_features.unknown_effects_text(unknown)] if unknown else []
    location = _features.machine_session_start(ctx)
    if location:
        parts.append(location)
    if not parts:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "\n\n".join(parts),
        }
    }
