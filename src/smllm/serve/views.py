"""What the pages show, built from records: timeline rows, side effects, approval chains.

Every value taken from a journal passes through a :class:`Redactor` here (the
:mod:`smllm.base.secrets` rules, unless the viewer runs with ``--raw``). The templates
escape whatever they print; :func:`visible` also makes control characters (terminal
escapes, bidirectional overrides) show as ``\\x1b``-style text instead of acting.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from smllm import journal
from smllm.audit import approvals
from smllm.audit.export import KNOWN_KINDS
from smllm.audit.ledger import HTML_COLOURS, action_text, is_edit, parse_ms, tool_of
from smllm.audit.ledger import effect_status as ledger_status
from smllm.base import secrets as redact
from smllm.serve.sessionscan import ChainIndex, Effect, SessionScan, StreamScan, what_ran

if TYPE_CHECKING:
    from smllm.base.shapes import Record

SUMMARY_LIMIT = 400
#: lanes of the timeline: the ledger's four, then the rest
LANES = ("model", "tool run", "edit", "approval", "prompt", "session", "host", "other",
         "broken")
LANE_COLOURS: dict[str, str] = {**dict(HTML_COLOURS.items()), "prompt": "#0e7c86",
                                "session": "#555555", "host": "#8a8a8a", "other": "#8a8a8a",
                                "broken": "#c0392b"}
_C0_C1 = (*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f, *range(0x80, 0xa0))
_CONTROL: dict[int, str] = {c: f"\\x{c:02x}" for c in _C0_C1}
_CONTROL.update({c: f"\\u{c:04x}" for c in (0x200e, 0x200f, *range(0x202a, 0x202f),
                                            *range(0x2066, 0x206a))})


def visible(text: object) -> str:
    """``text`` with control characters and bidi overrides written out as escapes."""
    return str(text).translate(_CONTROL)


def moment(at: str | None) -> Markup:
    """A journal timestamp, short (``2026-08-02 10:15:07``, UTC), the whole of it in the
    element's ``datetime`` and ``title``."""
    if not at:
        return Markup("")
    short = at[:19].replace("T", " ") if len(at) >= 19 and at[10] == "T" else at
    return Markup('<time class="when" datetime="%s" title="%s">%s</time>') % (
        visible(at), f"{visible(at)} (UTC)", visible(short))


#: a part of a word longer than this may wrap anywhere (it would not fit a line anyway)
LONG_PART = 40


def _parts(word: str) -> Markup:
    """One word (no whitespace) that may wrap after a ``/`` only: each part up to and
    including a slash in a span that does not wrap, a ``<wbr>`` between them."""
    parts = word.split("/")
    pieces = [p + "/" for p in parts[:-1]] + [parts[-1]]
    return Markup("<wbr>").join(
        Markup("<span class=\"nw\">%s</span>") % s if len(s) <= LONG_PART else escape(s)
        for s in pieces if s)


def path(text: object) -> Markup:
    """A file path, wrapped after a ``/`` only (never at a ``-`` or inside a name). The text
    copied from the page is the path."""
    return Markup('<span class="path">%s</span>') % _parts(visible(text))


def wrapping(text: object) -> Markup:
    """A command or other text of words and paths: a line wraps at a space, or after a
    ``/`` inside a word, never at a ``-`` (``report-001``); the text is unchanged."""
    return Markup("").join(escape(w) if not w or w.isspace() else _parts(w)
                           for w in re.split(r"(\s+)", visible(text)))


class Redactor:
    """Redaction as the viewer was started: the export's rules, or nothing with --raw."""

    def __init__(self, raw: bool) -> None:
        self.raw = raw

    def text(self, value: str) -> str:
        return value if self.raw else redact.redact_text(value)

    def value(self, value: Any) -> Any:
        return value if self.raw else redact.redact_value(value)

    def record(self, rec: Record) -> Record:
        if self.raw or "payload" not in rec:
            return rec
        out = rec.copy()
        out["payload"] = redact.redact_value(rec["payload"])
        return out


def clip(text: str, limit: int = SUMMARY_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = SUMMARY_LIMIT) -> str:
    return clip(" ".join(text.split()), limit)


def cut(text: str, limit: int = SUMMARY_LIMIT) -> tuple[str, str | None]:
    """``text`` on one line, cut to ``limit``; and the whole line when it was cut (None
    when nothing was left out), for the page to show on demand."""
    flat = " ".join(text.split())
    return (flat, None) if len(flat) <= limit else (clip(flat, limit), flat)


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False)


# --------------------------------------------------------------------- timeline


@dataclass
class Row:
    """One line of a log on the timeline."""

    stream: str
    line: int
    sequence: int | None
    recorded_at: str | None
    seconds: float | None
    lane: str
    kind: str
    summary: str
    detail: str
    marks: list[str] = field(default_factory=list)
    #: the whole summary when ``summary`` was cut short (with "…"), else None
    whole: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"stream": self.stream, "line": self.line, "sequence": self.sequence,
                "recorded_at": self.recorded_at, "lane": self.lane, "kind": self.kind,
                "summary": self.summary, "marks": self.marks}


