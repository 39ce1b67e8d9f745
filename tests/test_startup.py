"""The hooks' hot path imports only the standard library and light smllm modules."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import base
from smllm import hooks

SRC = Path(__file__).resolve().parent.parent / "src" / "smllm"
BANNED = ("pydantic", "yaml", "platformdirs", "filelock", "jsonschema", "sqlite3", "asyncio",
          "ssl", "http.client", "urllib.request", "email", "tomli", "tomllib", "ruamel", "json",
          "re", "pathlib", "typing", "dataclasses", "enum", "hashlib", "runpy", "datetime")
SID = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
PAYLOADS = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {"prompt": "hi"},
    "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": "/tmp/x"},
                   "tool_use_id": "toolu_1"},
    "PermissionRequest": {"tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}},
    "PostToolUse": {"tool_name": "Read", "tool_input": {"file_path": "/tmp/x"},
                    "tool_use_id": "toolu_1", "tool_response": {}},
    "PostToolUseFailure": {"tool_name": "Read", "tool_input": {"file_path": "/tmp/x"},
                           "tool_use_id": "toolu_1", "error": "x"},
    "Stop": {"stop_hook_active": False},
    "SubagentStart": {"agent_id": "a1", "agent_type": "general-purpose"},
    "SubagentStop": {"agent_id": "a1", "agent_type": "general-purpose"},
    "SessionEnd": {"reason": "other"},
}


def _imported(event: str, tmp_path: Path) -> set[str]:
    payload = json.dumps(base(event, SID, cwd=str(tmp_path), **PAYLOADS[event])).encode()
    hook = [sys.executable, "-c", "from smllm.hooks import cli; cli()", event]
    # the first call may compile and cache the policy (the slow path); measure the next one
    subprocess.run(hook, input=payload, capture_output=True, check=True, cwd=tmp_path)
    proc = subprocess.run([sys.executable, "-X", "importtime", *hook[1:]],
                          input=payload, capture_output=True, check=True, cwd=tmp_path)
    names = set()
    for line in proc.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize("event", list(hooks.HANDLERS))
def test_no_heavy_import_on_the_hot_path(event: str, tmp_path: Path) -> None:
    """-X importtime shows none of the banned modules for any hook event (config cached)."""
    names = _imported(event, tmp_path)
    assert "smllm.hooks" in names  # the measurement saw our code
    heavy = sorted(n for n in names if n.split(".")[0] in BANNED or n in BANNED)
    assert [] == heavy


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted((SRC / "hooks").glob("*.py")), ids=lambda p: p.name)
def test_hook_modules_import_nothing_heavy_at_top_level(path: Path) -> None:
    """No hook module imports a banned module at module level."""
    heavy = sorted(m for m in _top_level_imports(path) if m.split(".")[0] in BANNED)
    assert [] == heavy
