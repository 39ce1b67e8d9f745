"""The one payload -> ToolCall builder (smllm.harness.tool_call) every host's adapter uses:
the project rule each host gives, its tool names and argument shapes, and the adapters'
examples."""

from __future__ import annotations

import doctest

import pytest

from smllm import harness
from smllm.harness import claude, codex

PAYLOAD = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s",
           "cwd": "/work/p/sub", "tool_use_id": "t1", "permission_mode": "default",
           "agent_id": "a1"}


def test_a_declared_project_is_read_from_env_and_cwd_decides_otherwise() -> None:
    env = {"CLAUDE_PROJECT_DIR": "/elsewhere"}
    assert "/elsewhere" == harness.tool_call(PAYLOAD, "claude", env=env).project
    assert "/work/p/sub" == harness.tool_call(PAYLOAD, "codex", env={}).project
    assert claude.tool_call(PAYLOAD, env).project == "/elsewhere"
    assert codex.tool_call(PAYLOAD, env).project == "/work/p/sub"


def test_every_field_of_the_payload_reaches_the_call() -> None:
    call = harness.tool_call(PAYLOAD, "claude", env={})
    assert ("Bash", "shell", "ls", "t1", "default", "a1", "s", "claude") == (
        call.tool, call.kind, call.command, call.tool_use_id, call.permission_mode,
        call.agent_id, call.session_id, call.harness)
    bare = harness.tool_call({"tool_name": "Bash", "tool_input": {}, "session_id": "s",
                              "tool_use_id": 7}, "codex", env={})
    assert (None, None, None) == (bare.tool_use_id, bare.permission_mode, bare.agent_id)


def test_a_host_tool_becomes_the_catalogues_with_its_keys_renamed() -> None:
    tools = {"view": ("Read", (("path", "file_path"),))}
    call = harness.tool_call({**PAYLOAD, "tool_name": "view",
                              "tool_input": {"path": "/p/a", "view_range": [1, 3]}},
                             "copilot", env={}, tools=tools)
    assert ("Read", "read", {"file_path": "/p/a", "view_range": [1, 3]}) == (
        call.tool, call.kind, call.input)
    other = harness.tool_call({**PAYLOAD, "tool_name": "sql", "tool_input": {"q": 1}},
                              "copilot", env={}, tools=tools)
    assert ("sql", "other") == (other.tool, other.kind)


@pytest.mark.parametrize("module", [harness, claude, codex], ids=lambda m: m.__name__)
def test_the_adapters_examples_hold(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert (result.failed, result.attempted > 0) == (0, True)
