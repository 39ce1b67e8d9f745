"""The hooks' hot path imports only the standard library and light smllm modules."""

from __future__ import annotations

import ast
import json
import os
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


def _imported(event: str, tmp_path: Path, extra: dict[str, object] | None = None,
              env: dict[str, str] | None = None) -> set[str]:
    fields = PAYLOADS[event] if extra is None else extra
    payload = json.dumps(base(event, SID, cwd=str(tmp_path), **fields)).encode()
    hook = [sys.executable, "-c", "from smllm.hooks import cli; cli()", event]
    # the first call may compile and cache the policy (the slow path); measure the next one
    subprocess.run(hook, input=payload, capture_output=True, check=True, cwd=tmp_path,
                   env=env)
    proc = subprocess.run([sys.executable, "-X", "importtime", *hook[1:]],
                          input=payload, capture_output=True, check=True, cwd=tmp_path,
                          env=env)
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


#: what every hook loads of smllm: the journal (its codec, folders and transaction), the
#: records, the sidecar, the transcript reader and the base they stand on
CORE = {"smllm", "smllm.base", "smllm.base.clock", "smllm.base.digest",
        # the error classes a hook can raise, without the rest of the hierarchy
        "smllm.base.errors_hot",
        "smllm.base.jsonfast", "smllm.base.lockfile",
        # os over the posix builtin: the hooks never import os (see the test below)
        "smllm.base.osfast", "smllm.base.paths", "smllm.hooks",
        "smllm.hooks._context", "smllm.journal", "smllm.journal.codec",
        "smllm.journal.folders", "smllm.journal.log", "smllm.journal.records",
        "smllm.journal.sidecar", "smllm.journal.transcript",
        # the keyed chain (every append MACs its record); the closing of calls Claude Code
        # decides (the transcript's permissionDecision closes them)
        "smllm.journal.keyed", "smllm.journal.hostcall",
        # the tests set SMLLM_HOME: a hook looks for SMLLM_* variables the project's
        # settings set (and drops them) only when one is set
        "smllm.base.knobs",
        # the tripwire's fast path: every hook compares the protected files' signatures
        # with its record (its keeper loads only when one changed), through the hooks'
        # seam to the features
        "smllm.tripwire", "smllm.hooks._features",
        # the code bundle every other smllm module of a hook is loaded from (one read
        # instead of the import system's search and .pyc read per module)
        "smllm.hooks._bundle"}
#: a tool event: the call as Claude Code's adapter reads it, of a catalogued tool
TOOL = {"smllm.base.catalogue", "smllm.harness", "smllm.harness.claude"}
#: a decision: the gate, its one analysis and the policy
GATE = {"smllm.gate", "smllm.gate.analysis", "smllm.gate.policy", "smllm.gate.policy.assess",
        "smllm.base.credentials"}
#: a shell call: the protected set, self-protection and the analyser's core
SHELL = {"smllm.base.protected", "smllm.gate.protect", "smllm.gate.shell",
         "smllm.gate.shell._analyse", "smllm.gate.shell._flows", "smllm.gate.shell._model",
         "smllm.gate.shell._parse", "smllm.gate.shell._programs", "smllm.gate.shell._syntax",
         "smllm.gate.shell._words"}
#: (event, input, exactly the smllm modules it loads). Never on these paths: the crash-test
#: fault points (smllm.base.faults), the reconciler (no crash left an effect unknown), the
#: review chain (nothing escalated), the shell's variable table and rule decisions (no
#: variable set, no table rule met); a read-only call loads neither the protected set nor
#: self-protection, PostToolUse no part of the gate
HOT_PATHS: list[tuple[str, dict[str, object], set[str]]] = [
    ("UserPromptSubmit", {"prompt": "hi"},
     CORE | {"smllm.hooks._features", "smllm.machine", "smllm.hooks.user_prompt_submit"}),
    ("Stop", {"stop_hook_active": False},
     CORE | {"smllm.hooks._features", "smllm.machine", "smllm.store", "smllm.hooks.stop"}),
    ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "/tmp/x"},
                    "tool_use_id": "toolu_1"},
     CORE | TOOL | GATE | {"smllm.hooks._features", "smllm.machine",
                           "smllm.hooks.pre_tool_use"}),
    ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "git status"},
                    "tool_use_id": "toolu_2"},
     CORE | TOOL | GATE | SHELL | {"smllm.gate.shell._git", "smllm.gate.shell._flags",
                                   "smllm.hooks._features", "smllm.machine",
                                   "smllm.hooks.pre_tool_use"}),
    ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "git status"},
                     "tool_use_id": "toolu_2", "tool_response": {"stdout": "ok"}},
     CORE | TOOL | {"smllm.hooks.post_tool_use"}),
]


