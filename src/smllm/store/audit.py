"""``smllm verify --store URL SESSION``: the hash chain re-checked from the stored rows.

Each stored line's hash is recomputed from the line itself (a redacted line, which no
longer hashes to it, must still declare it, and match its link of the stored-row chain:
:mod:`smllm.store.redaction`); each row must chain onto the one before it (``prev``)
with no gap in the sequence, and reach the last row a ship recorded (``smllm.heads``):
rows cut from the end of the store are reported with their count. When the session's journal
is on this machine, it is compared record by record (a redacted row must be the local
record with exactly its secrets removed): a local tail that is shorter
than what was shipped (cut after shipping) is reported with the count.

A session belongs to the database role that first shipped it (:mod:`smllm.store.schema`):
every row must come from that role. A row another role added (possible only in a store
older than schema version 3) is reported with the role that added it and is no part of
the session: the chain, the heads and the comparison with the local journal are checked
over the owner's rows alone, so a forged row never makes the owner's journal look cut.

Plain ``smllm verify`` asks the configured store too (:func:`head_anchor`): the last
record of the journal shipped by the session's owner is a head recorded outside the
machine, which neither cutting the log nor deleting the ``head`` file beside it can change.
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
from smllm.store import address, reader, redaction, schema
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
    #: how the store is shipped to (``raw``: its lines hold secrets in clear)
    shipping: redaction.Shipping = "redacted"
    #: stored rows whose line is the journal line with its secrets masked
    redacted: int = 0
    #: the database role that first shipped the session (its rows come from it alone)
    owner: str | None = None
    #: rows another role added to the session (reported, left out of every check)
    foreign: int = 0

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_json(self) -> dict[str, Any]:
        return {"host": self.host, "session_id": self.session_id, "ok": self.ok,
                "rows": self.rows, "streams": self.streams, "local_journal": self.local,
                "shipping": self.shipping, "redacted_rows": self.redacted,
                "owner": self.owner, "foreign_rows": self.foreign,
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


@dataclass(frozen=True)
class Row:
    """One stored row, as verify reads it."""

    sequence: int
    digest: str  # the journal hash (of the line before redaction)
    prev: str | None  # the line's own ``prev``
    data: bytes  # the stored line
    redacted: bool
    chain: str | None  # its link of the stored-row chain (None: shipped before it existed)
    declared: str | None  # the ``hash`` the stored line holds


def _owner(conn: psycopg.Connection[Any], host: str, sid: str) -> str | None:
    """The database role that first shipped the session (None: no session row)."""
    with conn.cursor() as cur:
        cur.execute("SELECT db_user FROM smllm.sessions WHERE host = %s AND session_id = %s",
                    (host, sid))
        row = cur.fetchone()
    return str(row[0]) if row else None


def _stored(conn: psycopg.Connection[Any], report: StoreReport) -> dict[str, list[Row]]:
    """The session's rows by stream, its owner's only; another role's are reported."""
    out: dict[str, list[Row]] = {}
    with conn.cursor() as cur:
        cur.execute("SELECT stream, sequence, hash, line, line_bytes, redacted, chain, db_user "
                    "FROM smllm.records WHERE host = %s AND session_id = %s "
                    "ORDER BY stream, sequence", (report.host, report.session_id))
        for stream, seq, digest, line, raw, redacted, chain, role in cur:
            if role != report.owner:
                report.foreign += 1
                report.findings.append(Finding(stream, int(seq), _foreign("row", role,
                                                                          report.owner)))
                continue
            data = line.encode("utf-8") if line is not None else bytes(raw)
            rec = journal.parse_line(data)
            prev = rec.get("prev") if rec is not None else None
            declared = rec.get("hash") if rec is not None else None
            out.setdefault(stream, []).append(Row(
                int(seq), digest, prev if isinstance(prev, str) else None, data, bool(redacted),
                chain, declared if isinstance(declared, str) else None))
    return out


def _foreign(what: str, role: object, owner: str | None) -> str:
    return (f"{what} added by database role {role}, not by {owner or 'the role'} that first "
            "shipped this session: not part of the session (forged, or shipped under "
            "another role), left out of every check")


def _stored_heads(conn: psycopg.Connection[Any], report: StoreReport) -> dict[str, int]:
    """Per stream, the highest sequence a ship of the session's owner recorded as stored
    (a head another role recorded is reported)."""
    out: dict[str, int] = {}
    with conn.cursor() as cur:
        cur.execute("SELECT stream, db_user, max(sequence) FROM smllm.heads WHERE host = %s "
                    "AND session_id = %s GROUP BY stream, db_user ORDER BY stream, db_user",
                    (report.host, report.session_id))
        for stream, role, top in cur:
            if role != report.owner:
                report.findings.append(Finding(str(stream), int(top),
                                               _foreign("a head", role, report.owner)))
            else:
                out[str(stream)] = int(top)
    return out


