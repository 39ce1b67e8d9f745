"""``smllm ledger``: one row per journaled action, each with how it was authorized.

Rows come from an export (read streaming, :func:`smllm.audit.export.read`):

* ``model``     a ``model.call`` — ``auth=not_applicable``
* ``tool run``  a ``side_effect_intent`` — ``auth=<policy_decision>``; when smllm deferred
  to Claude Code (``defer:host``, ``ask:user``), the authorizer its terminal record observed
* ``edit``      a ``side_effect_intent`` of a file-editing tool
* ``approval``  ``approval.review`` requested, and the ``decision_applied`` verdict

Rows are in sequence order (each stream's, the main log first). The plain form is seed
000's, and a tool or edit row ends with what ran (the command, the path, or the tool's
input), shortened to one line::

    audit ledger  c7dfaecc-…  (233 events, termination: clean)
      43  +  16.9s  tool run   bash       auth=allow:policy  python3 check_costs.py
     193  +  57.8s  approval   REQUESTED  bash: rm -rf stale_cache.txt
     196  +  57.8s  approval   APPROVED  by llm_judge

A tool or edit row whose effect did not simply succeed carries its status after the
authorization, in brackets: ``[failed]``, ``[refused_by_host]``, ``[denied]``,
``[unknown]`` (started, never finished, the session over: a crash), ``[in flight]``,
``[not run]``, ``[waiting]``, and ``[reconciled: <outcome>]`` when the outcome was
recorded after a crash (``smllm reconcile``). The rule is :func:`effect_status`, the
viewer's too. A row that succeeded has no mark (seed 000's rows are unchanged).

``--effects`` keeps only the side effects — approvals and the calls that may change
something (not model calls, not reads: read-only tools, and calls whose intent says the
gate proved them read-only, ``known_safe``; an intent without that field, from an older
journal, may change something) — in seed 000's compact form, without the trailing
column. The ledger is a pure function of its export: nothing is analysed at audit time,
so the auditor's disk, ``$HOME`` and working folder do not change a row. On a terminal
each lane has its colour (unless ``NO_COLOR`` is set); ``--html`` writes a
self-contained page; ``--json`` prints one object per row.

Rows stream: memory is per open effect, not per record. A row waits for its effect's
terminal record (its status, and the authorizer it observed) while later rows queue
behind it; an effect still open :data:`HOLD` records after its intent (a crash, a call
never answered) is resolved from a first pass over the same source, made only then, that
keeps the outcome of such long-open effects alone. Rows come in each stream's line order
(the sequence order of a sound log), the main stream first.
"""

from __future__ import annotations

import calendar
import html
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from smllm import journal
from smllm.audit import export
from smllm.audit.export import Document
from smllm.base import catalogue
from smllm.base.errors import ExportError
from smllm.journal import body_of, kind_of

Lane = Literal["model", "tool run", "edit", "approval"]
LANES: tuple[Lane, ...] = ("model", "tool run", "edit", "approval")


def is_edit(tool: str) -> bool:
    """Does ``tool`` (a journal operation name without ``tool:``) edit files? By the tool
    catalogue, other hosts' editing tools included (:mod:`smllm.base.catalogue`)."""
    return catalogue.operation_kind(f"tool:{tool}") == catalogue.WRITE


def is_read_only(tool: str) -> bool:
    """Does every call of ``tool`` leave the world as it was (the catalogue's read, web
    and bookkeeping tools, other hosts' included)?"""
    return catalogue.operation_kind(f"tool:{tool}") in catalogue.READ_ONLY_KINDS


ANSI: dict[Lane, str] = {"model": "34", "tool run": "32", "edit": "35", "approval": "33"}
HTML_COLOURS: dict[Lane, str] = {"model": "#2f6fde", "tool run": "#1f9d55",
                                 "edit": "#8e44ad", "approval": "#e0a100"}
#: the longest "what ran" shown in a row
RAN_WIDTH = 60


