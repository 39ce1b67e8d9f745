"""`smllm machine list|validate`, `smllm session show`, and the MCP server's protocol."""


from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from machine_project import REPO, Project
from smllm.commands import mcp


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The four shipped machines in a fresh project."""
    return Project(tmp_path / "p", {p.name: p.read_text()
                                    for p in sorted((REPO / "machines").glob("*.smllm.yaml"))})


def test_machine_list(project: Project) -> None:
    """`smllm machine list` names each configured machine with its file."""
    proc = project.cli("machine", "list")
    ids = [line.split("  ")[0] for line in proc.stdout.splitlines()]
    assert (0, ["feature", "fix", "release", "review"]) == (proc.returncode, ids)


@pytest.mark.parametrize("action", [["list"], ["validate"], ["draw", "fix"]])
def test_outside_a_project_is_an_error(tmp_path: Path, action: list[str]) -> None:
    """Without .smllm/config.toml `machine list` (and validate, draw) says so and exits 1
    (it used to print nothing and exit 0)."""
    bare = Project.__new__(Project)
    bare.root = tmp_path
    proc = bare.cli("machine", *action)
    expected = (1, "", f"smllm: error: no .smllm/config.toml in {tmp_path} (create "
                       'one with [machines] files = ["fix.smllm.yaml"], or name machine files: '
                       "smllm machine validate FILE)\n")
    assert expected == (proc.returncode, proc.stdout, proc.stderr)


def test_machine_validate_defaults_to_the_config(project: Project) -> None:
    """`smllm machine validate` without files checks every configured machine."""
    proc = project.cli("machine", "validate")
    assert (0, 4) == (proc.returncode, proc.stdout.count("\nok: ") + proc.stdout.startswith(
        "ok: "))


def test_machine_draw_dot_marks_the_current_state(project: Project) -> None:
    """`--format dot --session` fills the instance's current state."""
    _, key, _ = project.fire(None, "enter", stateMachine="review")
    proc = project.cli("machine", "draw", "review", "--format", "dot", "--session", key)
    assert '    "READ" [style="rounded,filled", fillcolor="#ffcc66"];\n' in proc.stdout
    assert '    "ASSESS" -> "APPROVED" [label="approve"];\n' in proc.stdout


def test_session_list_orders_by_activity_and_aligns(project: Project,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions are listed most recently active first, in aligned columns."""
    t0 = 1_760_000_000_000  # one clock step per call: no two calls share a millisecond
    monkeypatch.setenv("SMLLM_NOW", str(t0))
    _, first, _ = project.fire(None, "enter", stateMachine="fix")
    monkeypatch.setenv("SMLLM_NOW", str(t0 + 1000))
    _, second, _ = project.fire(None, "enter", stateMachine="release")
    monkeypatch.setenv("SMLLM_NOW", str(t0 + 2000))
    project.fire(first, "pause")
    rows = project.cli("session", "list").stdout.splitlines()
    assert [first, second] == [r.split()[0] for r in rows]
    assert 1 == len({r.index("last active") for r in rows})
    assert "  idle" in rows[0]


def test_session_show_json(project: Project) -> None:
    """`smllm session show KEY --json` is the state with its location."""
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    shown = json.loads(project.cli("session", "show", key, "--json").stdout)
    assert ("fix", "TRIAGE", "cli") == (shown["location"]["machine"],
                                        shown["location"]["state"],
                                        shown["binding"]["harness"])


def test_session_show_unknown_key(project: Project) -> None:
    """An unknown session is a one-line error, exit 1."""
    proc = project.cli("session", "show", "sm-nope", "--audit")
    assert (1, "smllm: error: no smllm session 'sm-nope' (run `smllm session list` to see "
               "the sessions)\n") == (proc.returncode, proc.stderr)


MCP_CASES: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
    ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 1, "result": {}}),
    ({"jsonrpc": "2.0", "id": 2, "method": "nope"},
     {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "method not found: nope"}}),
    ({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "other"}},
     {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "unknown tool 'other'"}}),
    ({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
      "params": {"name": "smllm", "arguments": {"event": "x", "params": {"a": 1}}}},
     {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text":
      "smllm: error: params must map names to strings (e.g. {\"bugId\": \"BUG-7\"})"}],
      "isError": True}}),
]


@pytest.mark.parametrize(("message", "expected"), MCP_CASES)
def test_mcp_protocol(message: dict[str, Any], expected: dict[str, Any] | None) -> None:
    """The server answers JSON-RPC requests, ignores notifications, reports bad calls."""
    assert expected == mcp.handle(message)


def test_mcp_server_fires_over_stdio(project: Project) -> None:
    """`smllm mcp`: initialize, list the tool, fire; a refusal comes back as isError."""
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "smllm",
         "arguments": {"session": key, "event": "fixed"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "smllm",
         "arguments": {"session": key, "event": "reproduced", "params": {"bugId": "BUG-1"}}}},
    ]
    proc = subprocess.run([sys.executable, "-m", "smllm", "mcp"], cwd=project.root,
                          input="".join(json.dumps(m) + "\n" for m in lines), text=True,
                          capture_output=True, timeout=60, check=False)
    replies = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [1, 2, 3, 4] == [r["id"] for r in replies]
    assert ("2025-06-18", ["smllm"]) == (replies[0]["result"]["protocolVersion"],
                                         [t["name"] for t in replies[1]["result"]["tools"]])
    assert (True, False) == (replies[2]["result"]["isError"], replies[3]["result"]["isError"])
    assert "error: fixed is not offered here" in replies[2]["result"]["content"][0]["text"]
    assert "Arrived by: reproduced from TRIAGE" in replies[3]["result"]["content"][0]["text"]


@pytest.mark.parametrize("command", [["fire", "--session", "{key}", "yield"],
                                     ["hook", "Stop"]])
def test_hot_path_imports_no_yaml_or_pydantic(project: Project, command: list[str]) -> None:
    """With machines cached, `smllm fire` and the Stop hook import no yaml/pydantic/toml."""
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    body = json.dumps({"session_id": "cc-1", "cwd": str(project.root),
                       "hook_event_name": "Stop", "stop_hook_active": False})
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "smllm",
                           *[c.replace("{key}", key) for c in command]],
                          cwd=project.root, input=body, text=True, capture_output=True,
                          timeout=60, check=False)
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert set() == imported & {"yaml", "pydantic", "tomllib", "tomli", "jsonschema",
                                "smllm.machine.loader", "smllm.machine._yaml"}
