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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def idempotency_key(session_id: str, tool_use_id: str) -> str:
    """The key an intent carries: one per host tool call, stable across retries."""
    digest = sha256_hex(f"{session_id}\0{tool_use_id}".encode())
    return f"idem-{digest[:32]}"


def operation(tool_name: str) -> str:
    """``Bash`` -> ``tool:bash``, ``NotebookEdit`` -> ``tool:notebook_edit``."""
    if tool_name.startswith("mcp__"):
        return f"tool:{tool_name}"
    out = []
    for i, ch in enumerate(tool_name):
        if ch.isupper() and i and not tool_name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "tool:" + "".join(out)


def _ms(rec: dict[str, Any]) -> int:
    return clock.parse_iso_ms(str(rec.get("recorded_at", ""))) or 0


def rebuild(path: str) -> dict[str, Any]:
    """Recompute the sidecar's counters from the log itself.

    An intent is open from its ``tool_batch.effect.started`` (whatever smllm stamped on
    it: ``allow:…``, ``defer:host``, ``ask:user``) until its terminal record.
    """
    state: dict[str, Any] = {"open": False, "turns": 0, "open_intents": {}}
    intents: dict[str, dict[str, Any]] = {}
    for rec in journal.iter_records(path):
        payload = rec.get("payload") or {}
        pt = rec.get("payload_type")
        ev = payload.get("event") if isinstance(payload, dict) else None
        body = payload.get("record") if isinstance(payload, dict) else None
        if pt in ("session.start", "session.resumed"):
            state["open"] = True
            state["started_at_ms"] = _ms(rec)
        elif pt == "session.end":
            state["open"] = False
        elif pt == "tool_batch.effect.started" and isinstance(body, dict):
            tid = body.get("tool_use_id")
            if isinstance(tid, str) and tid in intents:
                state["open_intents"][tid] = intents.pop(tid)
        elif pt == "tool_batch.effect.terminal" and isinstance(body, dict):
            state["open_intents"].pop(body.get("tool_use_id"), None)
        elif isinstance(ev, dict) and ev.get("kind") == "accepted":
            state["turns"] = int(ev.get("turn") or state["turns"] + 1)
        elif isinstance(ev, dict) and ev.get("kind") == "side_effect_intent":
            intents[str(ev.get("tool_use_id"))] = {
                "seq": rec["sequence"],
                "key": ev.get("idempotency_key"),
                "operation": ev.get("operation"),
                "input": ev.get("input"),
            }
    return state


def ensure(txn: journal.Transaction) -> None:
    """Fill ``txn.state`` from the log when the sidecar is missing."""
    if txn.state or txn.tail.sequence == 0:
        return
    for key, value in rebuild(txn.path).items():
        txn.set_state(key, value)
