"""A call Claude Code decides: its records in causal order, whichever hook lands first.

smllm decides some calls itself (``allow:policy``, ``allow:llm_judge``, a deny): then the
authorization is known at PreToolUse, which writes the intent and
``tool_batch.effect.started`` before the tool may run. Other calls it leaves to Claude
Code (``defer:host`` under ``authority = "guard"``, ``ask:user``, ``allow:yolo``): Claude
Code may run them at once, show its prompt (PermissionRequest) or refuse them, and its
PermissionRequest hook runs *while* the person answers, so it can land before or after
PostToolUse. For those calls:

* PreToolUse writes the intent only (the authorization is not known yet);
* PermissionRequest writes what it observed when it observed it: the prompt
  (``approval.review`` requested, ``approval_wait.effect.started``);
* PostToolUse writes nothing yet: it keeps what it observed (the outcome, the output, when)
  in the sidecar, under the session lock (:func:`observe`);
* the transcript's ``tool_result`` line of the call, which Claude Code writes after
  PostToolUse and which carries its own ``permissionDecision`` (who decided: ``user_*``,
  ``config``, ``hook``), closes the call (:func:`close`): the prompt's answer
  (``decision_applied`` + ``approval_wait.effect.terminal``), then
  ``tool_batch.effect.started`` (marked ``inferred``: the call ran, PostToolUse saw it) and
  ``tool_batch.effect.terminal``, or the refusal's terminal alone.

So the journal is the same whichever of PermissionRequest and PostToolUse takes the lock
first. A prompt the transcript shows answered by a person with no PermissionRequest
recorded yet gets its ``approval.review`` there (``observed_via: transcript``), and the late
PermissionRequest then adds nothing (:func:`closed_match`). Without a transcript (or at the
session's end, or a resume after a crash) the call closes on what was observed, marked
``inferred``; a prompt still open at a crash closes ``unknown``.

Hot path: standard library only.
"""

from __future__ import annotations

from smllm.base import clock, jsonfast
from smllm.base.digest import tagged
from smllm.journal import records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm import journal
    from smllm.base.shapes import OpenIntent

#: what PreToolUse answers when Claude Code, not smllm, decides whether the call runs
HOST_DECISIONS = ("abstain", "ask")
#: the intent stamps of such calls (readers and the sidecar rebuild know them by these)
HOST_STAMPS = ("defer:host", "ask:user", "allow:yolo")
#: how many closed calls are remembered for a PermissionRequest that lands after them
CLOSED_MEMORY = 16
#: what Claude Code's tool_result says when a person answered its prompt with "no"; any
#: other refusal (``claude -p``, where nobody can answer, or a rule) is the host's own
USER_REFUSALS = ("The user doesn't want to proceed with this tool use",
                 "The user doesn't want to take this action")


def refused_by_person(detail: str) -> bool:
    """Does a refusal's tool_result show a person refusing (not the host on its own)?"""
    return any(text in detail for text in USER_REFUSALS)


def host_decides(intent: OpenIntent) -> bool:
    """Does Claude Code decide this open call (no ``tool_batch.effect.started`` yet)?"""
    return bool(intent.get("host"))


def input_digest(tool_name: object, tool_input: object) -> str:
    """What a PermissionRequest (which has no tool_use_id) is matched on."""
    return tagged(jsonfast.dumps([tool_name, tool_input]).encode("utf-8"))


def waits_on_user(intent: OpenIntent) -> str | None:
    """The review of Claude Code's prompt this open intent waits on (its pending action id):
    the host showed its prompt (PermissionRequest) or smllm escalated with ``ask``."""
    pending = intent.get("pending")
    if pending and (intent.get("prompted") or intent.get("decision") == "ask:user"):
        return str(pending)
    return None


def _who(permission: object, prompted: bool, approved: bool, detail: str) -> tuple[str, str]:
    """(``user`` or ``host``, how it is known): Claude Code's own ``permissionDecision``
    in the transcript when it has one (``source`` ``user_…`` is a person), else inferred."""
    if isinstance(permission, dict) and isinstance(permission.get("source"), str):
        person = permission["source"].startswith("user")
        return ("user" if person else "host"), "transcript permissionDecision"
    if approved:
        return ("user" if prompted else "host"), "inferred"
    return ("user" if prompted and refused_by_person(detail) else "host"), "inferred"


def observe(intent: OpenIntent, event: str, outcome: str, result: dict[str, Any], *,
            duration_ms: object, scripts_after: object) -> OpenIntent:
    """PostToolUse's observation of a host-decided call, kept until the call closes."""
    from smllm.journal.codec import omit_large  # noqa: PLC0415 - host-decided calls only

    kept, _ = omit_large(result)
    return {**intent, "ran": {"event": event, "outcome": outcome, "result": kept,
                              "duration_ms": duration_ms, "scripts_after": scripts_after,
                              "at": clock.iso_utc(clock.now_ms())}}


