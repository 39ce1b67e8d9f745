"""Every record kind smllm writes: one table that every writer and reader goes through.

A kind is an *event* (``payload.event.kind``, ``payload_type`` null) or a *fact*
(``payload_type`` set, ``payload = {kind, record}``); see :mod:`smllm.journal.log`.
Writers build their entries with :func:`new` (or one of the builders below, for a
record several writers share), which refuses a kind that is not in :data:`KINDS` or
fields a kind requires but were not given. Readers name kinds from this table too:
``smllm export`` counts any other kind as ``unknown_payload_kinds``, and the tests check
the table against ``docs/concepts/journal.md`` and against the kinds the writers
actually produce, so a kind cannot be added in one place only.

This module is on every hook's path: standard library only, no ``typing`` at run time.
"""

from __future__ import annotations

from smllm.base.errors_hot import JournalError
from smllm.journal.codec import Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    RecordType = Literal["event", "fact"]
    Choice = Literal["allow_once", "always_allow_in_workspace", "reject"]


#: every kind -> (event or fact, the fields every record of it holds), in the order a
#: session meets them (docs/concepts/journal.md follows it)
KINDS: dict[str, tuple[RecordType, tuple[str, ...]]] = {
    "session.start": ("fact", ("session_id", "source", "host")),
    "session.resumed": ("fact", ("session_id", "prior_turn_count", "resumed_from_sequence",
                                 "crash_inferred", "unknown_effects")),
    "session.compacted": ("fact", ("session_id",)),
    "proposed": ("event", ("turn", "prompt")),
    "accepted": ("event", ("turn", "proposed_sequence")),
    "model.call": ("event", ("message_id", "model", "stop_reason", "usage", "tool_use_ids",
                             "text", "thinking")),
    "approval.review": ("fact", ("state", "pending_action_id", "tool_use_id", "operation",
                                 "tool_name", "action", "choices", "reviewers")),
    "approval_wait.effect.started": ("fact", ("pending_action_id", "tool_use_id", "reviewers")),
    "stage_requirement_resolved": ("fact", ("pending_action_id", "stage", "outcome")),
    "decision_applied": ("fact", ("pending_action_id", "decision", "policy_result",
                                  "decision_source")),
    "policy.amendment": ("fact", ("action", "id", "workspace", "tool_name", "match")),
    "approval_wait.effect.terminal": ("fact", ("pending_action_id", "outcome", "tool_use_id")),
    "side_effect_intent": ("event", ("operation", "tool_name", "tool_use_id", "idempotency_key",
                                     "policy_decision", "rule", "reason", "pending_action_id",
                                     "input")),
    "tool_batch.effect.started": ("fact", ("tool_use_id", "idempotency_key", "intent_sequence",
                                           "operation")),
    "tool_batch.effect.terminal": ("fact", ("tool_use_id", "idempotency_key", "intent_sequence",
                                            "operation", "outcome", "observed_via")),
    "effect.reconciled": ("fact", ("tool_use_id", "idempotency_key", "intent_sequence",
                                   "operation", "outcome", "verified_by", "terminal_sequence")),
    "completed": ("event", ("turn",)),
    "stop_blocked": ("event", ("turn", "reason")),
    "subagent.started": ("fact", ("agent_id", "agent_type", "journal")),
    "subagent.stopped": ("fact", ("agent_id", "agent_type", "journal", "child_sequence")),
    "session.end": ("fact", ("exit_reason", "uptime_ms", "host_reason")),
    "host.event": ("fact", ("session_id",)),
    "hook.input_rejected": ("fact", ("hook_event_name", "reason", "input_bytes")),
    "journal.tail_missing": ("fact", ("missing", "log_ended_at", "head_sequence", "head_hash",
                                      "observed_via")),
    "tripwire.adopted": ("fact", ("paths", "reason", "observed_via")),
    "tripwire.violation": ("fact", ("violation_id", "path", "change", "restored", "before",
                                    "after", "observed_via", "preceding")),
    "tripwire.resolved": ("fact", ("violation_id", "path", "resolution", "by", "kept")),
}

#: the choices a reviewer may answer (``approval.review`` lists them)
CHOICES: tuple[Choice, ...] = ("allow_once", "always_allow_in_workspace", "reject")


def new(name: str, /, **fields: Any) -> Entry:
    """The entry for one record of kind ``name``; refuses unknown kinds and missing fields."""
    kind = KINDS.get(name)
    if kind is None:
        raise JournalError(f"unknown record kind {name!r}",
                           "add it to smllm.journal.records.KINDS and docs/concepts/journal.md")
    record_type, required = kind
    missing = [f for f in required if f not in fields]
    if missing:
        raise JournalError(f"a {name} record needs {', '.join(missing)}")
    if record_type == "event":
        return Entry({"event": {"kind": name, **fields}})
    return Entry({"kind": name.replace(".", "_"), "record": fields}, name)


# --------------------------------------------------------------------- shared records


def approval_requested(  # noqa: PLR0917 - the fields of one record
    pending_action_id: str, tool_use_id: str | None, operation: str, tool_name: object,
    action: object, reviewers: list[str], *, rule: str | None = None,
    rule_source: str | None = None, reason: str | None = None,
    permission_suggestions: object = None, observed_via: str | None = None,
) -> Entry:
    """``approval.review`` ``requested``: by the gate (its chain) or Claude Code's prompt."""
    extra = {} if observed_via is None else {"observed_via": observed_via}
    return new(
        "approval.review",
        state="requested",
        pending_action_id=pending_action_id,
        tool_use_id=tool_use_id,
        operation=operation,
        tool_name=tool_name,
        action=action,
        choices=list(CHOICES),
        reviewers=reviewers,
        rule=rule,
        rule_source=rule_source,
        reason=reason,
        permission_suggestions=permission_suggestions,
        **extra,
    )


def prompt_answer(pending_action_id: str, tool_use_id: str, *, approved: bool,
                  observed_via: str, by_person: bool = True,
                  host_said: str | None = None,
                  permission: dict[str, Any] | None = None) -> list[Entry]:
    """The answer to Claude Code's prompt, inferred from the call running or not:
    ``decision_applied`` then ``approval_wait.effect.terminal``. A refusal is the person's
    only where the host says a person refused (``by_person``); else Claude Code refused on
    its own (``kind: host``, with what it said). ``permission`` is Claude Code's own
    ``permissionDecision`` of the call, from the transcript, when it was read there."""
    verdict = "approved" if approved else "rejected"
    inferred = ("the call ran after Claude Code's prompt" if approved
                else "a person refused the call at Claude Code's prompt" if by_person
                else "Claude Code refused the call without a person's answer")
    source: dict[str, Any] = {"kind": "user" if by_person else "host",
                              "observed_via": observed_via, "inferred": inferred}
    if not by_person:
        source["host_said"] = host_said
    if permission is not None:
        source["host_permission_decision"] = permission
    return [
        new("decision_applied", pending_action_id=pending_action_id, decision=verdict,
            policy_result="allow" if approved else "deny", decision_source=source),
        new("approval_wait.effect.terminal", pending_action_id=pending_action_id,
            outcome=verdict, tool_use_id=tool_use_id),
    ]