@dataclass
class Fold:
    """Consecutive model calls, shown as one line that opens."""

    rows: list[Row]

    @property
    def lane(self) -> str:
        return "model"

    @property
    def first(self) -> Row:
        return self.rows[0]

    def summary(self) -> str:
        models = sorted({r.summary.split(" · ", 1)[0] for r in self.rows})
        return f"{len(self.rows)} model calls · {', '.join(models)}"


#: the model Claude Code names in an assistant message it wrote itself (older journals
#: recorded them as model calls; smllm no longer does)
SYNTHETIC = "<synthetic>"


def _lane(kind: str, body: dict[str, Any]) -> str:  # noqa: PLR0911 - one case per family
    if kind == "model.call":
        return "host" if body.get("model") == SYNTHETIC else "model"
    if kind in ("side_effect_intent", "tool_batch.effect.started",
                "tool_batch.effect.terminal", "effect.reconciled"):
        return "edit" if is_edit(tool_of(body)) else "tool run"
    if kind.startswith(("approval", "stage_requirement", "decision_applied",
                        "policy.amendment")):
        return "approval"
    if kind in ("proposed", "accepted", "completed", "stop_blocked"):
        return "prompt"
    if kind.startswith(("session.", "subagent.")):
        return "session"
    if kind == "host.event":
        return "host"
    return "other"


def _tokens(usage: Any) -> str:
    if not isinstance(usage, dict):
        return ""
    return f" · {usage.get('input_tokens', '?')} in / {usage.get('output_tokens', '?')} out"


def summarize(kind: str, body: dict[str, Any]) -> str:  # noqa: C901, PLR0911, PLR0912
    """One line saying what a record records (values already redacted)."""
    if kind == "model.call" and body.get("model") == SYNTHETIC:
        return ("a message Claude Code wrote itself (model <synthetic>, after a crash or an "
                "API error): not a model call")
    if kind == "model.call":
        tools = body.get("tool_use_ids")
        n = len(tools) if isinstance(tools, list) else 0
        text = body.get("text")
        said = f" — {text}" if isinstance(text, str) and text.strip() else ""
        return (f"{body.get('model') or '?'} · {body.get('stop_reason') or '?'}"
                f"{_tokens(body.get('usage'))}" + (f" · {n} tool use(s)" if n else "") + said)
    if kind == "side_effect_intent":
        rule = f" ({body['rule']})" if body.get("rule") else ""
        return f"{tool_of(body)}: {what_ran(body)} — {body.get('policy_decision')}{rule}"
    if kind == "tool_batch.effect.started":
        return f"{tool_of(body)} started: the effect runs now"
    if kind == "tool_batch.effect.terminal":
        who = f", authorized by {body['authorized_by']}" if body.get("authorized_by") else ""
        return (f"{tool_of(body)} {body.get('outcome')} (observed via "
                f"{body.get('observed_via')}{who})")
    if kind == "effect.reconciled":
        return (f"reconciled: intent {body.get('intent_sequence')} {body.get('outcome')}, "
                f"verified by {body.get('verified_by')}")
    if kind in approvals.STEPS:
        return approvals.describe(kind, body)
    if kind == "proposed":
        return f"prompt (turn {body.get('turn')}): {body.get('prompt') or ''}"
    if kind in ("accepted", "completed"):
        return f"turn {body.get('turn')} {kind}"
    if kind == "stop_blocked":
        return f"stop blocked (turn {body.get('turn')}): {body.get('reason') or ''}"
    if kind == "session.start":
        model = f", model {body['model']}" if body.get("model") else ""
        return f"session started ({body.get('source')}) in {body.get('cwd')}{model}"
    if kind == "session.end":
        return f"session ended: {body.get('exit_reason')}"
    if kind == "session.resumed":
        return f"session resumed; unknown effects: {body.get('unknown_effects')}"
    if kind in ("subagent.started", "subagent.stopped"):
        return f"subagent {body.get('agent_id')} {kind.split('.')[1]}"
    if kind == "host.event":
        return f"{body.get('hook_event_name')}: {body.get('message') or ''}"
    if kind == "policy.amendment":
        return f"policy amendment {body.get('action')}: {body.get('rule') or ''}"
    return journal_kind_note(kind)


def journal_kind_note(kind: str) -> str:
    return kind if kind in KNOWN_KINDS else f"{kind} (a record kind this viewer does not know)"


