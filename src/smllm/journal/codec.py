"""The journal's line codec: records as envelopes, one JSON line each, hash-chained.

Each line is one record (an *envelope*)::

    {"sequence": 7, "recorded_at": "2026-01-05T09:00:00.000Z", "record_type": "event",
     "durability": "durable", "payload_type": null, "payload": {"event": {...}},
     "id": "r-…", "causation_id": null, "v": 1, "prev": "sha256:…", "hash": "sha256:…"}

* ``hash`` is the SHA-256 of the line up to (not including) ``,"hash":…``, closed
  with ``}``; ``prev`` is the previous record's ``hash``.
* Strings longer than :data:`STRING_LIMIT` are replaced by an ``omitted_live_only``
  marker with their size and SHA-256; so are the largest fields of a record whose line
  would still exceed :data:`LINE_LIMIT`.
* Every line is valid UTF-8: a string holding a lone surrogate (JSON input may carry
  ``"\\ud800"``) is written with ASCII escapes, which read back to the same string.

Reading: :func:`iter_lines` yields every physical line (``record``, ``unparseable`` or
``torn``), streaming; :func:`iter_records` only the records. Where logs live is
:mod:`smllm.journal.folders`; appending is :mod:`smllm.journal.log`.
"""

from __future__ import annotations

from smllm.base import jsonfast
from smllm.base import osfast as os
from smllm.base.digest import tagged
from smllm.base.errors_hot import JournalError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, Literal

    from smllm.base.shapes import Record

    Durability = Literal["durable", "live_only"]
    LineStatus = Literal["record", "unparseable", "torn"]
    StrPath = str | os.PathLike[str]
SCHEMA_VERSION = 1
STRING_LIMIT = 32 * 1024
GENESIS = "sha256:" + "0" * 64
_HASH_SUFFIX_LEN = len(',"hash":"sha256:') + 64 + len('"}')
#: the longest line a writer produces (larger fields become ``omitted_live_only``)
LINE_LIMIT = 4 * 1024 * 1024


class Entry:
    """What a caller asks to append; the journal adds the envelope."""

    __slots__ = ("causation_id", "durability", "payload", "payload_type")

    def __init__(self, payload: dict[str, Any], payload_type: str | None = None,
                 durability: Durability = "durable", causation_id: str | None = None) -> None:
        self.payload = payload
        self.payload_type = payload_type
        self.durability = durability
        self.causation_id = causation_id

    def __repr__(self) -> str:
        return f"Entry({self.payload_type or self.payload.get('event', {}).get('kind')!r})"


def event(kind: str, /, **fields: Any) -> Entry:
    """A task-lifecycle or runtime event: ``payload.event.kind``."""
    return Entry({"event": {"kind": kind, **fields}})


def fact(payload_type: str, record: dict[str, Any], *, durability: Durability = "durable",
         causation_id: str | None = None) -> Entry:
    """A stream fact: ``payload_type`` is set, ``payload`` is ``{kind, record}``."""
    kind = payload_type.replace(".", "_")
    return Entry({"kind": kind, "record": record}, payload_type, durability, causation_id)


class Written:
    """Where an appended record landed."""

    __slots__ = ("hash", "id", "sequence")

    def __init__(self, sequence: int, rid: str, digest: str) -> None:
        self.sequence = sequence
        self.id = rid
        self.hash = digest

    def __repr__(self) -> str:
        return f"Written(sequence={self.sequence}, id={self.id!r})"


class Line:
    """One physical line of a log, as every reader sees it."""

    __slots__ = ("number", "offset", "raw", "record", "status")

    def __init__(self, number: int, offset: int, raw: bytes, status: LineStatus,
                 record: Record | None = None) -> None:
        self.number = number
        self.offset = offset
        self.raw = raw
        self.status = status
        self.record = record

    def __repr__(self) -> str:
        return f"Line({self.number}, {self.status!r})"


# --------------------------------------------------------------------- large values


def omit_large(value: Any, limit: int = STRING_LIMIT) -> tuple[Any, int]:
    """Replace strings longer than ``limit`` bytes with a marker; return the count."""
    if isinstance(value, str):
        if len(value) * 4 <= limit:  # cannot exceed the limit in UTF-8
            return value, 0
        data = value.encode("utf-8", "surrogatepass")
        if len(data) <= limit:
            return value, 0
        return {"omitted_live_only": {"bytes": len(data), "sha256": tagged(data)}}, 1
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


def new_record_id() -> str:
    return "r-" + os.urandom(8).hex()


