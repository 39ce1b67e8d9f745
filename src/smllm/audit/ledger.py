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

``--effects`` keeps only the side effects — approvals and the calls that may change
something (not model calls, not reads: read-only tools and shell commands the gate's
analyser knows to be read-only) — in seed 000's compact form, without the trailing
column. On a terminal each lane has its colour (unless ``NO_COLOR`` is set); ``--html``
writes a self-contained page; ``--json`` prints one object per row.
"""

from __future__ import annotations

import calendar
import html
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from smllm.audit.export import Document
from smllm.journal import body_of, kind_of

Lane = Literal["model", "tool run", "edit", "approval"]
LANES: tuple[Lane, ...] = ("model", "tool run", "edit", "approval")
EDIT_TOOLS = frozenset({"edit", "write", "multi_edit", "notebook_edit", "edit_file",
                        "write_file", "apply_patch", "str_replace_based_edit_tool"})
#: tools that only read (Claude Code's, by their journal operation names, and common aliases)
READ_TOOLS = frozenset({
    "read", "glob", "grep", "ls", "notebook_read", "web_fetch", "web_search", "todo_write",
    "todo_read", "task", "agent", "tool_search", "skill", "exit_plan_mode", "bash_output",
    "task_output", "list_mcp_resources", "read_mcp_resource", "read_file", "list_files",
    "search_files", "view",
})
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

    def plain(self, *, ran: bool = True) -> str:
        """The row as text; ``ran=False`` drops the trailing what-ran column (seed 000's
        compact form)."""
        head = f"{self.sequence:>4}  +{self.seconds:>6.1f}s  {self.lane:<9}  "
        if self.lane == "approval":
            return f"{head}{self.what}  {self.detail}"
        text = f"{head}{self.what:<9}  auth={self.auth}"
        return f"{text}  {self.detail}" if ran and self.detail else text

    def data(self) -> dict[str, Any]:
        """The row for ``--json``."""
        return {"stream": self.stream, "sequence": self.sequence, "seconds": self.seconds,
                "lane": self.lane, "what": self.what, "auth": self.auth,
                "detail": self.detail or None, "effect": self.effect}

    def with_auth(self, auth: str) -> Row:
        return Row(self.stream, self.sequence, self.seconds, self.lane, self.what,
                   self.detail, auth, self.effect)


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
    for key in ("command", "file_path", "path", "url"):
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
        for key in ("command", "file_path", "notebook_path", "path", "url", "pattern", "query"):
            if isinstance(tool_input.get(key), str):
                return shorten(str(tool_input[key]))
        import json  # noqa: PLC0415 - the CLI's slow path

        return shorten(json.dumps(tool_input, ensure_ascii=False, separators=(",", ":")))
    return shorten(str(tool_input)) if tool_input is not None else ""


def is_effect(tool: str, tool_input: object, cwd: str) -> bool:
    """May this call change something? False for read-only tools and for shell commands
    that the gate's analyser knows to be read-only."""
    if tool in READ_TOOLS:
        return False
    if tool != "bash" or not isinstance(tool_input, dict):
        return True
    command = tool_input.get("command")
    if not isinstance(command, str):
        return True
    from smllm.gate.shell import analyse  # noqa: PLC0415 - only for shell rows

    analysis = analyse(command, cwd=cwd or "/")
    read_only = bool(analysis.commands) and not analysis.all_findings() and all(
        c.known_safe for c in analysis.commands)
    return not read_only


def _row(stream: str, seq: int, secs: float, kind: str | None,
         body: dict[str, Any], *, cwd: str) -> Row | None:
    if kind == "model.call":
        return Row(stream, seq, secs, "model", str(body.get("model") or "?"), "",
                   "not_applicable")
    if kind == "side_effect_intent":
        tool = tool_of(body)
        lane: Lane = "edit" if tool in EDIT_TOOLS else "tool run"
        tool_input = body.get("input")
        return Row(stream, seq, secs, lane, tool, ran_text(tool, tool_input),
                   str(body.get("policy_decision")), is_effect(tool, tool_input, cwd))
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
_DEFERRED = ("defer:", "ask:")


