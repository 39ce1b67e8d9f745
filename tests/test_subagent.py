"""A subagent gets its own journal under subagent/<agent-id>/, linked both ways."""

from __future__ import annotations

from helpers import base, hook, kind, records
from smllm import journal
from smllm.journal.verify import verify

SID = "3e2d1c0b-9a87-4654-b321-0fedcba98765"
AGENT = "ade27fcc3f5615bab"


def test_child_journal_linked_from_parent() -> None:
    """Subagent start, a tool inside it, and its stop land in the child log, linked from the parent."""
    hook("SessionStart", base("SessionStart", SID, source="startup"))
    hook("SubagentStart", base("SubagentStart", SID, agent_id=AGENT, agent_type="general-purpose"))
    tool = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_s1",
            "agent_id": AGENT, "agent_type": "general-purpose"}
    hook("PreToolUse", base("PreToolUse", SID, **tool))
    hook("PostToolUse", base("PostToolUse", SID, tool_response={"stdout": ""}, **tool))
    hook("SubagentStop", base("SubagentStop", SID, agent_id=AGENT, agent_type="general-purpose",
                              stop_hook_active=False, last_assistant_message="found it"))
    parent = records(SID)
    assert ["session.start", "subagent.started", "subagent.stopped"] == [kind(r) for r in parent]
    rel = parent[1]["payload"]["record"]["journal"]
    assert f"subagent/{AGENT}/session.jsonl" == rel
    child_path = journal.log_path(SID).parent / rel
    assert child_path == journal.log_path(SID, agent_id=AGENT)
    child = list(journal.iter_records(child_path))
    assert ["session.start", "side_effect_intent", "tool_batch.effect.started",
            "tool_batch.effect.terminal", "session.end"] == [kind(r) for r in child]
    assert {"journal": "../../session.jsonl", "sequence": 2} == \
        child[0]["payload"]["record"]["parent"]
    assert child[-1]["sequence"] == parent[2]["payload"]["record"]["child_sequence"]
    assert verify(child_path).ok
    assert verify(journal.log_path(SID)).ok


def test_agent_id_is_validated() -> None:
    """An agent id that would escape the session folder is refused (PreToolUse denies)."""
    tool = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_s2",
            "agent_id": "../../x"}
    proc = hook("PreToolUse", base("PreToolUse", SID, **tool))
    assert b"invalid agent id '../../x'" in proc.stdout