@pytest.mark.parametrize(("event", "extra", "expected"), HOT_PATHS,
                         ids=[f"{e}-{x.get('tool_name', '')}" for e, x, _ in HOT_PATHS])
def test_each_hook_loads_exactly_its_modules(event: str, extra: dict[str, object],
                                             expected: set[str], tmp_path: Path) -> None:
    """Each module a hook imports adds to its start-up (bench/bench_trees.py): a hook loads
    exactly the smllm modules its event and tool need, so a module added to a hot path
    fails here until this list says why it belongs there."""
    names = {n for n in _imported(event, tmp_path, extra) if n.split(".")[0] == "smllm"}
    assert (set(), set()) == (names - expected, expected - names)


#: what ``import os`` would load: a quarter of ``python -I -S -c pass``, which has none of it
OS = {"os", "_collections_abc", "posixpath", "genericpath", "stat"}


@pytest.mark.parametrize(("event", "extra"), [(e, x) for e, x, _ in HOT_PATHS],
                         ids=[f"{e}-{x.get('tool_name', '')}" for e, x, _ in HOT_PATHS])
def test_a_hook_run_as_installed_never_imports_os(event: str, extra: dict[str, object],
                                                  tmp_path: Path) -> None:
    """Run as ``smllm-hook`` runs it (``-I -S``: no ``site``, which would import ``os``),
    a hook on each hot path loads ``os`` nowhere: its modules use ``smllm.base.osfast``.
    A module that imports ``os`` again on a hot path fails here."""
    payload = json.dumps(base(event, SID, cwd=str(tmp_path), **extra)).encode()
    where = [str(SRC.parent), *(p for p in sys.path if p.endswith("site-packages"))]
    code = f"import sys; sys.path[:0] = {where!r}; from smllm.hooks import cli; cli()"
    hook = [sys.executable, "-I", "-S", "-c", code, event]
    subprocess.run(hook, input=payload, capture_output=True, check=True, cwd=tmp_path)
    proc = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", *hook[3:]],
                          input=payload, capture_output=True, check=True, cwd=tmp_path)
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
             if line.startswith("import time:") and "|" in line}
    assert "smllm.hooks" in names
    assert set() == names & OS


#: Copilot's hooks (``EVENT --harness copilot``): its adapter, and its events.jsonl reader
#: (the call's id, the model calls), on top of what Claude Code's same event loads
COPILOT = {"smllm.harness.copilot", "smllm.harness.copilot_events"}
COPILOT_VIEW = {"toolName": "view", "toolArgs": {"path": "/tmp/x"}}
COPILOT_PATHS: list[tuple[str, dict[str, object], set[str]]] = [
    ("PreToolUse", COPILOT_VIEW,
     CORE | TOOL | GATE | COPILOT | {"smllm.hooks._features", "smllm.machine",
                                     "smllm.hooks.pre_tool_use"}),
    ("PostToolUse", {**COPILOT_VIEW, "toolResult": {"resultType": "success"}},
     CORE | COPILOT | {"smllm.base.catalogue", "smllm.harness", "smllm.hooks.post_tool_use"}),
    ("Stop", {"stop_hook_active": False, "stopReason": "end_turn"},
     CORE | {"smllm.harness", "smllm.harness.copilot", "smllm.harness.copilot_events",
             "smllm.hooks._features", "smllm.machine", "smllm.store", "smllm.hooks.stop"}),
]


@pytest.mark.parametrize(("event", "extra", "expected"), COPILOT_PATHS,
                         ids=[f"copilot-{e}" for e, _, _ in COPILOT_PATHS])
def test_each_copilot_hook_loads_exactly_its_modules(event: str, extra: dict[str, object],
                                                     expected: set[str],
                                                     tmp_path: Path) -> None:
    """Copilot's hooks load their adapter and its transcript reader besides what Claude
    Code's same event loads, and nothing else (the call's id found in events.jsonl)."""
    home = tmp_path / "copilot-home"
    events = home / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text(json.dumps({"type": "tool.execution_start", "data": {
        "toolCallId": "toolu_1", "toolName": "view", "arguments": {"path": "/tmp/x"}}}) + "\n")
    payload = json.dumps({"sessionId": SID, "cwd": str(tmp_path), "timestamp": 1,
                          **extra}).encode()
    hook = [sys.executable, "-c", "from smllm.hooks import cli; cli()", event, "--harness",
            "copilot"]
    env = {**__import__("os").environ, "COPILOT_HOME": str(home)}
    subprocess.run(hook, input=payload, capture_output=True, check=True, cwd=tmp_path, env=env)
    proc = subprocess.run([sys.executable, "-X", "importtime", *hook[1:]], input=payload,
                          capture_output=True, check=True, cwd=tmp_path, env=env)
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
             if line.startswith("import time:") and "|" in line}
    names = {n for n in names if n.split(".")[0] == "smllm"}
    assert (set(), set()) == (names - expected, expected - names)


