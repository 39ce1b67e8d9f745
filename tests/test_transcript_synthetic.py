"""Claude Code's synthetic assistant messages (model ``<synthetic>``) are not model calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import base, hook, kind, records

SID = "5e7a0c11-5a5a-4b4b-8c8c-00000000005e"


def _assistant(mid: str, model: str, text: str, stop: str) -> dict[str, Any]:
    return {"type": "assistant", "uuid": f"u-{mid}", "timestamp": "2026-11-29T10:00:00.000Z",
            "message": {"id": mid, "model": model, "role": "assistant", "stop_reason": stop,
                        "content": [{"type": "text", "text": text}],
                        "usage": {"input_tokens": 0, "output_tokens": 0}}}


def test_synthetic_messages_after_a_crash_are_not_model_calls(tmp_path: Path) -> None:
    """The message Claude Code writes itself when a crashed session is resumed ("No response
    requested.", model <synthetic>) leaves no model.call; the real ones around it do."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")

    def run(event: str, *lines: dict[str, Any], **extra: Any) -> None:
        with transcript.open("a") as fh:
            fh.writelines(json.dumps(line) + "\n" for line in lines)
        proc = hook(event, base(event, SID, transcript_path=str(transcript), cwd=str(tmp_path),
                                **extra))
        assert 0 == proc.returncode, proc.stderr.decode()

    run("SessionStart", source="startup")
    run("UserPromptSubmit", {"type": "user", "message": {"role": "user", "content": "go"}},
        prompt="go")
    run("Stop", _assistant("msg_1", "claude-sonnet-4-5", "working", "end_turn"),
        stop_hook_active=False)
    # killed here; at the resume Claude Code appends its own assistant message
    run("SessionStart", _assistant("3f2e1d0c-synthetic", "<synthetic>",
                                   "No response requested.", "stop_sequence"), source="resume")
    run("UserPromptSubmit", {"type": "user", "message": {"role": "user", "content": "again"}},
        prompt="again")
    run("Stop", _assistant("msg_2", "claude-sonnet-4-5", "done", "end_turn"),
        stop_hook_active=False)
    calls = [(r["payload"]["event"]["message_id"], r["payload"]["event"]["model"])
             for r in records(SID) if kind(r) == "model.call"]
    assert [("msg_1", "claude-sonnet-4-5"), ("msg_2", "claude-sonnet-4-5")] == calls
