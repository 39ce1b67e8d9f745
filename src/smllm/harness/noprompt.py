"""Hosts whose hooks cannot put a question to a person: Codex (it runs the tool on
``ask``) and Gemini CLI (a headless run hangs on ``ask``). On such a host a call smllm would
escalate for review is denied, with a reason that says how a person approves such calls
ahead of time; the host's own configuration (its hooks, their trust) is guarded like
smllm's protected set; and the review the ``ask`` opened ends as refused by the host.

Each host describes itself once as a :class:`Host`; :func:`finish` turns the gate's
verdict into the one that host gets:

>>> from smllm.gate import Verdict
>>> from smllm.base.catalogue import ToolCall
>>> host = Host("Demo", "PreToolUse", "a person adds an allow rule", lambda project: ())
>>> call = ToolCall("Bash", {"command": "rm -rf build"}, cwd="/p", project="/p")
>>> v = finish(host, call, Verdict("ask", "ask:user", "rm -rf escalates"), [])
>>> v.decision, v.policy_decision, v.reason
('deny', 'deny:policy', 'rm -rf escalates. a person adds an allow rule')

Hot path: ``os`` only; loaded by the gating hook of such a host.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import VerdictFacts
    from smllm.gate import Verdict
    from smllm.journal.codec import Entry


class Host:
    """A host that shows no approval prompt: its name as the reasons say it, its gating
    event, what a person does instead of answering a prompt, and the folders of its own
    configuration in a project (``parts(project)``)."""

    __slots__ = ("gating_event", "how_to_approve", "name", "parts")

    def __init__(self, name: str, gating_event: str, how_to_approve: str,
                 parts: Callable[[str], tuple[str, ...]]) -> None:
        self.name = name
        self.gating_event = gating_event
        self.how_to_approve = how_to_approve
        self.parts = parts


def finish(host: Host, call: ToolCall, found: Verdict, targets: list[Any]) -> Verdict:
    """The verdict ``host`` gets for ``call`` once the gate gave ``found`` (``targets``: what
    the one analysis found it writes): a write into the host's configuration denied
    (:func:`guard`), then an ``ask`` made a deny saying how a person approves such calls."""
    from smllm.gate import Verdict  # noqa: PLC0415 - loaded by the hook already

    if found.decision != "deny":  # the host's own configuration, before an ask is made a deny
        guarded = guard(host, call, targets)
        if guarded is not None:
            return Verdict("deny", "deny:policy", guarded, rule="protect.self",
                           facts=found.facts)
    if found.decision != "ask":
        return found
    facts: VerdictFacts = {**found.facts, "smllm_verdict": found.policy_decision}
    source = found.policy_decision.partition(":")[2] or "policy"
    return Verdict("deny", f"deny:{'machine' if source == 'machine' else 'policy'}",
                   f"{found.reason.rstrip('. ') or 'smllm escalates this call'}. "
                   f"{host.how_to_approve}", found.rule, found.pending_action_id, facts)


def guard(host: Host, call: ToolCall, targets: list[Any]) -> str | None:
    """Why ``call`` would change the host's own configuration (``host.parts``), read from
    what the one analysis found it writes (``targets`` of the verdict's facts), or None. A
    write whose path is known only at run time is refused when the command names one of
    those folders."""
    from smllm.gate import protect  # noqa: PLC0415 - loaded by the gate already

    parts = host.parts(call.project)
    command = call.command or ""
    named = any(os.path.basename(p) in command or p in command for p in parts)
    for target in targets:
        if not isinstance(target, dict) or target.get("effect") not in protect.WRITE_EFFECTS:
            continue
        path = target.get("path")
        if path is None:
            if named:
                return (f"smllm protects {host.name}'s configuration: {target.get('by')} "
                        f"{target.get('effect')}s a path known only at run time in a "
                        f"command that names it")
            continue
        root = protect.reaches(str(path), call.cwd, parts)
        if root is not None:
            return (f"smllm protects {host.name}'s configuration: {call.tool} would "
                    f"{target.get('effect')} {path}, inside {root}, which the agent may "
                    f"not change (it holds the hooks)")
    return None


def refused_ask(host: Host, v: Verdict, tool_use_id: str) -> list[Entry]:
    """The end of the review an ``ask`` made a deny (:func:`finish`) opened for the person:
    ``decision_applied`` rejected and ``approval_wait.effect.terminal``, as the host's
    refusal (the host has no prompt for a person to answer)."""
    if v.pending_action_id is None or v.facts.get("smllm_verdict") != "ask:user":
        return []
    from smllm.journal import records  # noqa: PLC0415 - loaded by the hook already

    source = {"kind": "host", "observed_via": host.gating_event, "host_said": host.how_to_approve,
              "inferred": f"{host.name} shows no approval prompt: smllm denied the call"}
    return [
        records.new("decision_applied", pending_action_id=v.pending_action_id,
                    decision="rejected", policy_result="deny", decision_source=source),
        records.new("approval_wait.effect.terminal", pending_action_id=v.pending_action_id,
                    outcome="rejected", tool_use_id=tool_use_id),
    ]