def _edited(row: Row, prev_link: str | None) -> str | None:
    """Why ``row`` is not as shipped (None: it is)."""
    if not row.redacted:
        declared, actual = journal.line_hash(row.data)
        if declared != row.digest or actual != row.digest:
            return "stored row was edited: its line does not hash to its recorded hash"
    elif row.declared != row.digest:
        return "stored row was edited: its redacted line holds another hash than its row"
    if row.chain is not None and prev_link is not None and row.chain != redaction.link(
            prev_link, row.digest, row.redacted, row.data):
        return "stored row was edited: it does not match its link of the stored-row chain"
    return None


def _check_chain(report: StoreReport, stream: str, rows: list[Row],
                 head: int | None = None) -> None:
    expected_seq, prev_hash = 1, journal.GENESIS
    prev_link: str | None = redaction.GENESIS
    for row in rows:
        seq = row.sequence
        if seq > expected_seq:
            missing = seq - expected_seq
            span = f"#{expected_seq}" if missing == 1 else f"#{expected_seq}-#{seq - 1}"
            report.findings.append(Finding(stream, expected_seq,
                                           f"{missing} row(s) missing from the store ({span})"))
        edited = _edited(row, prev_link if seq == expected_seq else None)
        if edited is not None:
            report.findings.append(Finding(stream, seq, edited))
        elif seq == expected_seq and row.prev != prev_hash:
            report.findings.append(Finding(stream, seq, "stored row does not chain onto the "
                                           "row before it (prev differs)"))
        expected_seq, prev_hash = seq + 1, row.digest
        prev_link = row.chain if row.chain is not None else ""
        if row.redacted:
            report.redacted += 1
    top = rows[-1].sequence if rows else 0
    if head is not None and head > top:
        report.findings.append(Finding(
            stream, top + 1, f"the store's rows end at #{top} but a ship stored up to #{head}: "
            f"{head - top} row(s) cut from the end of the store"))


def _local_journal(sid: str, stream: str) -> str | None:
    """This machine's log of one stored stream (``main`` or ``subagent/<agent id>``), if
    any: the stream name comes from the store, so its agent id is checked like any id."""
    try:
        path = journal.locate(sid, agent_id=journal.stream_agent(stream))
    except (OSError, ValueError):  # no such session here; a stream name that is not one
        return None
    return path if os.path.isfile(path) else None


def _compare_local(report: StoreReport, stream: str, path: str, rows: list[Row],
                   found: redaction.SessionSecrets | None) -> None:
    stored = {row.sequence: row for row in rows}
    last_local = 0
    for rec_line in journal.iter_lines(path):
        rec = rec_line.record
        if rec_line.status != "record" or rec is None:
            continue
        seq = int(rec["sequence"])
        last_local = max(last_local, seq)
        declared, _ = journal.line_hash(rec_line.raw)
        row = stored.get(seq)
        if row is None:
            continue
        if row.digest != declared:
            report.findings.append(Finding(stream, seq, "the local journal's record differs "
                                           "from the stored one (edited or forked)"))
        elif row.redacted and (found is None or not redaction.same_but_secrets(
                row.data, rec_line.raw, found)):
            report.findings.append(Finding(stream, seq, "the stored row is not the local "
                                           "record with exactly its secrets removed"))
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
    report.shipping = schema.shipping(conn)
    report.owner = _owner(conn, host_name, sid)
    stored = _stored(conn, report)
    heads = _stored_heads(conn, report)
    report.rows = sum(len(v) for v in stored.values())
    report.streams = len(stored)

    local_here = host_name == origin.host()
    paths = {stream: _local_journal(sid, stream) if local_here else None
             for stream in stored}
    found = None
    if any(row.redacted for rows in stored.values() for row in rows):
        found = redaction.learn(sorted(p for p in paths.values() if p is not None))
    for stream in sorted(stored, key=lambda s: (s != "main", s)):
        _check_chain(report, stream, stored[stream], heads.get(stream))
        path = paths[stream]
        if path is not None:
            if stream == "main":
                report.local = path
            _compare_local(report, stream, path, stored[stream], found)
    for stream in sorted(set(heads) - set(stored)):
        report.findings.append(Finding(stream, 1, f"a ship stored up to #{heads[stream]} but "
                                       "the store holds no row of this stream: every row cut"))
    return report


def shipped_head(conn: psycopg.Connection[Any], host: str, sid: str,
                 stream: str) -> tuple[int, str] | None:
    """(sequence, hash) of the last record of one journal stored by the session's owner
    (a row another role added is no head of it); None if none is stored."""
    with conn.cursor() as cur:
        cur.execute("SELECT r.sequence, r.hash FROM smllm.records r JOIN smllm.sessions s "
                    "ON s.host = r.host AND s.session_id = r.session_id "
                    "AND s.db_user = r.db_user WHERE r.host = %s AND r.session_id = %s "
                    "AND r.stream = %s ORDER BY r.sequence DESC LIMIT 1",
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
