"""What a record is about, in a few columns: the facets search filters on.

Both back ends (the SQLite index and the team store) compute them here, from the
parsed record, so a filter means the same thing everywhere. :class:`Summary` folds the
records of one main journal into the columns ``smllm sessions`` shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from smllm.base import catalogue, clock
from smllm.journal import body_of, kind_of, line_hash, parse_line

if TYPE_CHECKING:
    from smllm.base.shapes import Record

TEXT_LIMIT = 4096
PROMPT_LIMIT = 500
#: the input fields that say what a tool acted on, in order of preference
TARGET_KEYS = catalogue.TARGET_KEYS
TERMINAL = "tool_batch.effect.terminal"
INTENT = "side_effect_intent"


class Facets(NamedTuple):
    kind: str | None
    tool: str | None
    text: str | None
    decision: str | None
    rule: str | None
    outcome: str | None
    tool_use_id: str | None


def tool_name(value: object) -> str | None:
    """``tool:bash`` / ``Bash`` / ``NotebookEdit`` -> ``bash`` / ``bash`` / ``notebook_edit``."""
    if not isinstance(value, str) or not value:
        return None
    name = _TOOL_NAMES.get(value)
    if name is None:
        name = _tool_name(value)
        if len(_TOOL_NAMES) < 4096:  # a log names few tools, over and over
            _TOOL_NAMES[value] = name
    return name


_TOOL_NAMES: dict[str, str] = {}


def _tool_name(value: str) -> str:
    if value.startswith("tool:"):
        return value[5:]
    if value.startswith("mcp__"):
        return value
    out = []
    for i, ch in enumerate(value):
        if ch.isupper() and i and not value[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def target(inp: object) -> str | None:
    """The command, path, URL or pattern a tool input acts on (shortened)."""
    if not isinstance(inp, dict):
        return None
    for key in TARGET_KEYS:
        value = inp.get(key)
        if isinstance(value, str):
            return value[:TEXT_LIMIT]
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _tool_of(body: dict[str, Any]) -> str | None:
    return tool_name(body.get("operation")) or tool_name(body.get("tool_name"))


def _kind_body(rec: Record) -> tuple[str | None, dict[str, Any]]:
    """``(kind_of(rec), body_of(rec))`` in one look at the payload (the index reads every
    record of every journal through here)."""
    payload = rec.get("payload")
    if type(payload) is dict:
        ev = payload.get("event")
        if type(ev) is dict:
            kind = ev.get("kind")
            if type(kind) is str:
                return kind, ev
            return _pt(rec), ev
        inner = payload.get("record")
        return _pt(rec), inner if type(inner) is dict else {}
    return kind_of(rec), body_of(rec)


def _pt(rec: Record) -> str | None:
    pt = rec.get("payload_type")
    return pt if isinstance(pt, str) else None


def facets(rec: Record) -> Facets:
    """The facets of one parsed record."""
    return Facets(*facet_values(rec))


FacetValues = tuple[str | None, str | None, str | None, str | None, str | None, str | None,
                    str | None]


def facet_values(rec: Record) -> FacetValues:  # noqa: PLR0911 - one return per kind
    """:func:`facets` as a plain tuple (the index reads every record of every journal
    through here)."""
    kind, body = _kind_body(rec)
    tid = body.get("tool_use_id")
    tid = tid if isinstance(tid, str) else None
    if kind == INTENT:
        return (kind, _tool_of(body), target(body.get("input")),
                _str(body.get("policy_decision")), _str(body.get("rule")), None, tid)
    if kind == TERMINAL:
        return (kind, _tool_of(body), None, _str(body.get("authorized_by")), None,
                _str(body.get("outcome")), tid)
    if kind == "tool_batch.effect.started":
        return (kind, _tool_of(body), None, None, None, None, tid)
    if kind == "model.call":  # what the model said: found by `smllm search --text`
        text = body.get("text")
        return (kind, None, text[:TEXT_LIMIT] if isinstance(text, str) and text else None,
                None, None, None, None)
    if kind == "approval.review":
        action = body.get("action")
        act = action if isinstance(action, dict) else {}
        return (kind, _tool_of(act) or _tool_of(body), target(act.get("input")) or
                _str(act.get("summary")), None, _str(body.get("rule")), None, tid)
    if kind == "decision_applied":
        source = body.get("decision_source")
        who = source.get("kind") if isinstance(source, dict) else source
        result = _str(body.get("policy_result"))
        stamp = f"{result}:{who}" if result and isinstance(who, str) else None
        return (kind, None, None, stamp, None, _str(body.get("decision")), tid)
    if kind == "session.end":
        return (kind, None, None, None, None, _str(body.get("exit_reason")), None)
    if kind == "approval_wait.effect.terminal":
        return (kind, None, None, None, None, _str(body.get("outcome")), tid)
    return (kind, None, None, None, None, None, None)


def effective(stamp: str | None, observed: str | None) -> str | None:
    """An intent's effective authorization: what its terminal observed when smllm
    deferred to Claude Code (``defer:``/``ask:``), else its own stamp."""
    if stamp is not None and stamp.startswith(("defer:", "ask:")) and observed:
        return observed
    return stamp


class Summary:
    """The ``smllm sessions`` columns of one main journal, folded record by record."""

    __slots__ = ("first_prompt", "folder", "harness", "last_at", "last_ms", "records",
                 "started_at", "started_ms", "termination")

    def __init__(self, *, started_at: str | None = None, started_ms: int | None = None,
                 last_at: str | None = None, last_ms: int | None = None,
                 folder: str | None = None, records: int = 0, termination: str = "open",
                 first_prompt: str | None = None, harness: str | None = None) -> None:
        self.started_at = started_at
        self.started_ms = started_ms
        self.last_at = last_at
        self.last_ms = last_ms
        self.folder = folder
        self.records = records
        self.termination = termination
        self.first_prompt = first_prompt
        self.harness = harness  # another host's (session.start names it); None: Claude Code

    def add(self, rec: Record, kind: str | None, at: str | None = None,
            ms: int | None = None) -> None:
        """Fold one record in; ``at``/``ms``: its ``recorded_at`` and its milliseconds when
        the caller has them already (else they are read from ``rec``)."""
        if at is None:
            at = _str(rec.get("recorded_at"))
            ms = clock.parse_iso_ms(at)
        self.records += 1
        if self.started_at is None:
            self.started_at, self.started_ms = at, ms
        if at is not None:
            self.last_at, self.last_ms = at, ms
        if kind in ("session.start", "session.resumed"):
            self.termination = "open"
            if self.folder is None:
                self.folder = _str(body_of(rec).get("cwd"))
            if self.harness is None:
                self.harness = _str(body_of(rec).get("harness"))
        elif kind == "session.end":
            self.termination = _str(body_of(rec).get("exit_reason")) or "ended"
        elif kind == "proposed" and self.first_prompt is None:
            prompt = body_of(rec).get("prompt")
            if isinstance(prompt, str) and prompt.strip():
                self.first_prompt = " ".join(prompt.split())[:PROMPT_LIMIT]


def continues(fh: Any, offset: int, last_hash: str | None) -> bool:
    """Whether the line that ends at ``offset`` in ``fh`` is the record hashed
    ``last_hash`` (a cursor still points into the same log)."""
    if offset == 0 or last_hash is None:
        return True
    suffix = b',"hash":"' + last_hash.encode() + b'"}\n'
    if offset < len(suffix):
        return False
    fh.seek(offset - len(suffix))
    return bool(fh.read(len(suffix)) == suffix)


def lines_after(fh: Any, offset: int, last_hash: str | None, chunk: int
                ) -> Iterator[tuple[int, bytes, Record | None] | None]:
    """The whole lines of a journal after a cursor (``offset``, just after the record
    hashed ``last_hash``), read ``chunk`` bytes at a time: (the offset after the line,
    the line, its record or None). A None, and nothing after it: the journal does not
    continue the cursor's chain (read it again from the start). A last line without its
    newline is left for the next read."""
    if not continues(fh, offset, last_hash):
        yield None
        return
    fh.seek(offset)
    check = last_hash is not None  # does the first record chain onto the cursor?
    rest = b""
    while True:
        data = fh.read(chunk)
        if not data:
            return
        data = rest + data
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
            continue
        rest = data[cut + 1:]
        for raw in data[:cut].split(b"\n"):
            offset += len(raw) + 1
            rec = parse_line(raw)
            if rec is not None and check:
                if rec.get("prev") != last_hash:
                    yield None
                    return
                check = False
            yield offset, raw, rec


def declared_hash(raw: bytes) -> str:
    """The hash a record line declares (its last field), without recomputing it."""
    if raw.endswith(b'"}') and raw[-82:-73] == b',"hash":"':
        return raw[-73:-2].decode("ascii", "replace")
    declared, _ = line_hash(raw)
    return declared or ""
