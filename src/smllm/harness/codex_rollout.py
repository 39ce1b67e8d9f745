"""Codex's rollout file (its transcript) -> ``model.call`` records, read incrementally.

Codex 0.169 writes ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`` (the
``transcript_path`` of its hooks): one JSON object a line, ``{timestamp, ordinal, type,
payload}``. Each ``token_usage_record`` closes one model call (its ``response_id`` and
``usage``); the ``response_item`` lines before it are that call's output: assistant
``message`` text, ``function_call`` / ``custom_tool_call`` items (their ``call_id`` is the
hooks' ``tool_use_id``), ``reasoning`` (kept as a marker only, like Claude Code's
thinking). ``turn_context`` names the model.

Each Codex hook reads what the rollout gained under its journal lock
(:class:`smllm.harness.ingesting`, which :meth:`smllm.hooks._context.HookContext.transaction`
uses for Codex), from the offset kept in the sidecar (``rollout``); a line still being written is
left for the next hook. Nothing waits for the rollout: a model call Codex has not written
yet lands at a later hook.

>>> rollout = [
...     {"type": "turn_context", "payload": {"model": "gpt-5.5"}},
...     {"type": "response_item", "payload": {"type": "function_call", "call_id": "c1"}},
...     {"type": "token_usage_record", "timestamp": "T", "payload": {
...         "response_id": "resp_1", "usage": {"input_tokens": 9}}}]
>>> calls, st = read([__import__("json").dumps(r).encode() for r in rollout], {})
>>> calls[0]["message_id"], calls[0]["tool_use_ids"], calls[0]["stop_reason"]
('resp_1', ['c1'], 'tool_use')

Hot path: smllm's base and journal modules only; loaded by Codex's hooks only.
"""

from __future__ import annotations

from smllm import harness
from smllm.base import jsonfast
from smllm.base.digest import tagged

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm import journal

#: at most this much of the rollout is read by one hook (the rest by the next ones)
MAX_READ = 16 * 1024 * 1024
#: the output items that are tool calls (their call_id is the hooks' tool_use_id)
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})


def _texts(content: object) -> list[str]:
    out = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return out


def read(lines: list[bytes], st: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The model calls ``lines`` complete (their fields), and the state after them
    (``st``: the model and the output of a call not closed yet)."""
    st = dict(st)
    pending: dict[str, Any] = dict(st.get("pending") or {})
    calls = []
    for raw in lines:
        try:
            line = jsonfast.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        if not isinstance(line, dict) or not isinstance(line.get("payload"), dict):
            continue
        kind, payload = line.get("type"), line["payload"]
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            st["model"] = payload["model"]
        elif kind == "response_item":
            item = payload.get("type")
            if item == "message" and payload.get("role") == "assistant":
                pending["texts"] = [*pending.get("texts", []), *_texts(payload.get("content"))]
            elif item in CALL_ITEMS and isinstance(payload.get("call_id"), str):
                pending["ids"] = [*pending.get("ids", []), payload["call_id"]]
            elif item == "reasoning":
                summary = _texts(payload.get("summary")) or [
                    str(payload.get("encrypted_content") or "")]
                pending["thinking"] = [*pending.get("thinking", []), *summary]
        elif kind == "token_usage_record":
            ids = pending.get("ids", [])
            texts = pending.get("texts", [])
            thinking = "\n".join(pending.get("thinking", [])).encode("utf-8", "surrogatepass")
            usage = payload.get("usage")
            calls.append({
                "message_id": str(payload.get("response_id") or f"rollout:{line.get('ordinal')}"),
                "model": st.get("model"),
                "stop_reason": "tool_use" if ids else "end_turn",
                "usage": usage if isinstance(usage, dict) else {},
                "tool_use_ids": ids,
                "text": "\n".join(texts) if texts else None,
                "thinking": {"omitted_live_only": {"bytes": len(thinking),
                                                   "sha256": tagged(thinking)}}
                if thinking else None,
                "at": line.get("timestamp"),
            })
            pending = {}
    st["pending"] = pending
    return calls, st


def ingest(txn: journal.Transaction, rollout: str) -> None:
    """Journal the model calls ``rollout`` gained since the last hook (under ``txn``)."""
    harness.ingest_model_calls(txn, rollout, "rollout", read, MAX_READ)