#: a Gemini CLI hook (``smllm-hook EVENT --harness gemini``): its chat file's reader (the
#: model calls) and the harness package it reads with, on every event; its adapter (and the
#: catalogue) only where a tool call is read
GEMINI = {"smllm.harness", "smllm.harness.gemini_chat"}
GEMINI_PATHS: list[tuple[str, dict[str, object], set[str]]] = [
    ("UserPromptSubmit", {"prompt": "hi"},
     CORE | GEMINI | {"smllm.hooks._features", "smllm.machine", "smllm.hooks.user_prompt_submit"}),
    ("Stop", {"stop_hook_active": False, "prompt_response": "done"},
     CORE | GEMINI | {"smllm.hooks._features", "smllm.machine", "smllm.store",
                      "smllm.hooks.stop"}),
    ("PreToolUse", {"tool_name": "run_shell_command", "tool_input": {"command": "git status"}},
     CORE | TOOL | GATE | SHELL | GEMINI | {
         "smllm.harness.gemini", "smllm.gate.shell._git", "smllm.gate.shell._flags",
         "smllm.hooks._features", "smllm.machine", "smllm.hooks.pre_tool_use"}),
    ("PostToolUse", {"tool_name": "run_shell_command", "tool_input": {"command": "git status"},
                     "tool_response": {"llmContent": "ok"}},
     CORE | GEMINI | {"smllm.harness.gemini", "smllm.base.catalogue",
                      "smllm.hooks.post_tool_use"}),
]


@pytest.mark.parametrize(("event", "extra", "expected"), GEMINI_PATHS,
                         ids=[f"{e}-{x.get('tool_name', '')}" for e, x, _ in GEMINI_PATHS])
def test_each_gemini_hook_loads_exactly_its_modules(event: str, extra: dict[str, object],
                                                    expected: set[str], tmp_path: Path) -> None:
    """The same for Gemini CLI's hooks, run as Gemini runs them (its event names, no tool
    call id, GEMINI_PROJECT_DIR): no banned module, exactly the smllm modules listed."""
    names = {"PreToolUse": "BeforeTool", "PostToolUse": "AfterTool",
             "UserPromptSubmit": "BeforeAgent", "Stop": "AfterAgent"}
    payload = json.dumps({"session_id": SID, "cwd": str(tmp_path), "hook_event_name":
                          names[event], "timestamp": "2026-12-01T10:00:00.000Z",
                          "transcript_path": str(tmp_path / "chat.jsonl"), **extra}).encode()
    hook = [sys.executable, "-c", "from smllm.hooks import cli; cli()", event,
            "--harness", "gemini"]
    env = {**os.environ, "GEMINI_PROJECT_DIR": str(tmp_path)}
    subprocess.run(hook, input=payload, capture_output=True, check=True, cwd=tmp_path, env=env)
    proc = subprocess.run([sys.executable, "-X", "importtime", *hook[1:]], input=payload,
                          capture_output=True, check=True, cwd=tmp_path, env=env)
    loaded = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
              if line.startswith("import time:") and "|" in line}
    heavy = sorted(n for n in loaded if n.split(".")[0] in BANNED)
    mine = {n for n in loaded if n.split(".")[0] == "smllm"}
    assert ([], set(), set()) == (heavy, mine - expected, expected - mine)

def test_a_hook_without_smllm_variables_does_not_look_for_them(tmp_path: Path) -> None:
    """As a user's hooks run (no ``SMLLM_*`` variable: smllm's folders are the platform's),
    a hook does not load the module that finds the ones a project's settings set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMLLM_")}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    names = _imported("UserPromptSubmit", tmp_path, env=env)
    assert "smllm.hooks.user_prompt_submit" in names
    assert "smllm.base.knobs" not in names
    assert list((tmp_path / "data" / "smllm" / "sessions").rglob("session.jsonl"))


def test_the_mcp_server_answers_before_loading_what_a_tool_call_needs(tmp_path: Path) -> None:
    """Claude Code starts the MCP server with every session where it is registered: it
    answers ``initialize`` and ``tools/list`` without argparse, typing, the json package or
    the machine code (loaded at the first tool call)."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18"}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "smllm", "mcp"],
                          input="".join(json.dumps(m) + "\n" for m in messages).encode(),
                          capture_output=True, check=True, cwd=tmp_path)
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [1, 2] == [r["id"] for r in replies]
    assert "smllm" == replies[1]["result"]["tools"][0]["name"]
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
             if line.startswith("import time:") and "|" in line}
    assert "smllm.commands.mcp" in names
    assert [] == sorted(n for n in names if n.split(".")[0] in ("argparse", "typing", "json")
                        or n.startswith("smllm.machine"))
