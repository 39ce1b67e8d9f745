"""The per-session counters the hooks keep beside the log (``state.json``).

They are a cache of facts the log already holds: if the sidecar is lost, they are
rebuilt by one scan of the log. Keys:

``open``          a start or resume was recorded and no ``session.end`` since
``started_at_ms`` when that start or resume was recorded
``turns``         accepted prompts so far
``open_intents``  tool_use_id -> {seq, key, operation, input}: intents with no terminal
``unknown``       intents found in flight at a resume (see :mod:`smllm.journal.reconcile`)
"""

from __future__ import annotations

from smllm import journal
from smllm.base import clock
from smllm.base.digest import sha256_hex
from smllm.journal.hostcall import HOST_STAMPS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.base.shapes import OpenIntent, Record, SessionState


def idempotency_key(session_id: str, tool_use_id: str) -> str:
    """The key an intent carries: one per host tool call, stable across retries."""
    digest = sha256_hex(f"{session_id}\0{tool_use_id}".encode())
    return f"idem-{digest[:32]}"


def _ms(rec: Record) -> int:
    return clock.parse_iso_ms(str(rec.get("recorded_at", ""))) or 0


def rebuild(path: str) -> SessionState:
    """Recompute the sidecar's counters from the log itself.

    An intent smllm allowed is open from its ``tool_batch.effect.started`` until its
    terminal record; one Claude Code decides (``defer:host``, ``ask:user``,
    ``allow:yolo``: no start before its authorization is known) from the intent itself,
    prompted once an ``approval.review`` names it (journal/hostcall.py).
    """
    state: SessionState = {"open": False, "turns": 0, "open_intents": {}}
    open_intents: dict[str, OpenIntent] = {}
    intents: dict[str, OpenIntent] = {}
    for rec in journal.iter_records(path):
        kind, body = journal.kind_of(rec), journal.body_of(rec)
        if kind in ("session.start", "session.resumed"):
            state["open"] = True
            state["started_at_ms"] = _ms(rec)
        elif kind == "session.end":
            state["open"] = False
        elif kind == "tool_batch.effect.started":
            tid = body.get("tool_use_id")
            if isinstance(tid, str) and tid in intents:
                open_intents[tid] = intents.pop(tid)
        elif kind == "tool_batch.effect.terminal":
            open_intents.pop(str(body.get("tool_use_id")), None)
        elif kind == "accepted":
            state["turns"] = int(body.get("turn") or state.get("turns", 0) + 1)
        elif kind == "side_effect_intent":
            entry: OpenIntent = {
                "seq": rec["sequence"],
                "key": body.get("idempotency_key"),
                "operation": body.get("operation"),
                "input": body.get("input"),
                "tool_name": str(body.get("tool_name")),
                "decision": str(body.get("policy_decision")),
                "pending": body.get("pending_action_id"),
            }
            tid = str(body.get("tool_use_id"))
            if entry["decision"] in HOST_STAMPS:
                entry["host"] = True
                open_intents[tid] = entry
            else:
                intents[tid] = entry
        elif kind == "approval.review" and body.get("tool_use_id") in open_intents:
            prompted = open_intents[str(body["tool_use_id"])]
            prompted["prompted"] = True
            prompted["pending"] = prompted.get("pending") or body.get("pending_action_id")
    state["open_intents"] = open_intents
    return state


def ensure(txn: journal.Transaction) -> None:
    """Fill ``txn.state`` from the log when the sidecar is missing."""
    if txn.state or txn.tail.sequence == 0:
        return
    rebuilt = rebuild(txn.path)
    txn.set_state("open", rebuilt.get("open", False))
    txn.set_state("turns", rebuilt.get("turns", 0))
    txn.set_state("open_intents", rebuilt.get("open_intents", {}))
    if "started_at_ms" in rebuilt:
        txn.set_state("started_at_ms", rebuilt["started_at_ms"])
