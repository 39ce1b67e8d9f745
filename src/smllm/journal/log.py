"""The journal: one append-only JSON Lines log per host session, and its transaction.

Each line is one record (an *envelope*: :mod:`smllm.journal.codec`; where logs live:
:mod:`smllm.journal.folders`).

Guarantees:

* ``sequence`` is per log, from 1, gapless and unique: every append happens under an
  exclusive lock on the log, after reading the last record.
* ``hash`` is the SHA-256 of the line up to (not including) ``,"hash":…``, closed
  with ``}``; ``prev`` is the previous record's ``hash``. Editing, removing, inserting
  or reordering a line breaks the chain (:mod:`smllm.journal.verify` finds the first break).
* A durable record is fsynced before :meth:`Transaction.commit` returns.
* A crash mid-write leaves a torn last line. Readers count it; the next writer starts
  on a fresh line and records in ``skipped`` how many unparseable lines precede it.
* Strings longer than :data:`STRING_LIMIT` are replaced by an ``omitted_live_only``
  marker with their size and SHA-256; so are the largest fields of a record whose line
  would still exceed :data:`LINE_LIMIT`. Every reader and writer can therefore find the
  last record, whatever was appended.
* Every line is valid UTF-8: a string holding a lone surrogate (JSON input may carry
  ``"\\ud800"``) is written with ASCII escapes, which read back to the same string.
* The lock is not the log's own: it is a file of smllm's locks folder
  (:func:`smllm.base.paths.locks_root`, named after the log's device and inode, so every
  spelling of the log's path takes the same lock), which the agent's sandbox can neither
  read nor write. The journals themselves may be readable from the sandbox; a lock on the
  log file would let a sandboxed reader ``flock`` it and starve every hook.

A small sidecar, ``state.json``, caches per-session counters (turns, transcript
offset, open intents). It is a cache: the log is the record.
"""

from __future__ import annotations

from smllm.base import clock, jsonfast, paths
from smllm.base import osfast as os
from smllm.base.errors_hot import JournalError
from smllm.base.lockfile import locked_fd
from smllm.journal import keyed
from smllm.journal.codec import (
    _HASH_SUFFIX_LEN,
    GENESIS,
    Entry,
    Written,
    encode_record,
    line_hash,
    parse_line,
)
from smllm.journal.folders import STATE_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType
    from typing import Any, Literal

    from smllm.base.shapes import SessionKey, SessionState

    Durability = Literal["durable", "live_only"]
    LineStatus = Literal["record", "unparseable", "torn"]
    StrPath = str | os.PathLike[str]

_TAIL_CHUNK = 64 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_TAIL_MAX = 64 * 1024 * 1024


def _fault(name: str) -> None:
    """A crash test's fault point (:func:`smllm.base.faults.point`): that module loads only
    when ``SMLLM_FAULT`` is set, never in a user's hook."""
    if "SMLLM_FAULT" in os.environ:
        from smllm.base import faults  # noqa: PLC0415 - crash tests only (hot path)

        faults.point(name)


def _armed(name: str) -> bool:
    if "SMLLM_FAULT" not in os.environ:
        return False
    from smllm.base import faults  # noqa: PLC0415 - crash tests only (hot path)

    return faults.armed(name)


class Tail:
    """The last record of a log as a writer needs it."""

    __slots__ = ("hash", "recorded_at", "sequence", "skipped", "torn_bytes")

    def __init__(self, sequence: int, digest: str, torn_bytes: int, skipped: int,
                 recorded_at: str | None = None) -> None:
        self.sequence = sequence
        self.hash = digest
        self.torn_bytes = torn_bytes
        self.skipped = skipped
        self.recorded_at = recorded_at


