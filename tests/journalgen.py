"""Synthetic journals written with the journal's own encoder (byte-identical records).

``write_session`` lays one session out as the hooks would (``session.start``, a
prompt, intents with their ``started`` and terminal records, ``session.end``), through
:func:`smllm.journal.encode_record` and the store's own locator, so ``smllm verify``
passes on every file. Used by the tests and by ``bench/bench_store.py``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from smllm import journal
from smllm.base import clock
from smllm.journal import keyed, sidecar


@dataclass(frozen=True)
class Effect:
    command: str
    decision: str = "allow:policy"  # the intent's stamp
    rule: str | None = "default.allow"
    outcome: str | None = "succeeded"  # None: the effect has no terminal (in flight)
    authorized_by: str | None = None  # the terminal's observed authorizer (default: stamp)


def write_session(session_id: str, *, cwd: str, start_ms: int, prompt: str = "do the work",
                  effects: Sequence[Effect] = (), end: str | None = "clean",
                  padding: int = 0) -> str:
    """Write (or extend) the journal of ``session_id``; return its path."""
    folder = journal.session_folder(session_id, create=True, now_ms=start_ms)
    path = os.path.join(folder, journal.LOG_NAME)
    entries: list[journal.Entry] = [
        journal.fact("session.start", {"session_id": session_id, "source": "startup",
                                       "cwd": cwd, "transcript_path": None, "model": "m",
                                       "host": "claude-code", "build": {"smllm": "0.1.0"}}),
        journal.event("proposed", turn=1, prompt=prompt, prompt_id=None, source=None),
        journal.event("accepted", turn=1, proposed_sequence=2),
    ]
    for n, e in enumerate(effects):
        tid = f"toolu_{session_id[:8]}_{n}"
        key = sidecar.idempotency_key(session_id, tid)
        entries.append(journal.event(
            "side_effect_intent", operation="tool:bash", tool_name="Bash", tool_use_id=tid,
            idempotency_key=key, policy_decision=e.decision, rule=e.rule, reason="r",
            pending_action_id=None, input={"command": e.command, "pad": "x" * padding}))
        entries.append(journal.fact("tool_batch.effect.started", {
            "tool_use_id": tid, "idempotency_key": key, "intent_sequence": 0,
            "operation": "tool:bash"}))
        if e.outcome is not None:
            entries.append(journal.fact("tool_batch.effect.terminal", {
                "tool_use_id": tid, "idempotency_key": key, "intent_sequence": 0,
                "operation": "tool:bash", "outcome": e.outcome, "observed_via": "hook",
                "authorized_by": e.authorized_by or e.decision}))
    if end is not None:
        entries.append(journal.fact("session.end", {"exit_reason": end, "host_reason": None,
                                                    "uptime_ms": 1000}))
    append(path, entries, start_ms)
    return path


def append(path: str, entries: Sequence[journal.Entry], start_ms: int) -> None:
    """Encode ``entries`` after the log's last record, one ms apart, in one write."""
    seq, prev = 0, journal.GENESIS
    if os.path.exists(path) and os.path.getsize(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            tail = journal.read_tail(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        seq, prev = tail.sequence, tail.hash
    out, digests = [], []
    for i, entry in enumerate(entries):
        line, _, prev = journal.encode_record(
            entry, sequence=seq + i + 1, prev=prev,
            recorded_at=clock.iso_utc(start_ms + i), skipped=0)
        out.append(line)
        digests.append(prev)
    secret = keyed.key(create=True)  # the MACs beside the log, as every writer leaves them
    assert secret is not None
    if seq == 0:
        keyed.register(path)
    keyed.write_slots(path, seq + 1, keyed.slots(secret, seq + 1, digests))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"".join(out))
    finally:
        os.close(fd)
    if out:  # the head beside the log, as every writer leaves it
        journal.write_head(path, seq + len(out), prev)