def _marker(value: Any) -> dict[str, Any]:
    data = jsonfast.dumps_utf8(value)
    return {"omitted_live_only": {"bytes": len(data), "sha256": tagged(data)}}


def cap_payload(payload: dict[str, Any], limit: int = LINE_LIMIT // 2) -> dict[str, Any]:
    """``payload`` with its largest fields replaced by markers until it fits ``limit``."""
    key = "event" if isinstance(payload.get("event"), dict) else "record"
    body = payload.get(key)
    if not isinstance(body, dict):
        return {k: (v if k == "kind" else _marker(v)) for k, v in payload.items()}
    sizes = sorted(((len(jsonfast.dumps_utf8(v)), k) for k, v in body.items() if k != "kind"),
                   reverse=True)
    total = sum(n for n, _ in sizes)
    capped = dict(body)
    for n, k in sizes:
        if total <= limit:
            break
        capped[k] = _marker(body[k])
        total -= n
    if total > limit:  # a myriad of small fields: keep only the name of the record
        capped = {"kind": body["kind"]} if "kind" in body else {}
        capped["omitted_live_only"] = _marker(body)["omitted_live_only"]
    return {**payload, key: capped}


def encode_record(
    entry: Entry, *, sequence: int, prev: str, recorded_at: str, skipped: int,
    rid: str | None = None,
) -> tuple[bytes, str, str]:
    """The line (with newline), its id and its hash."""
    rid = rid or new_record_id()
    payload = entry.payload
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
    text = jsonfast.dumps_utf8(body)
    # a string over STRING_LIMIT bytes in UTF-8 takes at least as many in the line: only a
    # line that long can hold one (most lines are far shorter: no walk through the record)
    if len(text) > STRING_LIMIT:
        payload, _ = omit_large(payload)
        body["payload"] = payload
        text = jsonfast.dumps_utf8(body)
    if len(text) > LINE_LIMIT:
        body["payload"] = cap_payload(payload)
        text = jsonfast.dumps_utf8(body)
    digest = tagged(text)
    line = text[:-1] + b',"hash":"' + digest.encode() + b'"}\n'
    return line, rid, digest


def line_hash(raw: bytes) -> tuple[str | None, str | None]:
    """(declared hash, recomputed hash) of a record line without its newline."""
    if len(raw) < _HASH_SUFFIX_LEN or not raw.endswith(b'"}'):
        return None, None
    suffix = raw[-_HASH_SUFFIX_LEN:]
    if not suffix.startswith(b',"hash":"sha256:'):
        return None, None
    declared = suffix[len(b',"hash":"') : -2].decode("ascii", "replace")
    return declared, tagged(raw[:-_HASH_SUFFIX_LEN] + b"}")


def parse_line(raw: bytes) -> Record | None:
    """The record on ``raw`` (no newline), or None if it is not one."""
    try:
        obj = jsonfast.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    is_record = isinstance(obj, dict) and isinstance(obj.get("sequence"), int)
    return obj if is_record else None  # obj: what the JSON decoder gave


# --------------------------------------------------------------------- reading


def kind_of(rec: Record) -> str | None:
    """``payload.event.kind // payload_type``: the name of a record."""
    payload = rec.get("payload")
    if isinstance(payload, dict):
        ev = payload.get("event")
        if isinstance(ev, dict) and isinstance(ev.get("kind"), str):
            return str(ev["kind"])
    pt = rec.get("payload_type")
    return pt if isinstance(pt, str) else None


def body_of(rec: Record) -> dict[str, Any]:
    """The fields of a record: ``payload.event`` or ``payload.record``."""
    payload = rec.get("payload")
    if isinstance(payload, dict):
        for key in ("event", "record"):
            inner = payload.get(key)
            if isinstance(inner, dict):
                return inner
    return {}



def iter_lines(path: StrPath) -> Iterator[Line]:
    """Every physical line of the log, streaming; the last one may be torn."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed in finally, generator-safe
    except FileNotFoundError:
        raise JournalError(
            f"no journal at {os.fspath(path)}", "check the session id with `smllm verify`"
        ) from None
    try:
        offset = 0
        for number, raw in enumerate(fh, 1):
            if raw.endswith(b"\n"):
                body = raw[:-1]
                rec = parse_line(body)
                yield Line(number, offset, body, "record" if rec else "unparseable", rec)
            else:
                yield Line(number, offset, raw, "torn", parse_line(raw))
            offset += len(raw)
    finally:
        fh.close()


def iter_records(path: StrPath) -> Iterator[Record]:
    """The parseable, complete records of a log, in order."""
    for line in iter_lines(path):
        if line.status == "record" and line.record is not None:
            yield line.record


