"""The journal: one append-only JSON Lines log per host session.

Each line is one record (an *envelope*)::

    {"sequence": 7, "recorded_at": "2026-01-05T09:00:00.000Z", "record_type": "event",
     "durability": "durable", "payload_type": null, "payload": {"event": {...}},
     "id": "r-…", "causation_id": null, "v": 1, "prev": "sha256:…", "hash": "sha256:…"}

Guarantees:

* ``sequence`` is per log, from 1, gapless and unique: every append happens under an
  exclusive lock on the log, after reading the last record.
* ``hash`` is the SHA-256 of the line up to (not including) ``,"hash":…``, closed
  with ``}``; ``prev`` is the previous record's ``hash``. Editing, removing, inserting
  or reordering a line breaks the chain (:mod:`smllm.verify` finds the first break).
* A durable record is fsynced before :meth:`Transaction.commit` returns.
* A crash mid-write leaves a torn last line. Readers count it; the next writer starts
  on a fresh line and records in ``skipped`` how many unparseable lines precede it.
* Strings longer than :data:`STRING_LIMIT` are replaced by an ``omitted_live_only``
  marker with their size and SHA-256.

A small sidecar, ``state.json``, caches per-session counters (turns, transcript
offset, open intents). It is a cache: the log is the record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from smllm import clock, faults, paths
from smllm.errors import JournalError
from smllm.filelock import locked_fd

SCHEMA_VERSION = 1
STRING_LIMIT = 32 * 1024
GENESIS = "sha256:" + "0" * 64
LOG_NAME = "session.jsonl"
STATE_NAME = "state.json"
_HASH_SUFFIX_LEN = len(',"hash":"sha256:') + 64 + len('"}')
_TAIL_CHUNK = 64 * 1024
_TAIL_MAX = 64 * 1024 * 1024

Durability = Literal["durable", "live_only"]
LineStatus = Literal["record", "unparseable", "torn"]


@dataclass(frozen=True)
class Entry:
    """What a caller asks to append; the journal adds the envelope."""

    payload: dict[str, Any]
    payload_type: str | None = None
    durability: Durability = "durable"
    causation_id: str | None = None


def event(kind: str, /, **fields: Any) -> Entry:
    """A task-lifecycle or runtime event: ``payload.event.kind``."""
    return Entry({"event": {"kind": kind, **fields}})


def fact(payload_type: str, record: dict[str, Any], *, durability: Durability = "durable") -> Entry:
    """A stream fact: ``payload_type`` is set, ``payload`` is ``{kind, record}``."""
    kind = payload_type.replace(".", "_")
    return Entry({"kind": kind, "record": record}, payload_type=payload_type, durability=durability)


@dataclass(frozen=True)
class Written:
    sequence: int
    id: str
    hash: str


@dataclass(frozen=True)
class Line:
    """One physical line of a log, as every reader sees it."""

    number: int
    offset: int
    raw: bytes
    status: LineStatus
    record: dict[str, Any] | None = None


# --------------------------------------------------------------------- large values


def omit_large(value: Any, limit: int = STRING_LIMIT) -> tuple[Any, int]:
    """Replace strings longer than ``limit`` bytes with a marker; return the count."""
    if isinstance(value, str):
        if len(value) * 4 <= limit:  # cannot exceed the limit in UTF-8
            return value, 0
        data = value.encode("utf-8", "surrogatepass")
        if len(data) <= limit:
            return value, 0
        digest = hashlib.sha256(data).hexdigest()
        return {"omitted_live_only": {"bytes": len(data), "sha256": f"sha256:{digest}"}}, 1
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        total = 0
        for k, v in value.items():
            out[k], n = omit_large(v, limit)
            total += n
        return out, total
    if isinstance(value, list):
        items = []
        total = 0
        for v in value:
            item, n = omit_large(v, limit)
            items.append(item)
            total += n
        return items, total
    return value, 0


# --------------------------------------------------------------------- serialisation


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def encode_record(
    entry: Entry, *, sequence: int, prev: str, recorded_at: str, skipped: int
) -> tuple[bytes, str, str]:
    """The line (with newline), its id and its hash."""
    rid = "r-" + secrets.token_hex(8)
    payload, _ = omit_large(entry.payload)
    body: dict[str, Any] = {
        "sequence": sequence,
        "recorded_at": recorded_at,
        "record_type": "fact" if entry.payload_type else "event",
        "durability": entry.durability,
        "payload_type": entry.payload_type,
        "payload": payload,
        "id": rid,
        "causation_id": entry.causation_id,
        "v": SCHEMA_VERSION,
    }
    if skipped:
        body["skipped"] = skipped
    body["prev"] = prev
    text = _dumps(body)
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    line = text[:-1] + ',"hash":"' + digest + '"}\n'
    return line.encode("utf-8", "surrogatepass"), rid, digest


def line_hash(raw: bytes) -> tuple[str | None, str | None]:
    """(declared hash, recomputed hash) of a record line without its newline."""
    if len(raw) < _HASH_SUFFIX_LEN or not raw.endswith(b'"}'):
        return None, None
    suffix = raw[-_HASH_SUFFIX_LEN:]
    if not suffix.startswith(b',"hash":"sha256:'):
        return None, None
    declared = suffix[len(b',"hash":"') : -2].decode("ascii", "replace")
    body = raw[:-_HASH_SUFFIX_LEN] + b"}"
    return declared, "sha256:" + hashlib.sha256(body).hexdigest()


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """The record on ``raw`` (no newline), or None if it is not one."""
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("sequence"), int):
        return obj
    return None


# --------------------------------------------------------------------- reading


def iter_lines(path: Path) -> Iterator[Line]:
    """Every physical line of the log, streaming; the last one may be torn."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed in finally, generator-safe
    except FileNotFoundError:
        raise JournalError(
            f"no journal at {path}", "check the session id with `smllm session list`"
        ) from None
    try:
        offset = 0
        number = 0
        for raw in fh:
            number += 1
            complete = raw.endswith(b"\n")
            body = raw[:-1] if complete else raw
            if not complete:
                yield Line(number, offset, body, "torn", parse_line(body))
            else:
                rec = parse_line(body)
                yield Line(number, offset, body, "record" if rec else "unparseable", rec)
            offset += len(raw)
    finally:
        fh.close()


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """The parseable, complete records of a log, in order."""
    for line in iter_lines(path):
        if line.status == "record" and line.record is not None:
            yield line.record