def row_of(stream: str, line: int, raw: bytes, redactor: Redactor,
           t0: int | None) -> Row:
    """The timeline row of one physical line."""
    rec = journal.parse_line(raw)
    if rec is None:
        text = redactor.text(raw.decode("utf-8", "backslashreplace"))
        return Row(stream, line, None, None, None, "broken", "unparseable",
                   one_line(text), text, ["unparseable"])
    rec = redactor.record(rec)
    kind = journal.kind_of(rec) or "?"
    body = journal.body_of(rec)
    at = rec.get("recorded_at") if isinstance(rec.get("recorded_at"), str) else None
    ms = parse_ms(at)
    secs = (ms - t0) / 1000 if ms is not None and t0 is not None else None
    marks = []
    if kind == "tool_batch.effect.terminal" and body.get("observed_via") == "reconcile":
        marks.append("reconciled")
    if kind == "effect.reconciled":
        marks.append("reconciled")
    if kind not in KNOWN_KINDS:
        marks.append("unknown kind")
    summary, whole = cut(summarize(kind, body))
    return Row(stream, line, int(rec["sequence"]), at, secs, _lane(kind, body), kind,
               summary, pretty(rec), marks, whole)


def timeline(stream: StreamScan, first: int, count: int, redactor: Redactor,
             *, fold: bool = True) -> list[Row | Fold]:
    """Lines ``first`` .. of ``stream`` as rows; runs of model calls folded."""
    t0 = parse_ms(stream.tally.first_recorded_at)
    out: list[Row | Fold] = []
    for number, raw in stream.read_lines(first, count):
        row = row_of(stream.name, number, raw, redactor, t0)
        if fold and row.lane == "model":
            last = out[-1] if out else None
            if isinstance(last, Fold):
                last.rows.append(row)
                continue
            if isinstance(last, Row) and last.lane == "model":
                out[-1] = Fold([last, row])
                continue
        out.append(row)
    return out


# --------------------------------------------------------------------- effects


def effect_status(effect: Effect, running: bool) -> str:
    """``succeeded``, ``failed``…, or: ``denied``, ``unknown``, ``in flight``, ``not run``:
    the ledger's rule (:func:`smllm.audit.ledger.effect_status`)."""
    return ledger_status(decision=effect.decision, started=effect.started is not None,
                         finished=effect.terminal_line is not None, outcome=effect.outcome,
                         running=running)


def effect_view(effect: Effect, running: bool, redactor: Redactor) -> dict[str, Any]:
    """A side effect as the page and its JSON show it."""
    status = effect_status(effect, running)
    who = effect.authorized_by or effect.decision
    what = redactor.text(effect.what)
    return {
        "stream": effect.stream, "line": effect.line, "sequence": effect.sequence,
        "tool": effect.tool, "edit": effect.edit,
        "what": clip(what, 2000), "what_whole": what if len(what) > 2000 else None,
        "decision": effect.decision, "authorized_by": who, "rule": effect.rule,
        "reason": redactor.text(effect.reason) if effect.reason else None,
        "pending_action_id": effect.pending_action_id, "started": effect.started,
        "outcome": status, "observed_via": effect.observed_via,
        "unknown": status == "unknown",
        "reconciled": effect.observed_via == "reconcile" or effect.reconciled_line is not None,
    }


# --------------------------------------------------------------------- approval chains


def chain_summary(chain: ChainIndex, redactor: Redactor) -> dict[str, Any]:
    action = chain.action if isinstance(chain.action, dict) else {}
    shown, whole = cut(action_text(redactor.value(action))) if action else ("?", None)
    return {"pending_action_id": chain.pending_action_id, "stream": chain.stream,
            "action": shown, "action_whole": whole,
            "rule": action.get("rule"), "decision": chain.decision,
            "decided_by": chain.decided_by, "intent_sequence": chain.intent_sequence}


_JUDGE_FIELDS = ("kind", "model", "prompt_version", "params_version", "context_digest",
                 "observed_via", "inferred")


def chain_view(scan: SessionScan, chain: ChainIndex, redactor: Redactor) -> dict[str, Any]:
    """Every step of one approval chain, in order, with what the reviewer saw and said."""
    stream = scan.stream(chain.stream)
    assert stream is not None
    t0 = parse_ms(stream.tally.first_recorded_at)
    steps = []
    source: dict[str, Any] = {}
    for line in sorted(set(chain.lines)):
        raw = stream.read_line(line)
        rec = journal.parse_line(raw) if raw is not None else None
        if rec is None:
            continue
        rec = redactor.record(rec)
        kind = journal.kind_of(rec) or "?"
        body = journal.body_of(rec)
        ms = parse_ms(rec.get("recorded_at"))
        if kind == "decision_applied" and isinstance(body.get("decision_source"), dict):
            src = body["decision_source"]
            source = {k: src[k] for k in _JUDGE_FIELDS if k in src}
            source["reason"] = body.get("reason")
            source["decision"] = body.get("decision")
            source["choice"] = body.get("choice")
        detail, whole = cut(approvals.describe(kind, body), 1000)
        steps.append({
            "line": line, "sequence": rec.get("sequence"), "step": approvals.STEPS.get(kind, kind),
            "kind": kind, "recorded_at": rec.get("recorded_at"),
            "seconds": (ms - t0) / 1000 if ms is not None and t0 is not None else None,
            "detail": detail, "whole": whole, "record": pretty(rec),
        })
    return {**chain_summary(chain, redactor), "steps": steps, "decision_source": source}
