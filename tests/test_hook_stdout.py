"""For every event, a hook's stdout is exactly one JSON object or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import base, hook
from smllm import hooks

SID = "5a1d9c3e-2b4f-4e6a-8c0d-1f2e3d4c5b6a"
EXTRA: dict[str, dict[str, object]] = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {"prompt": "hi"},
    "PreToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"},
    "PermissionRequest": {"tool_name": "Bash", "tool_input": {"command": "ls"}},
    "PostToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1",
                    "tool_response": {"stdout": "a"}},
    "PostToolUseFailure": {"tool_name": "Bash", "tool_input": {"command": "ls"},
                           "tool_use_id": "toolu_1", "error": "Exit code 1"},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "done"},
    "SubagentStart": {"agent_id": "ade27fcc3f5615bab", "agent_type": "general-purpose"},
    "SubagentStop": {"agent_id": "ade27fcc3f5615bab", "agent_type": "general-purpose",
                     "stop_hook_active": False},
    "SessionEnd": {"reason": "other"},
    "Notification": {"message": "waiting", "notification_type": "idle_prompt"},
    "PreCompact": {"trigger": "auto"},
}


def _check(stdout: bytes) -> None:
    text = stdout.decode()
    if text == "":
        return
    obj = json.loads(text)  # the whole stdout must parse: nothing before or after
    assert isinstance(obj, dict)
    assert text == text.strip()


@pytest.mark.parametrize("event", [*hooks.HANDLERS, "Notification", "PreCompact"])
def test_stdout_is_one_object_or_empty(event: str) -> None:
    """Valid input: stdout parses whole as one object, or is empty."""
    proc = hook(event, base(event, SID, **EXTRA[event]))
    assert 0 == proc.returncode, proc.stderr.decode()
    _check(proc.stdout)


@pytest.mark.parametrize("event", list(hooks.HANDLERS))
def test_stray_print_cannot_reach_stdout(event: str, tmp_path: Path) -> None:
    """Output printed by code inside a handler goes to stderr, never around the decision."""
    site = tmp_path / "site"
    site.mkdir()
    # sitecustomize runs before smllm: it makes every fsync (the journal's) print noise
    (site / "sitecustomize.py").write_text(
        "import os\n"
        "_fsync = os.fsync\n"
        "def fsync(fd):\n"
        "    print('NOISE FROM A HANDLER')\n"
        "    return _fsync(fd)\n"
        "os.fsync = fsync\n"
        "import posix\n"  # the hooks call posix's own (smllm.base.osfast)
        "posix.fsync = fsync\n"
    )
    import os

    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    proc = hook(event, base(event, SID, **EXTRA[event]), env=env)
    assert 0 == proc.returncode
    assert b"NOISE" not in proc.stdout
    assert b"NOISE FROM A HANDLER" in proc.stderr
    _check(proc.stdout)
