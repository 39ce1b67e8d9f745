"""SessionStart: ``session.start``, or on ``resume`` the crash inference and
``session.resumed``; then the agent's bearings (unknown effects, machine location)."""

from __future__ import annotations

from typing import Any

from smllm import VERSION, journal, sessionstate, transcript
from smllm.hooks import _features
from smllm.hooks._context import HookContext


def _start_record(ctx: HookContext, source: str) -> journal.Entry:
    p = ctx.payload
    return journal.fact(
        "session.start",
        {
            "session_id": ctx.session_id,
            "source": source,
            "cwd": ctx.cwd,
            "transcript_path": p.get("transcript_path"),
            "model": p.get("model"),
            "host": "claude-code",
            "build": {"display": f"smllm {VERSION}", "smllm": VERSION},
        },
    )


def _end_crashed(txn: journal.Transaction) -> None:
    started = int(txn.state.get("started_at_ms") or txn.now_ms)
    last = int(txn.state.get("last_activity_ms") or started)
    txn.append(
        journal.fact(
            "session.end",
            {"exit_reason": "crash_inferred", "uptime_ms": max(0, last - started),
             "host_reason": None},
        )
    )
    txn.set_state("open", False)


def _resume(ctx: HookContext, txn: journal.Transaction) -> list[dict[str, Any]]:
    crashed = bool(txn.state.get("open"))
    if crashed:
        _end_crashed(txn)
    unknown = [
        {"sequence": v.get("seq"), "tool_use_id": tid, "operation": v.get("operation"),
         "idempotency_key": v.get("key"), "input": v.get("input")}
        for tid, v in sorted(txn.state.get("open_intents", {}).items(), key=lambda kv: kv[1]["seq"])
    ] if crashed else []
    resumed_from = txn.next_sequence - 1
    txn.append(
        journal.fact(
            "session.resumed",
            {
                "session_id": ctx.session_id,
                "prior_turn_count": int(txn.state.get("turns", 0)),
                "resumed_from_sequence": resumed_from,
                "crash_inferred": crashed,
                "unknown_effects": [u["sequence"] for u in unknown],
            },
        )
    )
    if unknown:
        txn.set_state("unknown", {str(u["sequence"]): u for u in unknown})
        txn.set_state("open_intents", {})
    return unknown


def handle(ctx: HookContext) -> dict[str, Any] | None:
    source = str(ctx.payload.get("source") or "startup")
    unknown: list[dict[str, Any]] = []
    with ctx.transaction() as txn:
        sessionstate.ensure(txn)
        transcript.ingest(txn, ctx.transcript)
        if source == "resume":
            unknown = _resume(ctx, txn)
        elif source == "compact":
            txn.append(journal.fact("session.compacted", {"session_id": ctx.session_id}))
        else:
            if txn.state.get("open"):
                _end_crashed(txn)
            txn.append(_start_record(ctx, source))
        if source != "compact":
            txn.set_state("open", True)
            txn.set_state("started_at_ms", ctx.now_ms)
        txn.set_state("last_activity_ms", ctx.now_ms)
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