def close(txn: journal.Transaction, intent: OpenIntent, tid: str, key: str | None,
          result: dict[str, Any] | None, *, observed_via: str) -> dict[str, Any]:
    """Write the records that close a host-decided call; what to remember of it."""
    ran = intent.get("ran")
    permission = (result or {}).get("permission")
    detail = str((result or {}).get("preview", ""))
    denied = isinstance(permission, dict) and permission.get("decision") == "reject"
    approved = ran is not None or (result is not None and not result.get("is_error")
                                   and not denied)
    pending = waits_on_user(intent)
    who, known = _who(permission, pending is not None, approved, detail)
    reviewed = pending is not None
    if pending is None and who == "user":  # the transcript shows the prompt: no hook did
        pending = clock.new_id("pa-")
        txn.append(records.approval_requested(
            pending, tid, str(intent.get("operation")), intent.get("tool_name"),
            intent.get("input"), ["user"],
            reason="Claude Code's prompt, seen answered in the transcript",
            observed_via="transcript"))
        txn.append(records.new("approval_wait.effect.started", pending_action_id=pending,
                               tool_use_id=tid, reviewers=["user"], observed_via="transcript"))
        reviewed = True
    if pending is not None:
        txn.extend(records.prompt_answer(
            pending, tid, approved=approved, observed_via=observed_via,
            by_person=who == "user", host_said=None if who == "user" else detail[:500],
            permission=permission if isinstance(permission, dict) else None))
    authorized = ("allow:" if approved else "deny:") + who
    common = {"tool_use_id": tid, "idempotency_key": key, "intent_sequence": intent.get("seq"),
              "operation": intent.get("operation")}
    if approved:
        via = ran.get("event") if ran else observed_via
        how = "its prompt answered" if reviewed else "no prompt"
        seen = "PostToolUse saw it run" if ran else "the transcript shows its result"
        txn.append(records.new(
            "tool_batch.effect.started", **common, observed_via=via,
            authorized_by=authorized, authorization=known,
            inferred=f"Claude Code let the call run ({how}); {seen}"))
        outcome = ran.get("outcome") if ran else ("failed" if (result or {}).get("is_error")
                                                 else "succeeded")
        extra: dict[str, Any] = dict(ran.get("result") or {}) if ran else \
            {"detail": detail}
        txn.append(records.new(
            "tool_batch.effect.terminal", **common, outcome=outcome,
            observed_via="hook" if ran else observed_via, authorized_by=authorized,
            authorization=known,
            scripts_after=ran.get("scripts_after") if ran else None,
            duration_ms=ran.get("duration_ms") if ran else None,
            observed_at=ran.get("at") if ran else None, **extra))
    else:
        txn.append(records.new(
            "tool_batch.effect.terminal", **common, outcome="refused_by_host",
            observed_via=observed_via, authorized_by=authorized, authorization=known,
            detail=detail))
    return {"tid": tid, "match": input_digest(intent.get("tool_name"), intent.get("input")),
            "reviewed": reviewed}


def remember_closed(txn: journal.Transaction, closed: list[dict[str, Any]]) -> None:
    """Keep the last :data:`CLOSED_MEMORY` closed calls (a late PermissionRequest's match)."""
    if closed:
        known = txn.state.get("closed_calls")
        memory = (list(known) if isinstance(known, list) else []) + closed
        txn.set_state("closed_calls", memory[-CLOSED_MEMORY:])


def closed_match(txn: journal.Transaction, tool_name: object, tool_input: object
                 ) -> dict[str, Any] | None:
    """The closed call a late PermissionRequest is about, if it is one."""
    digest = input_digest(tool_name, tool_input)
    known = txn.state.get("closed_calls")
    for entry in reversed(known if isinstance(known, list) else []):
        if isinstance(entry, dict) and entry.get("match") == digest:
            return entry
    return None


def close_in_flight(txn: journal.Transaction, open_intents: dict[str, OpenIntent],
                    *, crashed: bool) -> dict[str, OpenIntent]:
    """At the session's end or a resume: close each host-decided call PostToolUse saw run
    (inferred), and (after a crash) each prompt still open as ``unknown``; the rest."""
    rest: dict[str, OpenIntent] = {}
    closed = []
    for tid, intent in open_intents.items():
        if host_decides(intent) and intent.get("ran") is not None:
            closed.append(close(txn, intent, tid, intent.get("key"), None,
                                observed_via="session_end" if not crashed else "resume"))
            continue
        pending = waits_on_user(intent)
        if crashed and pending is not None:
            txn.append(records.new("approval_wait.effect.terminal", pending_action_id=pending,
                                   outcome="unknown", tool_use_id=tid,
                                   inferred="the session ended without an answer observed"))
        rest[tid] = intent
    remember_closed(txn, closed)
    return rest