class _Backwards:
    """Finds newlines backwards in an open file, one bounded chunk at a time."""

    __slots__ = ("buf", "fd", "start")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.start = 0

    def newline_before(self, pos: int) -> int:
        """The offset of the last ``\\n`` before ``pos``, or -1.

        The chunk already read is searched first: finding the last record's start after
        its end costs no second read (a writer's every transaction does this)."""
        while pos > 0:
            if not (self.start < pos <= self.start + len(self.buf)):
                self.start = max(0, pos - _TAIL_CHUNK)
                self.buf = os.pread(self.fd, pos - self.start, self.start)
            i = self.buf.rfind(b"\n", 0, pos - self.start)
            if i >= 0:
                return self.start + i
            pos = self.start  # not in this chunk: the one before it
        return -1

    def read(self, start: int, end: int) -> bytes:
        if self.start <= start and end <= self.start + len(self.buf):
            return self.buf[start - self.start : end - self.start]
        return os.pread(self.fd, end - start, start)


def _big_line_tail(fd: int, start: int, end: int) -> tuple[int, str, str | None] | None:
    """Sequence, hash and time of a line too long to read whole, from its two ends."""
    head = os.pread(fd, 128, start)
    prefix = b'{"sequence":'
    if not head.startswith(prefix):
        return None
    digits = head[len(prefix):].split(b",", 1)[0]
    if not digits.isdigit():
        return None
    suffix = os.pread(fd, _HASH_SUFFIX_LEN, end - _HASH_SUFFIX_LEN)
    if not (suffix.startswith(b',"hash":"sha256:') and suffix.endswith(b'"}')):
        return None
    at_key = b'"recorded_at":"'
    i = head.find(at_key)
    at = head[i + len(at_key):].split(b'"', 1)[0].decode("ascii", "replace") if i > 0 else None
    return int(digits), suffix[len(b',"hash":"') : -2].decode("ascii", "replace"), at


def read_tail(fd: int, size: int) -> Tail:
    """The last complete record of an open log, reading backwards from ``size``.

    Memory is bounded by :data:`_TAIL_MAX` whatever the lines hold: a longer line is
    read from its two ends (its sequence leads it, its hash closes it).
    """
    if size == 0:
        return Tail(0, GENESIS, 0, 0)
    back = _Backwards(fd)
    nl = back.newline_before(size)
    torn = size - (nl + 1)
    skipped = 0
    end = nl
    while end >= 0:
        start = back.newline_before(end) + 1
        if end - start > _TAIL_MAX:
            found = _big_line_tail(fd, start, end)
            if found is not None:
                return Tail(found[0], found[1], torn, skipped, found[2])
        else:
            raw = back.read(start, end)
            rec = parse_line(raw)
            if rec is not None:
                declared, _ = line_hash(raw)
                at = rec.get("recorded_at")
                return Tail(int(rec["sequence"]), declared or GENESIS, torn, skipped,
                            at if isinstance(at, str) else None)
        skipped += 1
        end = start - 1
    return Tail(0, GENESIS, torn, skipped)


# --------------------------------------------------------------------- writing


