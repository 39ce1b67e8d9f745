"""Bad hook input: a gating hook denies with a clear reason; an observing hook exits quietly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import base, hook, hook_output, kind, records
from smllm import hooks

SID = "0b7f3a52-9d8e-4c1b-a6f0-3e2d1c0b9a87"
GOOD = base("PreToolUse", SID, tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="toolu_1")
BIG = dict(GOOD, tool_input={"command": "echo " + "x" * (10 * 1024 * 1024)})

CASES: list[tuple[str, bytes, str, bool]] = [
    ("not json", b"{this is not json", "hook input is not JSON: ", False),
    ("json array", b"[1, 2, 3]", "hook input is a JSON list, not an object", False),
    ("empty stdin", b"", "hook input is empty", False),
    ("invalid utf-8", b'{"session_id": "\xff\xfe"}', "hook input is not valid UTF-8", False),
    ("missing session_id", json.dumps({k: v for k, v in GOOD.items() if k != "session_id"}).encode(),
     "PreToolUse input has no 'session_id' field", False),
    ("missing tool_name", json.dumps({k: v for k, v in GOOD.items() if k != "tool_name"}).encode(),
     "PreToolUse input has no 'tool_name' field", True),
    ("tool_input is a string", json.dumps(dict(GOOD, tool_input="rm -rf /")).encode(),
     "PreToolUse input field 'tool_input' is str, expected dict", True),
    ("session_id is a number", json.dumps(dict(GOOD, session_id=42)).encode(),
     "PreToolUse input field 'session_id' is int, expected str", False),
    ("traversal in session_id", json.dumps(dict(GOOD, session_id="../../etc")).encode(),
     "invalid session id '../../etc'", False),
    ("wrong event name", json.dumps(dict(GOOD, hook_event_name="PostToolUse")).encode(),
     "hook input is for 'PostToolUse' but this hook handles 'PreToolUse'", True),
    ("10 MB payload", json.dumps(BIG).encode(), "over the 8388608-byte limit", True),
]


@pytest.mark.parametrize(("name", "raw", "reason", "journaled"), CASES, ids=[c[0] for c in CASES])
def test_pre_tool_use_denies_bad_input(name: str, raw: bytes, reason: str, journaled: bool) -> None:
    """PreToolUse answers deny with the reason, journals it when it can, never a traceback."""
    proc = hook("PreToolUse", raw)
    assert 0 == proc.returncode
    assert b"Traceback" not in proc.stderr
    out = hook_output(proc)
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert ("PreToolUse", "deny") == (spec["hookEventName"], spec["permissionDecision"])
    assert spec["permissionDecisionReason"].startswith("smllm refused this call: ")
    assert reason in spec["permissionDecisionReason"]
    if journaled:
        recs = records(SID)
        assert ["hook.input_rejected"] == [kind(r) for r in recs]
        assert reason in recs[0]["payload"]["record"]["reason"]


OBSERVERS = sorted(set(hooks.HANDLERS) - hooks.GATING)


@pytest.mark.parametrize("event", OBSERVERS)
@pytest.mark.parametrize(("name", "raw", "reason", "journaled"), CASES, ids=[c[0] for c in CASES])
def test_observing_hooks_exit_quietly(event: str, name: str, raw: bytes, reason: str,
                                      journaled: bool) -> None:
    """Observing hooks print nothing, exit 0 and show no traceback on bad input."""
    proc = hook(event, raw)
    assert (0, b"") == (proc.returncode, proc.stdout)
    assert b"Traceback" not in proc.stderr


def test_pre_tool_use_denies_when_the_intent_cannot_be_journaled(tmp_path: Path) -> None:
    """The store is unusable (a file where the folder should be): the gate fails closed."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    proc = hook("PreToolUse", GOOD, env={"SMLLM_HOME": str(blocker)})
    assert (0, b"") == (proc.returncode, proc.stderr)
    out = hook_output(proc)
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert "deny" == spec["permissionDecision"]
    assert spec["permissionDecisionReason"].startswith(
        f"smllm could not decide on this call and denies it (fail closed): UnsafeStore: "
        f"{blocker} is not a folder")
    for event in OBSERVERS:  # observers fail open: nothing on stdout
        payload = dict(GOOD, hook_event_name=event)
        assert b"" == hook(event, payload, env={"SMLLM_HOME": str(blocker)}).stdout
