"""``smllm chain``: seed 000's approval evidence chain, from an export.

One chain per ``pending_action_id``, in the order the records landed:

requested (``approval.review``) → wait (``approval_wait.effect.started``) →
resolved (``stage_requirement_resolved``) → decision (``decision_applied``, with its
``decision_source``) → discharged (``approval_wait.effect.terminal``) → intent
(``side_effect_intent``, stamped with ``policy_decision``) → started
(``tool_batch.effect.started``, threaded to the intent by ``intent_sequence``) →
result (``tool_batch.effect.terminal``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from smllm.audit.export import Document
from smllm.audit.ledger import action_text, parse_ms
from smllm.base.shapes import Record
from smllm.journal import body_of, kind_of

STEPS: dict[str, str] = {
    "approval.review": "requested",
    "approval_wait.effect.started": "wait",
    "stage_requirement_resolved": "resolved",
    "decision_applied": "decision",
    "approval_wait.effect.terminal": "discharged",
    "side_effect_intent": "intent",
    "tool_batch.effect.started": "started",
    "tool_batch.effect.terminal": "result",
}
_EFFECT = ("tool_batch.effect.started", "tool_batch.effect.terminal")


@dataclass(frozen=True)
class Step:
    sequence: int
    seconds: float
    step: str
    kind: str
    detail: str

    def render(self) -> str:
        return (f"{self.sequence:>4}  +{self.seconds:>6.1f}s  {self.step:<10}  "
                f"{self.kind:<29}  {self.detail}").rstrip()


@dataclass
class Chain:
    pending_action_id: str
    action: str = "?"
    steps: list[Step] = field(default_factory=list)
    #: the agent CLI when not Claude Code (the export's summary names it)
    harness: str | None = None

    def render(self) -> str:
        host = f"  ({self.harness})" if self.harness else ""
        lines = [f"approval chain  {self.pending_action_id}  {self.action}{host}"]
        lines += [s.render() for s in self.steps]
        return "\n".join(lines)

    def data(self) -> dict[str, Any]:
        """The chain for ``--json``."""
        return {"pending_action_id": self.pending_action_id, "action": self.action,
                **({"harness": self.harness} if self.harness else {}),
                "steps": [{"sequence": s.sequence, "seconds": s.seconds, "step": s.step,
                           "kind": s.kind, "detail": s.detail} for s in self.steps]}


def _source(src: Any) -> str:
    if not isinstance(src, dict):
        return f"by {src}" if src else "by unknown"
    extra = "  ".join(f"{k}={src[k]}" for k in ("prompt_version", "params_version",
                                                  "context_digest", "observed_via") if k in src)
    inferred = f"  (inferred: {src['inferred']})" if src.get("inferred") else ""
    return f"by {src.get('kind')}" + (f"  {extra}" if extra else "") + inferred


def describe(kind: str, body: dict[str, Any]) -> str:  # noqa: PLR0911 - one case per step
    """The one-line detail of a chain step."""
    if kind == "approval.review":
        choices = body.get("choices")
        listed = ", ".join(map(str, choices)) if isinstance(choices, list) else "?"
        reviewers = body.get("reviewers") or body.get("reviewer")
        who = ", ".join(map(str, reviewers)) if isinstance(reviewers, list) else reviewers
        rule = f"  rule: {body['rule']}" if body.get("rule") else ""
        return f"{action_text(body)}  choices: {listed}  reviewers: {who}{rule}"
    if kind == "approval_wait.effect.started":
        return "the run blocks; the tool has not run"
    if kind == "stage_requirement_resolved":
        parts = [f"{k} {body[k]}" for k in ("stage", "requirement", "outcome", "resolved",
                                             "choice", "detail", "error") if body.get(k)]
        return ", ".join(parts)
    if kind == "decision_applied":
        choice = f", choice {body['choice']}" if body.get("choice") else ""
        return (f"{body.get('decision')} (policy_result {body.get('policy_result')}{choice}) "
                f"{_source(body.get('decision_source'))}")
    if kind == "approval_wait.effect.terminal":
        return f"outcome {body.get('outcome')}; the wait is discharged"
    if kind == "side_effect_intent":
        return f"{body.get('operation')}  policy_decision={body.get('policy_decision')}"
    if kind == "tool_batch.effect.started":
        return "the effect runs only now"
    return f"outcome {body.get('outcome')}"


def chains(doc: Document) -> Iterator[Chain]:
    """Every approval chain of the export, in order of its first record."""
    found: dict[str, Chain] = {}
    by_intent: dict[tuple[str, int], str] = {}
    t0: dict[str, int] = {}
    sessions = doc.meta.get("sessions") or [{}]
    harness = sessions[0].get("harness") if isinstance(sessions[0], dict) else None
    for ev in doc.events:
        if ev.get("kind") != "record" or not isinstance(ev.get("envelope"), dict):
            continue
        env: Record = ev["envelope"]
        stream = str(ev.get("stream", "main"))
        ms = parse_ms(env.get("recorded_at"))
        if ms is not None:
            t0.setdefault(stream, ms)
        kind = kind_of(env)
        if kind not in STEPS:
            continue
        body = body_of(env)
        seq = int(env.get("sequence", 0))
        pid = body.get("pending_action_id")
        if kind in _EFFECT:
            pid = by_intent.get((stream, body.get("intent_sequence") or -1))
        if not isinstance(pid, str) or not pid:
            continue
        chain = found.setdefault(pid, Chain(pid, harness=harness if isinstance(harness, str)
                                                 else None))
        if kind == "approval.review":
            chain.action = action_text(body)
        if kind == "side_effect_intent":
            by_intent[(stream, seq)] = pid
        secs = ((ms or 0) - t0.get(stream, ms or 0)) / 1000
        chain.steps.append(Step(seq, secs, STEPS[kind], kind, describe(kind, body)))
    yield from found.values()