@dataclass(frozen=True)
class Row:
    stream: str
    sequence: int
    seconds: float
    lane: Lane
    what: str
    detail: str  # approvals: the action or the verdict; tool and edit rows: what ran
    auth: str | None
    effect: bool = False
    status: str | None = None  # tool and edit rows: effect_status()
    mark: str | None = None  # the bracketed mark (None: a plain success, or no effect)

    def plain(self, *, ran: bool = True) -> str:
        """The row as text; ``ran=False`` drops the trailing what-ran column (seed 000's
        compact form)."""
        head = f"{self.sequence:>4}  +{self.seconds:>6.1f}s  {self.lane:<9}  "
        if self.lane == "approval":
            return f"{head}{self.what}  {self.detail}"
        text = f"{head}{self.what:<9}  auth={self.auth}"
        if self.mark:
            text += f"  [{self.mark}]"
        return f"{text}  {self.detail}" if ran and self.detail else text

    def data(self) -> dict[str, Any]:
        """The row for ``--json``."""
        return {"stream": self.stream, "sequence": self.sequence, "seconds": self.seconds,
                "lane": self.lane, "what": self.what, "auth": self.auth,
                "detail": self.detail or None, "effect": self.effect, "status": self.status,
                "mark": self.mark}

    def resolved(self, auth: str | None, status: str, reconciled: bool) -> Row:
        return Row(self.stream, self.sequence, self.seconds, self.lane, self.what,
                   self.detail, auth if auth is not None else self.auth, self.effect, status,
                   status_mark(status, reconciled))


def parse_ms(at: object) -> int | None:
    """Milliseconds of an RFC 3339 UTC ``recorded_at``; None when absent or malformed."""
    if not isinstance(at, str) or len(at) < 19:
        return None
    try:
        t = time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    frac = at[20:23] if len(at) > 20 and at[19] == "." else ""
    return calendar.timegm(t) * 1000 + (int(frac.ljust(3, "0")) if frac.isdigit() else 0)


def tool_of(body: dict[str, Any]) -> str:
    op = body.get("operation")
    if isinstance(op, str) and op.startswith("tool:"):
        return op[5:]
    name = body.get("tool_name")
    return str(name) if name else "?"


def action_text(body: dict[str, Any]) -> str:
    """``bash: rm -rf stale_cache.txt`` from an ``approval.review`` record's action."""
    action = body.get("action")
    if isinstance(action, str):
        return action
    if not isinstance(action, dict):
        return "?"
    if isinstance(action.get("summary"), str):
        return str(action["summary"])
    tool = tool_of(action) if ("operation" in action or "tool_name" in action) else tool_of(body)
    raw_input = action.get("input")
    inp: dict[str, Any] = raw_input if isinstance(raw_input, dict) else action
    for key in catalogue.TARGET_KEYS[:-2]:  # what it ran or acted on (not a pattern/query)
        if isinstance(inp.get(key), str):
            return f"{tool}: {inp[key]}"
    return tool


