"""Model calls come from the host transcript, incrementally; host-refused calls get a terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import base, hook, kind, records
from smllm import journal
from smllm.journal.verify import verify

SID = "7c6b5a49-3827-4615-a4b3-c2d1e0f9a8b7"


def _assistant(mid: str, blocks: list[dict[str, Any]], stop: str | None, n: int) -> dict[str, Any]:
    return {"type": "assistant", "uuid": f"u-{mid}-{n}", "timestamp": "2026-11-29T10:00:00.000Z",
            "message": {"id": mid, "model": "claude-opus-5-5", "role": "assistant",
                        "content": blocks, "stop_reason": stop,
                        "usage": {"input_tokens": 50 + n, "output_tokens": 10}}}


def _result(tid: str, content: str, is_error: bool) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}]}}


class Session:
    def __init__(self, tmp_path: Path) -> None:
        self.transcript = tmp_path / "t.jsonl"
        self.transcript.write_text("")

    def write(self, *lines: dict[str, Any]) -> None:
        with self.transcript.open("a") as fh:
            for line in lines:
                fh.write(json.dumps(line) + "\n")

    def hook(self, event: str, **extra: Any) -> None:
        payload = base(event, SID, transcript_path=str(self.transcript), **extra)
        proc = hook(event, payload)
        assert 0 == proc.returncode, proc.stderr.decode()


def _bash(tid: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": f"echo {tid}"}, "tool_use_id": tid}


def test_one_model_call_per_assistant_message(tmp_path: Path) -> None:
    """A message split over several lines is one model.call, recorded once, with its tool uses."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.write({"type": "user", "message": {"role": "user", "content": "go"}})
    s.hook("UserPromptSubmit", prompt="go")
    s.write(_assistant("msg_A", [{"type": "text", "text": "running"}], None, 1),
            _assistant("msg_A", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {}}], "tool_use", 2))
    s.hook("PreToolUse", **_bash("toolu_1"))
    s.hook("PostToolUse", **_bash("toolu_1"), tool_response={"stdout": "toolu_1"})
    s.write(_result("toolu_1", "toolu_1", False),
            _assistant("msg_B", [{"type": "text", "text": "done"}], "end_turn", 3))
    s.hook("Stop", stop_hook_active=False, last_assistant_message="done")
    s.hook("SessionEnd", reason="other")
    recs = records(SID)
    calls = [r["payload"]["event"] for r in recs if kind(r) == "model.call"]
    assert ["msg_A", "msg_B"] == [c["message_id"] for c in calls]
    assert (["toolu_1"], "tool_use", 52) == (
        calls[0]["tool_use_ids"], calls[0]["stop_reason"], calls[0]["usage"]["input_tokens"])
    assert ("end_turn", []) == (calls[1]["stop_reason"], calls[1]["tool_use_ids"])
    # msg_A is recorded before the intent it asked for
    order = [kind(r) for r in recs]
    assert order.index("model.call") < order.index("side_effect_intent")
    assert verify(journal.log_path(SID)).ok


def test_host_refused_call_gets_a_terminal_from_the_transcript(tmp_path: Path) -> None:
    """An intent the host refused (no PostToolUse) is closed once the model answered after it."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.hook("UserPromptSubmit", prompt="go")
    s.write(_assistant("msg_A", [{"type": "tool_use", "id": "toolu_2", "name": "Bash",
                                  "input": {}}], "tool_use", 1))
    s.hook("PreToolUse", **_bash("toolu_2"))
    s.write(_result("toolu_2", "This command requires approval", True))
    s.hook("PreToolUse", **_bash("toolu_3"))  # same batch: the model has not answered yet
    s.hook("PostToolUse", **_bash("toolu_3"), tool_response={"stdout": ""})
    assert [] == [r for r in records(SID) if kind(r) == "tool_batch.effect.terminal"
                  and r["payload"]["record"]["tool_use_id"] == "toolu_2"]
    s.write(_assistant("msg_B", [{"type": "text", "text": "it was refused"}], "end_turn", 2))
    s.hook("Stop", stop_hook_active=False)
    terminal = [r["payload"]["record"] for r in records(SID)
                if kind(r) == "tool_batch.effect.terminal"
                and r["payload"]["record"]["tool_use_id"] == "toolu_2"]
    assert 1 == len(terminal)
    assert ("refused_by_host", "transcript", "This command requires approval") == (
        terminal[0]["outcome"], terminal[0]["observed_via"], terminal[0]["detail"])


def test_ingestion_reads_only_new_bytes(tmp_path: Path) -> None:
    """A partial last line is left for the next hook; nothing is recorded twice."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    line = json.dumps(_assistant("msg_A", [{"type": "text", "text": "x"}], "end_turn", 1))
    with s.transcript.open("a") as fh:
        fh.write(line[:20])
    s.hook("UserPromptSubmit", prompt="a")
    with s.transcript.open("a") as fh:
        fh.write(line[20:] + "\n")
    s.write({"type": "user", "message": {"role": "user", "content": "next"}})
    s.hook("UserPromptSubmit", prompt="b")
    s.hook("Stop", stop_hook_active=False)
    assert ["msg_A"] == [r["payload"]["event"]["message_id"] for r in records(SID)
                         if kind(r) == "model.call"]