class Transaction:
    """Appends made under one hold of the log's lock, plus the sidecar state."""

    def __init__(self, path: str, fd: int, tail: Tail, state: SessionState,
                 now_ms: int) -> None:
        self.path = path
        self.fd = fd
        self.tail = tail
        self.state = state
        self.now_ms = now_ms
        self.pending: list[bytes] = []
        self.written: list[Written] = []
        self.durable = False
        self.state_dirty = False

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

    def _mac(self) -> None:
        """The keyed MACs of the pending records, beside the log, before the records
        (:mod:`smllm.journal.keyed`); a new log is entered in the key's register."""
        secret = keyed.key(create=True)
        if secret is None:  # pragma: no cover - create=True makes one
            return
        first = self.written[0].sequence
        if first == 1:
            keyed.register(self.path)
        keyed.write_slots(self.path, first,
                          keyed.slots(secret, first, [w.hash for w in self.written]))

    def extend(self, entries: Iterable[Entry]) -> list[Written]:
        return [self.append(e) for e in entries]

    def set_state(self, key: SessionKey, value: Any) -> None:
        if self.state.get(key) != value:
            self.state[key] = value
            self.state_dirty = True

    def flush(self) -> None:
        """Write and (for durable records) fsync what was appended so far."""
        if not self.pending:
            return
        data = b"".join(self.pending)
        if self.tail.torn_bytes:
            data = b"\n" + data
        self._mac()
        _fault("before-write")
        if _armed("mid-write"):
            os.write(self.fd, data[: max(1, len(data) // 2)])
            _fault("mid-write")
        start = os.lseek(self.fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                n = os.write(self.fd, view)
                view = view[n:]
            _fault("after-write")
            if self.durable:
                os.fsync(self.fd)
        except OSError:
            # a full disk or a failing device: take back what part of the batch landed,
            # so that a call denied for it never shows an intent or a start it did not get
            try:
                os.ftruncate(self.fd, start)
                os.fsync(self.fd)
            except OSError:
                pass
            raise
        _fault("after-fsync")
        self.pending.clear()
        write_head(self.path, self.written[-1].sequence, self.written[-1].hash)
        self.tail = Tail(self.written[-1].sequence, self.written[-1].hash, 0, 0,
                         clock.iso_utc(self.now_ms))
        self.written.clear()
        self.durable = False


#: the file beside the log holding its head (the last record written: sequence and
#: hash), outside the log, so that cutting records off its end shows (``smllm verify``)
HEAD_NAME = "head"
#: the payload type a writer records when the log ends before the head it knew
TAIL_MISSING = "journal.tail_missing"
_HEAD_LEN = 20 + 1 + len(GENESIS) + 1


def _head_file(log: str) -> str:
    return os.path.join(os.path.dirname(log), HEAD_NAME)


def write_head(log: str, sequence: int, digest: str) -> None:
    """Overwrite the head in place: one fixed-size ``pwrite``, no rename (hot path)."""
    data = f"{sequence:>20} {digest}\n".encode("ascii")
    fd = paths.open_regular(_head_file(log), os.O_WRONLY | os.O_CREAT)
    try:
        os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


def read_head(log: StrPath) -> tuple[int, str] | None:
    """The head recorded beside ``log`` (None when there is none or it is unreadable)."""
    try:
        fd = paths.open_regular(_head_file(os.fspath(log)), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        data = os.read(fd, _HEAD_LEN + 1)
    finally:
        os.close(fd)
    seq, _, digest = data.decode("ascii", "replace").strip().partition(" ")
    if not (seq.isdigit() and digest.startswith("sha256:") and len(digest) == len(GENESIS)):
        return None
    return int(seq), digest


def _check_head(txn: Transaction) -> None:
    """If the log lost records from its end since the last write, say so in the log."""
    head = read_head(txn.path)
    if head is None or head[0] <= txn.tail.sequence:
        return
    from smllm.journal import records  # noqa: PLC0415 - a cut log only (records imports this module)

    seq, digest = head
    txn.append(records.new(TAIL_MISSING, missing=seq - txn.tail.sequence,
                           log_ended_at=txn.tail.sequence, head_sequence=seq,
                           head_hash=digest, observed_via=HEAD_NAME))


def lock_file(fd: int) -> str:
    """The lock file of the open log ``fd``: ``<locks>/<device>-<inode>.lock``."""
    st = os.fstat(fd)
    return os.path.join(paths.locks_root(), f"{st.st_dev:x}-{st.st_ino:x}.lock")


def _open_lock(fd: int) -> int:
    """Open (create, 0600) the lock file of the open log ``fd``; never through a link."""
    path = lock_file(fd)
    try:
        return paths.open_regular(path, os.O_RDWR | os.O_CREAT)
    except FileNotFoundError:  # the first write of this store: no locks folder yet
        paths.ensure_private_tree(os.path.dirname(path), paths.state_root())
        return paths.open_regular(path, os.O_RDWR | os.O_CREAT)


class log_lock:
    """Hold the exclusive lock of the open log ``fd`` (:func:`lock_file`): what every
    writer of that log takes, and any reader that must see no write in between."""

    __slots__ = ("fd", "held")

    def __init__(self, fd: int) -> None:
        self.fd = _open_lock(fd)
        self.held: locked_fd | None = None

    def __enter__(self) -> None:
        try:
            held = locked_fd(self.fd)
            held.__enter__()
        except BaseException:
            os.close(self.fd)
            raise
        self.held = held

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if self.held is not None:
                self.held.__exit__(None, None, None)
        finally:
            os.close(self.fd)


def _state_file(path: str) -> str:
    return os.path.join(os.path.dirname(path), STATE_NAME)


#: state.json path -> ((inode, mtime, size), parsed): a hook reads its sidecar before the
#: lock (transcript prefetch) and again under it; the second read reuses the parse when
#: the file is the same one (a replace makes a new inode)
_STATE_SEEN: dict[str, tuple[tuple[int, int, int], SessionState]] = {}


def _read_state(path: str) -> SessionState:
    try:
        fd = paths.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return {}
    except OSError as exc:  # a link or a FIFO planted in the store
        raise JournalError(f"cannot read journal state {path}: {exc}",
                           "remove it: smllm rebuilds it from the log") from None
    try:
        st = os.fstat(fd)
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        cached = _STATE_SEEN.get(path)
        if cached is not None and cached[0] == stamp:  # read earlier in this process
            return cached[1].copy()
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = jsonfast.loads(b"".join(chunks))
    except (OSError, ValueError, RecursionError):
        return {}
    finally:
        os.close(fd)
    is_state = isinstance(data, dict)
    if not is_state:
        return {}
    state: SessionState = data  # data: what the JSON decoder gave
    _STATE_SEEN[path] = (stamp, state)
    return state.copy()


def read_state(log: StrPath) -> SessionState:
    """The sidecar of a log (``{}`` when missing or unreadable)."""
    return _read_state(_state_file(os.fspath(log)))


def _write_state(path: str, state: SessionState) -> None:
    paths.write_private(path, jsonfast.dumps_utf8(state), fault="state")


def _fsync_dir(path: str) -> None:
    if os.name != "posix":  # pragma: no cover
        return
    dfd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


class transaction:
    """Hold the log's lock; on a clean exit, write, fsync and save the state."""

    def __init__(self, path: StrPath, *, now_ms: int | None = None) -> None:
        self.path = os.fspath(path)
        self.now_ms = now_ms
        self.fd = -1
        self.lock: log_lock | None = None
        self.txn: Transaction | None = None
        self.created = False

    def __enter__(self) -> Transaction:
        self.created = not os.path.exists(self.path)
        if self.created:
            paths.ensure_private_tree(os.path.dirname(self.path), paths.data_root())
        try:
            self.fd = paths.open_regular(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        except paths.UnsafeStore as exc:
            raise JournalError(f"refusing journal {self.path}: {exc.what}", exc.fix) from None
        except OSError as exc:
            raise JournalError(f"cannot open journal {self.path}: {exc.strerror}") from exc
        try:
            _fault("open")
            lock = log_lock(self.fd)
            lock.__enter__()
            self.lock = lock
            _fault("locked")
            size = os.fstat(self.fd).st_size
            self.created = self.created or size == 0
            self.txn = Transaction(
                self.path, self.fd, read_tail(self.fd, size),
                _read_state(_state_file(self.path)),
                clock.now_ms() if self.now_ms is None else self.now_ms,
            )
            _check_head(self.txn)
        except BaseException:
            self._release()
            raise
        return self.txn

    def _release(self) -> None:
        try:
            if self.lock is not None:
                self.lock.__exit__(None, None, None)
        finally:
            os.close(self.fd)

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            txn = self.txn
            if et is None and txn is not None:
                txn.flush()
                if self.created:
                    _fsync_dir(os.path.dirname(self.path))
                if txn.state_dirty:
                    _write_state(_state_file(self.path), txn.state)
        finally:
            self._release()


def append(path: StrPath, entries: Iterable[Entry]) -> list[Written]:
    """Append ``entries`` durably in one lock hold; return their sequences and ids."""
    with transaction(path) as txn:
        return txn.extend(entries)