@dataclass(frozen=True)
class Tail:
    sequence: int
    hash: str
    torn_bytes: int
    skipped: int


def read_tail(fd: int, size: int) -> Tail:
    """The last complete record of an open log, reading backwards from ``size``."""
    if size == 0:
        return Tail(0, GENESIS, 0, 0)
    chunk = min(size, _TAIL_CHUNK)
    while True:
        data = os.pread(fd, chunk, size - chunk)
        torn = 0
        if not data.endswith(b"\n"):
            cut = data.rfind(b"\n")
            if cut < 0 and chunk < size and chunk < _TAIL_MAX:
                chunk = min(size, chunk * 4)
                continue
            torn = len(data) - (cut + 1)
            data = data[: cut + 1]
        lines = data.split(b"\n")[:-1]
        skipped = 0
        # the first line of a partial chunk may be cut: never trust it
        start = 0 if chunk == size else 1
        for raw in reversed(lines[start:]):
            rec = parse_line(raw)
            if rec is not None:
                declared, _ = line_hash(raw)
                return Tail(int(rec["sequence"]), declared or GENESIS, torn, skipped)
            skipped += 1
        if chunk >= size or chunk >= _TAIL_MAX:
            return Tail(0, GENESIS, torn, skipped + (len(lines) - len(lines[start:])))
        chunk = min(size, chunk * 4)


# --------------------------------------------------------------------- locating


def _date_path(ms: int) -> str:
    iso = clock.iso_utc(ms)
    return f"{iso[0:4]}/{iso[5:7]}/{iso[8:10]}"


