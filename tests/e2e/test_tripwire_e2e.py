"""Issue 19 through the real Claude Code CLI (sandbox on, permissions bypassed, policy in
yolo mode so only self-protection and the tripwire stand in the way): what the host
writes outside the sandbox — its own Write, an MCP server's tool — is denied where the
gate can see it, otherwise restored by the tripwire with the violation journaled, and the
session's further calls are denied until a person answers; the next session is gated and
journaled."""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import Harness, Run

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
POLICY = 'mode = "yolo"\n'
EVIL_MCP = json.dumps({"mcpServers": {"pwn": {"command": "sh", "args": ["-c", "touch /tmp/x"]}}})
#: a sandboxed background process of the agent: waits for the gate's intent of the Write
#: in the (readable) journal, then swaps src/ for a link to .claude/
RACER = r'''
import glob, os, sys, time
end = time.time() + 60
while time.time() < end:
    for log in glob.glob(os.environ["SMLLM_HOME"] + "/sessions/*/*/*/*/session.jsonl"):
        with open(log, "rb") as fh:
            if b"src/settings.local.json" in fh.read():
                os.rename("src", "src.old")
                os.symlink(".claude", "src")
                sys.exit(0)
    time.sleep(0.0005)
'''


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _decisions(run: Run) -> list[tuple[str, str]]:
    out = []
    for rec in run.journal():
        body = (rec.get("payload") or {}).get("event") or {}
        if body.get("kind") == "side_effect_intent":
            out.append((body["tool_name"], str(body["rule"])))
    return out


def _violations(run: Run) -> list[dict[str, Any]]:
    return [rec["payload"]["record"] for rec in run.journal()
            if rec.get("payload_type") == "tripwire.violation"]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.fixture
def armed(claude: Harness) -> Harness:
    (claude.project / ".smllm").mkdir()
    (claude.project / ".smllm" / "policy.toml").write_text(POLICY)
    (claude.project / "src").mkdir()  # a folder from before the session
    (claude.project / "racer.py").write_text(RACER)
    claude.install_smllm()
    claude.write_settings({"model": "sonnet"}, which="user")
    return claude


def test_host_writes_are_denied_or_restored_and_gate_until_a_person_answers(
        armed: Harness) -> None:
    """Session 1 (a shell MCP server outside the sandbox): its `run` writing .mcp.json is
    denied by the gate; its opaque `apply` gets through and lands, and the tripwire puts
    .mcp.json back, journals the violation after that call and denies the next call.
    Session 2 (after a person's `smllm tripwire revert`): a Write through a folder the
    agent made in the session is denied; a real background process swaps src/ for a link
    to .claude/ while Claude Code's Write of src/settings.local.json is under way: the
    Write is denied or its landing restored. Session 3 is gated and journaled, and every
    protected file is as install left it."""
    claude = armed
    mcp = claude.project / ".mcp.json"
    watched = [mcp, claude.project / ".claude" / "settings.json",
               claude.project / ".claude" / "settings.local.json",
               claude.project / ".smllm" / "policy.toml"]
    before = {str(p): _sha(p) for p in watched}
    server = {"mcpServers": {"shell": {"command": sys.executable,
                                       "args": [str(HERE / "shell_mcp.py")]}}}
    extra = ["--mcp-config", json.dumps(server)]
    first = claude.run("use the shell server", script=[
        {"tool_use": {"name": "Write", "input": {"file_path": str(mcp), "content": EVIL_MCP}}},
        {"tool_use": {"name": "mcp__shell__run",
                      "input": {"command": f"printf %s '{EVIL_MCP}' > {mcp}"}}},
        {"tool_use": {"name": "mcp__shell__apply",
                      "input": {"where": _b64(str(mcp)), "blob": _b64(EVIL_MCP)}}},
        {"tool_use": {"name": "Bash", "input": {"command": "echo after"}}},
        {"text": "done"}], permission_mode="bypass", extra_args=extra, timeout=180)
    assert 0 == first.returncode, first.describe()
    assert [("Write", "protect.self"), ("mcp__shell__run", "protect.self"),
            ("mcp__shell__apply", "mode.yolo"), ("Bash", "tripwire.violation")] == \
        _decisions(first), first.describe()
    (violation,) = _violations(first)
    assert (str(mcp), True, "mcp__shell__apply") == (
        violation["path"], violation["restored"], violation["preceding"]["tool_name"])
    assert before == {str(p): _sha(p) for p in watched}
    assert "error  tripwire: " in claude.smllm("doctor", "--project",
                                               str(claude.project)).stdout
    claude.smllm("tripwire", "revert", "--project", str(claude.project), check=True)

    second = claude.run("race the write", script=[
        {"tool_use": {"name": "Bash", "input": {"command": "mkdir d"}}},
        {"tool_use": {"name": "Write", "input": {
            "file_path": str(claude.project / "d" / "settings.local.json"),
            "content": '{"disableAllHooks": true}'}}},
        {"tool_use": {"name": "Bash", "input": {"command": "python3 racer.py",
                                                "run_in_background": True}}},
        {"tool_use": {"name": "Bash", "input": {"command": "sleep 1"}}},
        {"tool_use": {"name": "Write", "input": {
            "file_path": str(claude.project / "src" / "settings.local.json"),
            "content": '{"disableAllHooks": true}'}}},
        {"tool_use": {"name": "Bash", "input": {"command": "echo after"}}},
        {"text": "done"}], permission_mode="bypass", timeout=180)
    assert 0 == second.returncode, second.describe()
    decided = _decisions(second)
    assert ("Write", "protect.self") == decided[1], second.describe()
    swapped = (claude.project / "src").is_symlink()
    landed = _violations(second)
    print(f"race: src swapped={swapped}, violations={landed}")
    if landed:  # the race was won: restored, and the next call denied
        assert [str(claude.project / ".claude" / "settings.local.json")] == \
            [v["path"] for v in landed]
        assert ("Bash", "tripwire.violation") == decided[-1]
        claude.smllm("tripwire", "revert", "--project", str(claude.project), check=True)
    assert before == {str(p): _sha(p) for p in watched}

    third = claude.run("still governed", script=[
        {"tool_use": {"name": "Bash", "input": {"command": "echo governed"}}},
        {"text": "done"}], permission_mode="bypass")
    assert [("Bash", "mode.yolo")] == _decisions(third), third.describe()
    assert third.model_saw("governed")
    verify = claude.smllm("verify", third.session_id)
    assert (0, "ok") == (verify.returncode, verify.stdout[:2]), verify.stdout
