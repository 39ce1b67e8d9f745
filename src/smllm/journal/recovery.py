"""Reading a journal back after a crash: committed versus unknown effects, and
recording the verified outcome of an unknown one (``smllm resume``, ``smllm reconcile``).

This is the slow path, used by the CLI only; what the hooks need at a resume (the
text given to the agent, the hold on re-attempts) is in :mod:`smllm.journal.reconcile`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from smllm import journal
from smllm.base.errors import SmllmError
from smllm.journal import hostcall, records, sidecar


class ReconcileError(SmllmError):
    """The outcome cannot be recorded for the effect named."""


# --------------------------------------------------------------------- the report


@dataclass(frozen=True)
class Effect:
    """One effect that started: its intent, and its terminal record if any."""

    sequence: int
    tool_use_id: str
    operation: str
    idempotency_key: str | None
    input: Any
    terminal_sequence: int | None = None
    outcome: str | None = None
    observed_via: str | None = None

    def summary(self) -> str:
        inp = self.input
        what = inp.get("command") if isinstance(inp, dict) and "command" in inp else inp
        text = what if isinstance(what, str) else json.dumps(what, ensure_ascii=False)
        return " ".join(text.split())[:120]


@dataclass(frozen=True)
class Reconciliation:
    """Committed and unknown effects of one journal."""

    path: Path
    session_id: str
    cwd: str | None
    records: int
    exit_reason: str | None  # the last session.end recorded
    end_sequence: int | None  # ... and its sequence
    resumed_at: int | None  # a session.resumed (or start) after that end: running since
    committed: list[Effect]
    reconciled: list[Effect]
    unknown: list[Effect]


def _scan_effects(path: Path) -> tuple[dict[str, Any], dict[str, Effect], list[Effect]]:
    """(facts about the session, effects by tool_use_id in order, started effects)."""
    meta: dict[str, Any] = {"records": 0, "exit_reason": None, "end_sequence": None,
                            "resumed_at": None, "session_id": None, "cwd": None}
    intents: dict[str, dict[str, Any]] = {}
    effects: dict[str, Effect] = {}
    for rec in journal.iter_records(path):
        meta["records"] += 1
        kind, body = journal.kind_of(rec), journal.body_of(rec)
        if kind == "session.start" and meta["session_id"] is None:
            meta["session_id"], meta["cwd"] = body.get("session_id"), body.get("cwd")
        elif kind in ("session.start", "session.resumed"):
            meta["resumed_at"] = rec["sequence"]  # a later start: running since the last end
        elif kind == "session.end":
            meta["exit_reason"] = body.get("exit_reason")
            meta["end_sequence"], meta["resumed_at"] = rec["sequence"], None
        elif kind == "side_effect_intent" and isinstance(body.get("tool_use_id"), str):
            intents[body["tool_use_id"]] = {**body, "sequence": rec["sequence"]}
            if body.get("policy_decision") in hostcall.HOST_STAMPS:
                # Claude Code decides it: no start until its authorization is known, and
                # it may have run, so it is an effect from its intent on (hostcall.py)
                effects[body["tool_use_id"]] = Effect(
                    rec["sequence"], body["tool_use_id"], str(body.get("operation")),
                    body.get("idempotency_key"), body.get("input"))
        elif kind == "tool_batch.effect.started" and body.get("tool_use_id") in intents \
                and body["tool_use_id"] not in effects:
            i = intents[body["tool_use_id"]]
            effects[i["tool_use_id"]] = Effect(
                i["sequence"], i["tool_use_id"], str(i.get("operation")),
                i.get("idempotency_key"), i.get("input"))
        elif kind == "tool_batch.effect.terminal" and body.get("tool_use_id") in effects:
            e = effects[body["tool_use_id"]]
            if e.terminal_sequence is None:
                effects[e.tool_use_id] = Effect(
                    e.sequence, e.tool_use_id, e.operation, e.idempotency_key, e.input,
                    rec["sequence"], body.get("outcome"), body.get("observed_via"))
    return meta, effects, list(effects.values())


def reconciliation(path: Path) -> Reconciliation:
    """Read ``path``: which effects committed, which were reconciled, which are unknown."""
    meta, _, started = _scan_effects(path)
    done = [e for e in started if e.terminal_sequence is not None]
    return Reconciliation(
        path=path,
        session_id=str(meta["session_id"] or path.parent.name),
        cwd=meta["cwd"],
        records=meta["records"],
        exit_reason=meta["exit_reason"],
        end_sequence=meta["end_sequence"],
        resumed_at=meta["resumed_at"],
        committed=[e for e in done if e.observed_via != "reconcile"],
        reconciled=[e for e in done if e.observed_via == "reconcile"],
        unknown=[e for e in started if e.terminal_sequence is None],
    )


def report_text(r: Reconciliation) -> str:
    """What ``smllm resume`` prints: committed versus unknown effects."""
    running = "the session is running, or it crashed"
    if r.exit_reason is None:
        end = f"none recorded ({running})"
    elif r.resumed_at is None:
        end = f"{r.exit_reason} (sequence {r.end_sequence})"
    else:
        end = (f"{r.exit_reason} (sequence {r.end_sequence}), then resumed at sequence "
               f"{r.resumed_at}: no end recorded since ({running})")
    lines = [
        f"session {r.session_id}  {r.cwd or '(folder unknown)'}",
        f"journal {r.path}: {r.records} records, last end: {end}",
        f"committed effects: {len(r.committed)} (intent and terminal record)",
    ]
    if r.reconciled:
        lines.append(f"reconciled effects: {len(r.reconciled)}")
        lines += [f"  {e.sequence:>5}  {e.operation}  {e.outcome}  {e.summary()}"
                  for e in r.reconciled]
    if r.unknown:
        lines.append(f"unknown effects: {len(r.unknown)} (intent recorded, no outcome: verify "
                     "the actual state before retrying)")
        lines += [f"  {e.sequence:>5}  {e.operation}  {e.summary()}  {e.idempotency_key}"
                  for e in r.unknown]
        lines.append(f"record what you find: smllm reconcile SEQ --outcome applied|not-applied "
                     f"--journal {r.session_id}")
    else:
        lines.append("unknown effects: 0")
    return "\n".join(lines) + "\n"


def _effect_data(e: Effect) -> dict[str, Any]:
    return {"sequence": e.sequence, "tool_use_id": e.tool_use_id, "operation": e.operation,
            "idempotency_key": e.idempotency_key, "summary": e.summary(),
            "terminal_sequence": e.terminal_sequence, "outcome": e.outcome,
            "observed_via": e.observed_via}


def report_data(r: Reconciliation) -> dict[str, Any]:
    """``smllm resume --json``: the reconciliation as one JSON object."""
    return {
        "session_id": r.session_id, "cwd": r.cwd, "journal": str(r.path), "records": r.records,
        "last_end": None if r.exit_reason is None else {
            "exit_reason": r.exit_reason, "sequence": r.end_sequence},
        "resumed_at": r.resumed_at,
        "committed": [_effect_data(e) for e in r.committed],
        "reconciled": [_effect_data(e) for e in r.reconciled],
        "unknown": [_effect_data(e) for e in r.unknown],
    }


# --------------------------------------------------------------------- recording outcomes

Outcome = Literal["applied", "not-applied"]


@dataclass(frozen=True)
class Recorded:
    effect: Effect
    terminal_sequence: int
    reconciled_sequence: int


def record_outcome(path: Path, sequence: int, outcome: Outcome, *, verified_by: str,
                   note: str | None = None) -> Recorded:
    """Append the verified outcome of the unknown effect whose intent is ``sequence``."""
    with journal.transaction(path) as txn:
        _, _, started = _scan_effects(path)
        effect = next((e for e in started if e.sequence == sequence), None)
        if effect is None:
            unknown = ", ".join(str(e.sequence) for e in started
                                if e.terminal_sequence is None) or "none"
            raise ReconcileError(
                f"sequence {sequence} is not the intent of an effect in {path}",
                f"unknown effects in this journal: {unknown}",
            )
        if effect.terminal_sequence is not None:
            raise ReconcileError(
                f"effect {sequence} already has an outcome ({effect.outcome}, observed via "
                f"{effect.observed_via}, sequence {effect.terminal_sequence})",
                "only an effect whose outcome is unknown can be reconciled",
            )
        sidecar.ensure(txn)
        value = outcome.replace("-", "_")
        terminal = txn.append(records.new(
            "tool_batch.effect.terminal", tool_use_id=effect.tool_use_id,
            idempotency_key=effect.idempotency_key, intent_sequence=effect.sequence,
            operation=effect.operation, outcome=value, observed_via="reconcile",
            verified_by=verified_by, note=note))
        done = txn.append(records.new(
            "effect.reconciled", intent_sequence=effect.sequence,
            tool_use_id=effect.tool_use_id, idempotency_key=effect.idempotency_key,
            operation=effect.operation, outcome=value, verified_by=verified_by, note=note,
            terminal_sequence=terminal.sequence))
        unknown_state = dict(txn.state.get("unknown") or {})
        unknown_state.pop(str(sequence), None)
        txn.set_state("unknown", unknown_state)
        open_intents = dict(txn.state.get("open_intents") or {})
        open_intents.pop(effect.tool_use_id, None)
        txn.set_state("open_intents", open_intents)
    return Recorded(effect, terminal.sequence, done.sequence)
