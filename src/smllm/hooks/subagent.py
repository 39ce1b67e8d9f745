"""SubagentStart / SubagentStop: the child's own journal under ``subagent/<agent-id>/``,
linked both ways with the parent's."""

from __future__ import annotations

from smllm import journal
from smllm.hooks._context import HookContext, safe_transcript
from smllm.journal import records, transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PREVIEW = 2000


def _child_rel(agent_id: str) -> str:
    return f"subagent/{agent_id}/{journal.LOG_NAME}"


def handle(ctx: HookContext) -> dict[str, Any] | None:
    agent_id = ctx.agent_id
    if agent_id is None:
        return None
    agent_type = ctx.payload.get("agent_type")
    if ctx.event == "SubagentStart":
        with ctx.transaction(main=True) as parent:
            link = parent.append(
                records.new("subagent.started", agent_id=agent_id, agent_type=agent_type,
                            journal=_child_rel(agent_id))
            )
        with ctx.transaction() as child:
            child.append(
                records.new(
                    "session.start", session_id=ctx.session_id, agent_id=agent_id,
                    agent_type=agent_type, source="subagent",
                    host="claude-code" if ctx.harness == "claude" else ctx.harness,
                    parent={"journal": f"../../{journal.LOG_NAME}", "sequence": link.sequence},
                    **({} if ctx.harness == "claude" else {"harness": ctx.harness}),
                )
            )
            child.set_state("started_at_ms", ctx.now_ms)
            child.set_state("open", True)
        return None
    last = ctx.payload.get("last_assistant_message")
    with ctx.transaction() as child:
        transcript.ingest(child, safe_transcript(ctx.payload.get("agent_transcript_path"))
                          if ctx.harness == "claude" else None,
                          flush=True)
        started = int(child.state.get("started_at_ms") or ctx.now_ms)
        end = child.append(
            records.new("session.end", exit_reason="subagent_stop", host_reason=None,
                        uptime_ms=max(0, ctx.now_ms - started))
        )
        child.set_state("open", False)
    with ctx.transaction(main=True) as parent:
        parent.append(
            records.new(
                "subagent.stopped", agent_id=agent_id, agent_type=agent_type,
                journal=_child_rel(agent_id), child_sequence=end.sequence,
                last_assistant_message=last[:PREVIEW] if isinstance(last, str) else None,
            )
        )
    return None