def session_dir(host_session_id: str, *, create: bool = False, now_ms: int | None = None) -> Path:
    """``sessions/YYYY/MM/DD/<id>/`` of a host session (the date of its first record)."""
    sid = paths.check_id(host_session_id)
    root = paths.sessions_dir()
    index = root / "by-id" / sid
    try:
        return root / index.read_text().strip() / sid
    except FileNotFoundError:
        if not create:
            raise
    paths.ensure_private_tree(index.parent, paths.data_dir())
    rel = _date_path(clock.now_ms() if now_ms is None else now_ms)
    try:
        fd = os.open(index, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return root / index.read_text().strip() / sid
    try:
        os.write(fd, rel.encode() + b"\n")
    finally:
        os.close(fd)
    d = root / rel / sid
    paths.ensure_private_tree(d, paths.data_dir())
    return d


def log_path(host_session_id: str, *, agent_id: str | None = None, create: bool = False) -> Path:
    d = session_dir(host_session_id, create=create)
    if agent_id is not None:
        d = d / "subagent" / paths.check_id(agent_id, "agent id")
        if create:
            paths.ensure_private_tree(d, paths.data_dir())
    return d / LOG_NAME


# --------------------------------------------------------------------- writing


@dataclass
class Transaction:
    """Appends made under one hold of the log's lock, plus the sidecar state."""

    path: Path
    fd: int
    tail: Tail
    state: dict[str, Any]
    now_ms: int
    pending: list[bytes] = field(default_factory=list)
    written: list[Written] = field(default_factory=list)
    durable: bool = False
    state_dirty: bool = False

    @property
    def next_sequence(self) -> int:
        return self.tail.sequence + len(self.written) + 1

    def append(self, entry: Entry) -> Written:
        prev = self.written[-1].hash if self.written else self.tail.hash
        skipped = self.tail.skipped + (1 if self.tail.torn_bytes else 0)
        line, rid, digest = encode_record(
            entry,
            sequence=self.next_sequence,
            prev=prev,
            recorded_at=clock.iso_utc(self.now_ms),
            skipped=skipped if not self.written else 0,
        )
        self.pending.append(line)
        w = Written(self.next_sequence, rid, digest)
        self.written.append(w)
        self.durable = self.durable or entry.durability == "durable"
        return w

    def extend(self, entries: Iterable[Entry]) -> list[Written]:
        return [self.append(e) for e in entries]

    def set_state(self, key: str, value: Any) -> None:
        if self.state.get(key) != value:
            self.state[key] = value
            self.state_dirty = True

    def flush(self) -> None:
        """Write and (for durable records) fsync what was appended so far."""
        if not self.pending:
            return
        data = b"".join(self.pending)
        if self.tail.torn_bytes and len(self.written) == len(self.pending):
            data = b"\n" + data
        faults.point("before-write")
        if faults.armed("mid-write"):
            os.write(self.fd, data[: max(1, len(data) // 2)])
            faults.point("mid-write")
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        faults.point("after-write")
        if self.durable:
            os.fsync(self.fd)
        faults.point("after-fsync")
        self.pending.clear()
        self.tail = Tail(self.written[-1].sequence, self.written[-1].hash, 0, 0)
        self.written.clear()
        self.durable = False


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_name(f".{STATE_NAME}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, _dumps(state).encode())
    finally:
        os.close(fd)
    faults.point("state")
    os.replace(tmp, path)


@contextlib.contextmanager
def transaction(path: Path, *, now_ms: int | None = None) -> Iterator[Transaction]:
    """Hold the log's lock; on a clean exit, write, fsync and save the state."""
    created = not path.exists()
    if created:
        paths.ensure_private_tree(path.parent, paths.data_dir())
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        raise JournalError(f"cannot open journal {path}: {exc.strerror}") from exc
    faults.point("open")
    try:
        with locked_fd(fd):
            faults.point("locked")
            size = os.fstat(fd).st_size
            txn = Transaction(
                path=path,
                fd=fd,
                tail=read_tail(fd, size),
                state=_read_state(path.with_name(STATE_NAME)),
                now_ms=clock.now_ms() if now_ms is None else now_ms,
            )
            yield txn
            txn.flush()
            if created or size == 0:
                _fsync_dir(path.parent)
            if txn.state_dirty:
                _write_state(path.with_name(STATE_NAME), txn.state)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover
        return
    dfd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def append(path: Path, entries: Iterable[Entry]) -> list[Written]:
    """Append ``entries`` durably in one lock hold; return their sequences and ids."""
    with transaction(path) as txn:
        out = txn.extend(entries)
    return out