def shorten(text: str, width: int = RAN_WIDTH) -> str:
    """One line of at most ``width`` characters (whitespace runs become one space)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def ran_text(tool: str, tool_input: object) -> str:
    """What a call ran, shortened: its command, its path, or its input as compact JSON."""
    if isinstance(tool_input, dict):
        for key in catalogue.TARGET_KEYS:
            if isinstance(tool_input.get(key), str):
                return shorten(str(tool_input[key]))
        import json  # noqa: PLC0415 - the CLI's slow path

        return shorten(json.dumps(tool_input, ensure_ascii=False, separators=(",", ":")))
    return shorten(str(tool_input)) if tool_input is not None else ""


def is_effect(tool: str, known_safe: object) -> bool:
    """May this call change something? False for read-only tools and for a call whose
    intent records ``known_safe: true`` (the gate's analysis proved it read-only when it
    decided); anything else may, an older intent without the field included."""
    return not is_read_only(tool) and known_safe is not True


def effect_status(*, decision: str, started: bool, finished: bool, outcome: str | None,
                  running: bool) -> str:
    """What became of an intent (the ledger's and the viewer's rule): its terminal's
    outcome (``succeeded``, ``failed``, ``refused_by_host``, ...); else ``denied`` for a
    refused stamp; else, started: ``in flight`` while the session runs, ``unknown`` once
    it is over; not started: ``waiting``, or ``not run``. A call Claude Code decides
    (``defer:host``, ``ask:user``, ``allow:yolo``) has its start written only once its
    authorization is known (journal/hostcall.py): with no terminal it is ``waiting`` while
    the session runs, and ``unknown`` once it is over (it may have run)."""
    if finished:
        return outcome or "?"
    if decision.startswith("deny"):
        return "denied"
    if started:
        return "in flight" if running else "unknown"
    if decision.startswith(_DEFERRED):
        return "waiting" if running else "unknown"
    return "waiting" if running else "not run"


def status_mark(status: str, reconciled: bool) -> str | None:
    """The bracketed mark a row shows for ``status`` (None for a plain success)."""
    if reconciled:
        return f"reconciled: {status}"
    return None if status == "succeeded" else status


def _row(stream: str, seq: int, secs: float, kind: str | None,
         body: dict[str, Any]) -> Row | None:
    if kind == "model.call":
        if isinstance(body.get("part"), int) and body["part"] > 1:
            return None  # late lines of a call already shown: the same model call
        return Row(stream, seq, secs, "model", str(body.get("model") or "?"), "",
                   "not_applicable")
    if kind == "side_effect_intent":
        tool = tool_of(body)
        lane: Lane = "edit" if is_edit(tool) else "tool run"
        return Row(stream, seq, secs, lane, tool, ran_text(tool, body.get("input")),
                   str(body.get("policy_decision")), is_effect(tool, body.get("known_safe")))
    if kind == "approval.review" and body.get("state", "requested") == "requested":
        return Row(stream, seq, secs, "approval", "REQUESTED", action_text(body), None, True)
    if kind == "decision_applied":
        source = body.get("decision_source")
        who = source.get("kind") if isinstance(source, dict) else source
        decision = str(body.get("decision") or "?").upper()
        return Row(stream, seq, secs, "approval", decision, f"by {who or 'unknown'}", None,
                   True)
    return None


#: stamps that say smllm let the host decide: the row waits for what was observed
_DEFERRED = ("defer:", "ask:", "allow:yolo")
#: records after its intent that an effect's row waits for its terminal, before the
#: ledger asks a first pass for the outcome (see the module's docstring)
HOLD = 4096
_LIFECYCLE = frozenset({"session.start", "session.resumed", "session.end"})


class _Open:
    """An intent whose outcome is not known yet."""

    __slots__ = ("at", "auth", "decision", "row", "started")

    def __init__(self, row: Row | None, at: int, decision: str) -> None:
        self.row = row  # None in the first pass (or when --effects left the row out)
        self.at = at  # the event index of the intent
        self.decision = decision
        self.started = False
        self.auth: str | None = None


#: the outcome of a long-open effect: (status, observed authorizer, reconciled)
Outcome = tuple[str, "str | None", bool]


class _Pass:
    """One pass over a document's events: each intent joined with its start and its
    terminal; the rows in order, each given out once it is resolved."""

    def __init__(self, *, effects: bool, late: dict[tuple[str, str], Outcome] | None) -> None:
        self.effects = effects
        self.late = late  # None: this is the first pass, which collects them
        self.collected: dict[tuple[str, str], Outcome] = {}
        self.queue: deque[Row | _Open] = deque()
        self.open: dict[tuple[str, str], _Open] = {}
        self.aging: deque[tuple[int, tuple[str, str]]] = deque()  # (intent index, key)
        self.index = 0
        self.running: dict[str, bool] = {}
        self.t0: dict[str, int] = {}
        self.overflow = False  # the second pass needs the first

    def feed(self, ev: dict[str, Any]) -> Iterator[Row]:
        self.index += 1
        if ev.get("kind") != "record" or not isinstance(ev.get("envelope"), dict):
            return
        env = ev["envelope"]
        stream = str(ev.get("stream", "main"))
        kind, body = kind_of(env), body_of(env)
        if kind in _LIFECYCLE:
            self.running[stream] = kind != "session.end"
        tid = body.get("tool_use_id")
        if kind in _STEPS and isinstance(tid, str):
            self.step(stream, tid, kind, body)
        elif kind == "side_effect_intent" or self.late is not None:
            self.row(stream, env, kind, body, tid)
        yield from self.ready()

    def row(self, stream: str, env: dict[str, Any], kind: str | None, body: dict[str, Any],
            tid: object) -> None:
        row = None
        if self.late is not None:
            ms = parse_ms(env.get("recorded_at"))
            if ms is not None:
                self.t0.setdefault(stream, ms)
            secs = ((ms or 0) - self.t0.get(stream, ms or 0)) / 1000
            row = _row(stream, int(env.get("sequence", 0)), secs, kind, body)
            if row is not None and self.effects and not row.effect:
                row = None
        if kind != "side_effect_intent" or not isinstance(tid, str):
            if row is not None:
                self.queue.append(row)
            return
        decision = str(body.get("policy_decision"))
        pending = _Open(row, self.index, decision)
        if decision.startswith("deny"):  # refused before it ran: nothing more to wait for
            self.finish(pending, ("denied", None, False))
            if row is not None:
                self.queue.append(pending)
            return
        key = (stream, tid)
        self.open[key] = pending
        self.aging.append((self.index, key))
        if row is not None:
            self.queue.append(pending)

    def step(self, stream: str, tid: str, kind: str, body: dict[str, Any]) -> None:
        pending = self.open.get((stream, tid))
        if pending is None:
            return
        if kind == "tool_batch.effect.started":
            pending.started = True
            return
        if kind == "tool_batch.effect.terminal":
            who = body.get("authorized_by")
            auth = who if isinstance(who, str) and pending.decision.startswith(_DEFERRED) \
                else None
            outcome = body.get("outcome")
            status = effect_status(decision=pending.decision, started=pending.started,
                                   finished=True, outcome=outcome if isinstance(
                                       outcome, str) else None, running=True)
            del self.open[(stream, tid)]
            self.settle(stream, tid, pending, (status, auth,
                                               body.get("observed_via") == "reconcile"))

    def settle(self, stream: str, tid: str, pending: _Open, outcome: Outcome) -> None:
        if self.late is None and self.index - pending.at > HOLD:
            self.collected[(stream, tid)] = outcome  # open too long: the second pass asks
        self.finish(pending, outcome)

    def finish(self, pending: _Open, outcome: Outcome) -> None:
        status, auth, reconciled = outcome
        if pending.row is not None:
            pending.row = pending.row.resolved(auth, status, reconciled)
        pending.decision = ""  # resolved
        pending.at = -1

    def ready(self) -> Iterator[Row]:
        """The rows at the head of the queue that are resolved; an effect open longer
        than HOLD is resolved from the first pass."""
        aging = self.aging
        while aging and self.index - aging[0][0] > HOLD:
            at, key = aging[0]
            pending = self.open.get(key)
            if pending is None or pending.at != at or self.late is None:
                aging.popleft()  # closed, or the first pass: it holds no row
                continue
            outcome = self.late.get(key)
            if outcome is None:
                self.overflow = True  # the first pass must run: iter_rows comes back here
                return
            aging.popleft()
            del self.open[key]
            self.finish(pending, outcome)
        queue = self.queue
        while queue:
            head = queue[0]
            if isinstance(head, _Open):
                if head.at >= 0 or head.row is None:
                    return
                queue.popleft()
                yield head.row
            else:
                queue.popleft()
                yield head

    def end(self) -> Iterator[Row]:
        """The end of the events: what is still open is over (or still running)."""
        for (stream, tid), pending in list(self.open.items()):
            status = effect_status(decision=pending.decision, started=pending.started,
                                   finished=False, outcome=None,
                                   running=self.running.get(stream, True))
            self.settle(stream, tid, pending, (status, None, False))
        self.open.clear()
        self.aging.clear()
        yield from self.ready()


_STEPS = frozenset({"tool_batch.effect.started", "tool_batch.effect.terminal"})


def iter_rows(source: Callable[[], Document], *, effects: bool = False) -> Iterator[Row]:
    """The ledger rows of the document ``source()`` gives (a fresh one each call), in
    each stream's order, streaming; ``effects`` keeps only the side effects.

    Under ``authority = "guard"`` an intent's stamp (``defer:host``, ``ask:user``) says
    that Claude Code's own permissions decide; who actually allowed the call is on its
    terminal record (``authorized_by``), which gives the row its ``auth``
    (``allow:host``, ``allow:user``, …); one whose outcome was never recorded keeps its
    stamp.
    """
    late: dict[tuple[str, str], Outcome] = {}
    rendering = _Pass(effects=effects, late=late)
    events = source().events
    for ev in events:
        for row in rendering.feed(ev):
            yield row
        if rendering.overflow:
            break
    else:
        yield from rendering.end()
        return
    # an effect stayed open for longer than HOLD records: learn the outcomes of every such
    # effect in a first pass, then go on where the rendering stopped
    first = _Pass(effects=effects, late=None)
    for ev in source().events:
        for _ in first.feed(ev):
            pass
    for _ in first.end():
        pass
    late.update(first.collected)
    rendering.overflow = False
    for row in rendering.ready():
        yield row
    for ev in events:
        yield from rendering.feed(ev)
    yield from rendering.end()


def rows(doc: Document | Callable[[], Document], *, effects: bool = False) -> list[Row]:
    """Every row of :func:`iter_rows` as a list (a document read once: a long-open effect
    then needs ``doc`` as a function that reads it again)."""
    return list(iter_rows(doc if callable(doc) else _once(doc), effects=effects))


def _reusing(doc: Document, source: Callable[[], Document]) -> Callable[[], Document]:
    """``source``, whose first call gives ``doc`` (already opened for its header)."""
    first = [doc]

    def again() -> Document:
        return first.pop() if first else source()

    return again


def _once(doc: Document) -> Callable[[], Document]:
    used = [False]

    def again() -> Document:
        if used[0]:
            raise ExportError("this export cannot be read twice (it came from a stream)",
                              "give the export as a file, or the journal itself")
        used[0] = True
        return doc

    return again


def from_export(path: Path) -> Callable[[], Document]:
    """The document of the export at ``path``, read afresh each call."""
    return lambda: export.read(path)


def from_journal(log: Path) -> Callable[[], Document]:
    """The document ``smllm export`` would write for the journal ``log``, without writing
    it: the header computed once (each stream read up to its size then), the events
    streamed from the logs afresh each call."""
    all_streams = export.streams(log)
    meta = dict(export.header(all_streams, "raw").items())

    def events() -> Iterator[dict[str, Any]]:
        for stream in all_streams:
            for line in export.raw_lines(stream):
                rec = journal.parse_line(line.raw) if line.complete else None
                if rec is not None:
                    yield {"kind": "record", "stream": stream.name, "line": line.number,
                           "envelope": rec}
                else:
                    yield {"kind": "unparseable" if line.complete else "torn",
                           "stream": stream.name, "line": line.number}

    return lambda: Document(meta, events())


def title(meta: dict[str, Any]) -> str:
    """``audit ledger  <session id>  (<n> events, termination: <how>)``."""
    sessions = meta.get("sessions") or [{}]
    main = sessions[0] if isinstance(sessions[0], dict) else {}
    events = sum(int(s.get("lines", 0)) for s in sessions if isinstance(s, dict))
    end = main.get("session_end")
    how = end.get("exit_reason") if isinstance(end, dict) else None
    termination = str(how) if how else "none recorded"
    harness = main.get("harness")
    host = f"  harness: {harness}" if isinstance(harness, str) else ""
    return (f"audit ledger  {main.get('session_id')}{host}  ({events} events, "
            f"termination: {termination})")


def render_text(source: Callable[[], Document], *, colour: bool, effects: bool = False
                ) -> Iterator[str]:
    """The plain (or ANSI-coloured) ledger, one line at a time."""
    doc = source()
    yield title(doc.meta)
    stream = "main"
    for row in iter_rows(_reusing(doc, source), effects=effects):
        if row.stream != stream:
            stream = row.stream
            yield f"-- {stream} --"
        text = row.plain(ran=not effects)
        yield f"\x1b[{ANSI[row.lane]}m{text}\x1b[0m" if colour else text


_CSS = """body{font:14px/1.4 ui-monospace,Menlo,Consolas,monospace;margin:2em;color:#222}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left}
td.seq,td.t{text-align:right;color:#666}tr.lane td.lane{font-weight:bold}
.legend span{display:inline-block;margin-right:1.5em}
""" + "".join(f"tr.l{i} td.lane,.legend .l{i}{{color:{HTML_COLOURS[lane]}}}\n"
              for i, lane in enumerate(LANES))


def render_html(source: Callable[[], Document], *, effects: bool = False) -> Iterator[str]:
    """A self-contained HTML page (no scripts, no external resources)."""
    doc = source()
    heading = html.escape(title(doc.meta))
    yield ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<title>{heading}</title><style>{_CSS}</style></head><body>")
    yield f"<h1>{heading}</h1>"
    yield '<p class="legend">' + "".join(
        f'<span class="l{i}">&#9632; {lane}</span>' for i, lane in enumerate(LANES)) + "</p>"
    yield ("<table><thead><tr><th>stream</th><th>seq</th><th>time</th><th>lane</th>"
           "<th>action</th><th>authorization</th><th>what ran</th></tr></thead><tbody>")
    for row in iter_rows(_reusing(doc, source), effects=effects):
        i = LANES.index(row.lane)
        approval = row.lane == "approval"
        auth = row.detail if approval else f"auth={row.auth}"
        if row.mark:
            auth += f" [{row.mark}]"
        ran = "" if approval else row.detail
        yield (f'<tr class="lane l{i}"><td>{html.escape(row.stream)}</td>'
               f'<td class="seq">{row.sequence}</td><td class="t">+{row.seconds:.1f}s</td>'
               f'<td class="lane">{row.lane}</td><td>{html.escape(row.what)}</td>'
               f"<td>{html.escape(auth)}</td><td>{html.escape(ran)}</td></tr>")
    yield "</tbody></table></body></html>"
