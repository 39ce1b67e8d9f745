"""``smllm verify --store URL SESSION``: the hash chain re-checked from the stored rows.

Each stored line's hash is recomputed from the line itself; each row must chain onto
the one before it (``prev``) with no gap in the sequence. When the session's journal
is on this machine, it is compared record by record: a local tail that is shorter
than what was shipped (cut after shipping) is reported with the count.

Plain ``smllm verify`` asks the configured store too (:func:`head_anchor`): the last
shipped record of the journal is a head recorded outside the machine, which neither
cutting the log nor deleting the ``head`` file beside it can change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smllm import journal
from smllm.base.errors import SessionNotFound, SmllmError
from smllm.index import origin
from smllm.index.model import Filters
from smllm.journal import lookup
from smllm.journal.verify import Anchor
from smllm.store import address, reader, schema
from smllm.store.connection import connect, first_line

#: seconds to wait for the store when it only serves as a head anchor (plain verify)
ANCHOR_TIMEOUT = 3

if TYPE_CHECKING:
    import psycopg


@dataclass(frozen=True)
class Finding:
    stream: str
    sequence: int
    what: str

    def text(self) -> str:
        return f"{self.stream} #{self.sequence}: {self.what}"


@dataclass
class StoreReport:
    host: str
    session_id: str
    rows: int = 0
    streams: int = 0
    local: str | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_json(self) -> dict[str, Any]:
        return {"host": self.host, "session_id": self.session_id, "ok": self.ok,
                "rows": self.rows, "streams": self.streams, "local_journal": self.local,
                "problems": [f.__dict__ for f in self.findings]}


def _which(conn: psycopg.Connection[Any], spec: str, host: str | None) -> tuple[str, str]:
    rows = reader.sessions(conn, Filters(session=spec, host=host, limit=6))
    exact = [r for r in rows if r.session_id == spec]
    rows = exact or rows
    if not rows:
        where = f" from host {host}" if host else ""
        raise SessionNotFound(f"no session {spec!r}{where} in the team store",
                              "list them with `smllm sessions --store URL --all`")
    if len({(r.host, r.session_id) for r in rows}) > 1:
        names = ", ".join(f"{r.session_id} on {r.host}" for r in rows[:5])
        raise SessionNotFound(f"{spec!r} names more than one stored session",
                              f"give the full id and --host: {names}")
    return str(rows[0].host), rows[0].session_id


def _stored(conn: psycopg.Connection[Any], host: str, sid: str
            ) -> dict[str, list[tuple[int, str, str | None, bytes]]]:
    out: dict[str, list[tuple[int, str, str | None, bytes]]] = {}
    with conn.cursor() as cur:
        cur.execute("SELECT stream, sequence, hash, line, line_bytes FROM smllm.records "
                    "WHERE host = %s AND session_id = %s ORDER BY stream, sequence", (host, sid))
        for stream, seq, digest, line, raw in cur:
            data = line.encode("utf-8") if line is not None else bytes(raw)
            rec = journal.parse_line(data)
            prev = rec.get("prev") if rec is not None else None
            out.setdefault(stream, []).append(
                (int(seq), digest, prev if isinstance(prev, str) else None, data))
    return out


def _check_chain(report: StoreReport, stream: str,
                 rows: list[tuple[int, str, str | None, bytes]]) -> None:
    expected_seq, prev_hash = 1, journal.GENESIS
    for seq, digest, prev, data in rows:
        if seq > expected_seq:
            missing = seq - expected_seq
            span = f"#{expected_seq}" if missing == 1 else f"#{expected_seq}-#{seq - 1}"
            report.findings.append(Finding(stream, expected_seq,
                                           f"{missing} row(s) missing from the store ({span})"))
        declared, actual = journal.line_hash(data)
        if declared != digest or actual != digest:
            report.findings.append(Finding(stream, seq, "stored row was edited: its line does "
                                           "not hash to its recorded hash"))
        elif seq == expected_seq and prev != prev_hash:
            report.findings.append(Finding(stream, seq, "stored row does not chain onto the "
                                           "row before it (prev differs)"))
        expected_seq, prev_hash = seq + 1, digest


def _local_journal(sid: str, stream: str) -> str | None:
    """This machine's log of one stored stream (``main`` or ``subagent/<agent id>``), if
    any: the stream name comes from the store, so its agent id is checked like any id."""
    try:
        path = journal.locate(sid, agent_id=journal.stream_agent(stream))
    except (OSError, ValueError):  # no such session here; a stream name that is not one
        return None
    return path if os.path.isfile(path) else None


def _compare_local(report: StoreReport, stream: str, path: str,
                   rows: list[tuple[int, str, str | None, bytes]]) -> None:
    stored = {seq: digest for seq, digest, _, _ in rows}
    last_local = 0
    for rec_line in journal.iter_lines(path):
        rec = rec_line.record
        if rec_line.status != "record" or rec is None:
            continue
        seq = int(rec["sequence"])
        last_local = max(last_local, seq)
        declared, _ = journal.line_hash(rec_line.raw)
        if seq in stored and stored[seq] != declared:
            report.findings.append(Finding(stream, seq, "the local journal's record differs "
                                           "from the stored one (edited or forked)"))
    top = max(stored) if stored else 0
    if top > last_local:
        cut = top - last_local
        report.findings.append(Finding(
            stream, last_local + 1,
            f"the local journal ends at #{last_local} but the store holds up to #{top}: "
            f"{cut} record(s) cut from the local tail after shipping"))


def verify(conn: psycopg.Connection[Any], spec: str, host: str | None = None) -> StoreReport:
    """Check the stored rows of session ``spec`` (and compare with the local journal)."""
    host_name, sid = _which(conn, spec, host)
    report = StoreReport(host_name, sid)
    stored = _stored(conn, host_name, sid)
    report.rows = sum(len(v) for v in stored.values())
    report.streams = len(stored)

    local_here = host_name == origin.host()
    for stream in sorted(stored, key=lambda s: (s != "main", s)):
        _check_chain(report, stream, stored[stream])
        path = _local_journal(sid, stream) if local_here else None
        if path is not None:
            if stream == "main":
                report.local = path
            _compare_local(report, stream, path, stored[stream])
    return report


def shipped_head(conn: psycopg.Connection[Any], host: str, sid: str,
                 stream: str) -> tuple[int, str] | None:
    """(sequence, hash) of the last stored record of one journal; None if none is stored."""
    with conn.cursor() as cur:
        cur.execute("SELECT sequence, hash FROM smllm.records WHERE host = %s AND "
                    "session_id = %s AND stream = %s ORDER BY sequence DESC LIMIT 1",
                    (host, sid, stream))
        row = cur.fetchone()
    return (int(row[0]), str(row[1])) if row else None


def head_anchor(path: os.PathLike[str]) -> Anchor | None:
    """The configured team store's head of the journal at ``path`` (None when no store is
    configured). A store that cannot be asked gives an unavailable anchor saying why: it
    never stops verify, and never vouches for the log."""
    where = "the team store"
    try:
        found = address.configured_url()
        if found is None:
            return None
        where = f"the team store ({address.shown(found[0])})"
        ident = lookup.identity(Path(os.fspath(path)))
        if ident is None:
            return Anchor("store", where, None, None, "the journal is not in this machine's "
                          "session store, so the store cannot name it")
        head = _asked(found[0], *ident)
    except SmllmError as exc:
        return Anchor("store", where, None, None, exc.render())
    except _psycopg_error() as exc:
        return Anchor("store", where, None, None, first_line(exc))
    if head is None:
        return Anchor("store", where, 0, None)
    return Anchor("store", where, head[0], head[1])


def _asked(url: str, sid: str, stream: str) -> tuple[int, str] | None:
    with connect(url, timeout=ANCHOR_TIMEOUT) as conn:
        schema.check(conn)
        return shipped_head(conn, origin.host(), sid, stream)


def _psycopg_error() -> type[Exception]:
    try:
        import psycopg  # noqa: PLC0415 - the team extra, only when a store is configured
    except ImportError:
        return OSError
    error: type[Exception] = psycopg.Error
    return error