def rows(doc: Document, *, effects: bool = False) -> list[Row]:
    """The ledger rows of an export, in sequence order (streams in export order);
    ``effects`` keeps only the side effects.

    Under ``authority = "guard"`` an intent's stamp (``defer:host``, ``ask:user``) says
    that Claude Code's own permissions decide; who actually allowed the call is on its
    terminal record (``authorized_by``), which gives the row its ``auth``
    (``allow:host``, ``allow:user``, …); one whose outcome was never recorded keeps its
    stamp.
    """
    t0: dict[str, int] = {}
    cwd: dict[str, str] = {}
    order: dict[str, int] = {}
    found: list[Row] = []
    deferred: dict[tuple[str, str], int] = {}  # (stream, tool_use_id) -> index in found
    for ev in doc.events:
        if ev.get("kind") != "record" or not isinstance(ev.get("envelope"), dict):
            continue
        env = ev["envelope"]
        stream = str(ev.get("stream", "main"))
        order.setdefault(stream, len(order))
        ms = parse_ms(env.get("recorded_at"))
        if ms is not None:
            t0.setdefault(stream, ms)
        secs = ((ms or 0) - t0.get(stream, ms or 0)) / 1000
        kind, body = kind_of(env), body_of(env)
        if kind == "session.start" and isinstance(body.get("cwd"), str):
            cwd.setdefault(stream, body["cwd"])
        tool_use_id = body.get("tool_use_id")
        if kind == "tool_batch.effect.terminal" and isinstance(tool_use_id, str):
            index = deferred.pop((stream, tool_use_id), None)
            who = body.get("authorized_by")
            if index is not None and isinstance(who, str):
                found[index] = found[index].with_auth(who)
            continue
        row = _row(stream, int(env.get("sequence", 0)), secs, kind, body,
                   cwd=cwd.get(stream) or cwd.get("main", ""))
        if row is None or (effects and not row.effect):
            continue
        if (kind == "side_effect_intent" and isinstance(tool_use_id, str)
                and str(row.auth).startswith(_DEFERRED)):
            deferred[(stream, tool_use_id)] = len(found)
        found.append(row)
    found.sort(key=lambda r: (order[r.stream], r.sequence))
    return found


def title(meta: dict[str, Any]) -> str:
    """``audit ledger  <session id>  (<n> events, termination: <how>)``."""
    sessions = meta.get("sessions") or [{}]
    main = sessions[0] if isinstance(sessions[0], dict) else {}
    events = sum(int(s.get("lines", 0)) for s in sessions if isinstance(s, dict))
    end = main.get("session_end")
    how = end.get("exit_reason") if isinstance(end, dict) else None
    termination = str(how) if how else "none recorded"
    return f"audit ledger  {main.get('session_id')}  ({events} events, termination: {termination})"


def render_text(doc: Document, *, colour: bool, effects: bool = False) -> Iterator[str]:
    """The plain (or ANSI-coloured) ledger, one line at a time."""
    yield title(doc.meta)
    stream = "main"
    for row in rows(doc, effects=effects):
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


def render_html(doc: Document, *, effects: bool = False) -> Iterator[str]:
    """A self-contained HTML page (no scripts, no external resources)."""
    heading = html.escape(title(doc.meta))
    yield ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           f"<title>{heading}</title><style>{_CSS}</style></head><body>")
    yield f"<h1>{heading}</h1>"
    yield '<p class="legend">' + "".join(
        f'<span class="l{i}">&#9632; {lane}</span>' for i, lane in enumerate(LANES)) + "</p>"
    yield ("<table><thead><tr><th>stream</th><th>seq</th><th>time</th><th>lane</th>"
           "<th>action</th><th>authorization</th><th>what ran</th></tr></thead><tbody>")
    for row in rows(doc, effects=effects):
        i = LANES.index(row.lane)
        approval = row.lane == "approval"
        auth = row.detail if approval else f"auth={row.auth}"
        ran = "" if approval else row.detail
        yield (f'<tr class="lane l{i}"><td>{html.escape(row.stream)}</td>'
               f'<td class="seq">{row.sequence}</td><td class="t">+{row.seconds:.1f}s</td>'
               f'<td class="lane">{row.lane}</td><td>{html.escape(row.what)}</td>'
               f"<td>{html.escape(auth)}</td><td>{html.escape(ran)}</td></tr>")
    yield "</tbody></table></body></html>"
