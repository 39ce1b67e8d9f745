"""Gemini CLI's adapter (issue 22) without the CLI: its events, payloads and tools read as
smllm's, the calls paired without an id from the host, the model calls read from its chat
file, every answer safe on Gemini (a reasoned deny or nothing, never ``ask``), whatever
fails; and hooks that take no orders from the project's dotenv or settings."""

from __future__ import annotations

import doctest
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import records
from smllm.base import knobs
from smllm.harness import gemini, gemini_chat

PYTHON = sys.executable
SID = "5f0c2e1a-9d8b-4c7a-8e6f-1a2b3c4d5e6f"
#: Gemini CLI's names of smllm's events
NAMES = dict(gemini.EVENTS)


class Session:
    """Gemini's hooks of one session, run as Gemini CLI runs them (``smllm-hook EVENT
    --harness gemini``, the Gemini event name in the payload, GEMINI_PROJECT_DIR set)."""

    def __init__(self, tmp_path: Path, sid: str = SID) -> None:
        self.project = tmp_path / "proj"
        self.project.mkdir(exist_ok=True)
        (self.project / ".git").mkdir(exist_ok=True)
        self.chat = tmp_path / "chat.jsonl"
        self.chat.write_text(json.dumps({"sessionId": sid, "kind": "main"}) + "\n")
        self.sid = sid
        self.clock = 0

    def say(self, mid: str, text: str = "") -> None:
        """The model's response ``mid`` lands in the chat file (as Gemini writes it)."""
        self.clock += 1
        with self.chat.open("a") as fh:
            fh.write(json.dumps({"id": mid, "type": "gemini", "content": text,
                                 "model": "gemini-3.8-flash", "thoughts": [],
                                 "tokens": {"input": 100, "output": 20, "total": 120},
                                 "timestamp": f"2026-12-01T10:00:{self.clock:02d}.000Z"}) + "\n")

    def result(self, name: str) -> None:
        """A tool's result, as the next user line of the chat file."""
        with self.chat.open("a") as fh:
            fh.write(json.dumps({"id": f"u{self.clock}", "type": "user", "content": [
                {"functionResponse": {"name": name, "response": {"output": "ok"}}}]}) + "\n")

    def hook(self, event: str, env: dict[str, str] | None = None, raw: bytes | None = None,
             **fields: Any) -> subprocess.CompletedProcess[bytes]:
        payload = {"session_id": self.sid, "transcript_path": str(self.chat),
                   "cwd": str(self.project), "hook_event_name": NAMES[event],
                   "timestamp": "2026-12-01T10:00:30.000Z", **fields}
        data = raw if raw is not None else json.dumps(payload).encode()
        return subprocess.run(
            [PYTHON, "-c", "from smllm.hooks import cli; cli()", event, "--harness", "gemini"],
            input=data, capture_output=True, timeout=60, check=False, cwd=self.project,
            env={**os.environ, "GEMINI_PROJECT_DIR": str(self.project),
                 "CLAUDE_PROJECT_DIR": str(self.project), **(env or {})})

    def tool(self, name: str, tool_input: dict[str, Any], **kw: Any) -> dict[str, Any] | None:
        proc = self.hook("PreToolUse", tool_name=name, tool_input=tool_input, **kw)
        assert 0 == proc.returncode, proc.stderr.decode()
        return _output(proc)

    def after(self, name: str, tool_input: dict[str, Any], response: object = None) -> None:
        proc = self.hook("PostToolUse", tool_name=name, tool_input=tool_input,
                         tool_response=response or {"llmContent": "ok", "returnDisplay": ""})
        assert (0, b"") == (proc.returncode, proc.stdout), proc.stderr.decode()


def _output(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any] | None:
    out = proc.stdout.decode()
    return json.loads(out) if out.strip() else None


def _fields(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def _kind(rec: dict[str, Any]) -> str:
    return str(rec["payload"].get("event", {}).get("kind") or rec["payload_type"])


@pytest.mark.parametrize("module", [gemini, gemini_chat], ids=lambda m: m.__name__)
def test_the_adapters_examples_hold(module: object) -> None:
    """The modules' examples are true."""
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert (result.failed, result.attempted > 0) == (0, True)


def test_a_session_is_journaled_in_causal_order_and_verifies(tmp_path: Path) -> None:
    """A Gemini session through its hooks: the start names the harness, each model call is
    journaled before the calls it chose (with their ids), Gemini's tools are judged and
    journaled as the catalogue's, each call's end is paired with its start without an id
    from Gemini, and the log verifies."""
    s = Session(tmp_path)
    assert 0 == s.hook("SessionStart", source="startup").returncode
    assert 0 == s.hook("UserPromptSubmit", prompt="fix it").returncode
    s.say("m1")
    shell = {"command": "echo hi > a.txt", "description": "write a"}
    assert s.tool("run_shell_command", shell) is None  # nothing printed: the tool runs
    s.after("run_shell_command", shell)
    s.result("run_shell_command")
    s.say("m2")
    note = {"file_path": "notes.md", "content": "hi\n"}
    assert s.tool("write_file", note) is None
    s.after("write_file", note)
    s.result("write_file")
    s.say("m3", "All done.")
    stop = s.hook("Stop", prompt="fix it", prompt_response="All done.", stop_hook_active=False)
    assert (0, b"") == (stop.returncode, stop.stdout)
    assert 0 == s.hook("SessionEnd", reason="exit").returncode
    recs = records(s.sid)
    kinds = [_kind(r) for r in recs]
    assert ["session.start", "proposed", "accepted", "model.call", "side_effect_intent",
            "tool_batch.effect.started", "tool_batch.effect.terminal", "model.call",
            "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
            "model.call", "completed", "session.end"] == kinds
    start = _fields(recs[0])
    assert ("gemini", "gemini") == (start["harness"], start["host"])
    calls = [_fields(r) for r in recs if _kind(r) == "model.call"]
    intents = [_fields(r) for r in recs if _kind(r) == "side_effect_intent"]
    ends = [_fields(r) for r in recs if _kind(r) == "tool_batch.effect.terminal"]
    assert [["m1", "m2", "m3"], [[intents[0]["tool_use_id"]], [intents[1]["tool_use_id"]], []],
            ["tool_use", "tool_use", "end_turn"]] == [
        [c["message_id"] for c in calls], [c["tool_use_ids"] for c in calls],
        [c["stop_reason"] for c in calls]]
    assert ("All done.", "gemini-3.8-flash", 120) == (calls[2]["text"], calls[2]["model"],
                                                     calls[2]["usage"]["total"])
    assert [("Bash", "run_shell_command", "tool:bash", "defer:host"),
            ("Write", "write_file", "tool:write", "defer:host")] == [
        (i["tool_name"], i["host_tool"], i["operation"], i["policy_decision"]) for i in intents]
    assert [i["tool_use_id"] for i in intents] == [e["tool_use_id"] for e in ends]
    assert [("succeeded", "allow:host")] * 2 == [(e["outcome"], e["authorized_by"])
                                                for e in ends]
    completed = _fields(recs[-2])
    assert "All done." == completed["last_assistant_message"]
    verify = subprocess.run([PYTHON, "-m", "smllm", "verify", s.sid], capture_output=True,
                            text=True, check=False)
    assert 0 == verify.returncode, verify.stdout + verify.stderr


def test_identical_calls_get_their_own_ids_and_end_oldest_first(tmp_path: Path) -> None:
    """Two identical calls asked for in the same millisecond (a model that repeats itself,
    run in parallel) get two ids; AfterTool closes the older first; a failed tool (Gemini's
    ``error`` in ``tool_response``) ends ``failed``."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.say("m1")
    shell = {"command": "ls"}
    assert s.tool("run_shell_command", shell) is None
    assert s.tool("run_shell_command", shell) is None
    s.after("run_shell_command", shell, {"llmContent": "", "error": {"message": "boom"}})
    s.after("run_shell_command", shell)
    recs = records(s.sid)
    intents = [_fields(r)["tool_use_id"] for r in recs if _kind(r) == "side_effect_intent"]
    ends = [(_fields(r)["tool_use_id"], _fields(r)["outcome"]) for r in recs
            if _kind(r) == "tool_batch.effect.terminal"]
    assert intents[1] == intents[0] + ".2"
    assert [(intents[0], "failed"), (intents[1], "succeeded")] == ends
    calls = [_fields(r) for r in recs if _kind(r) == "model.call"]
    assert [(None, intents[:1]), (2, intents[1:])] == [(c.get("part"), c["tool_use_ids"])
                                                      for c in calls]


def test_a_call_another_hook_blocked_ends_refused_by_the_host(tmp_path: Path) -> None:
    """smllm leaves a call to Gemini, and another BeforeTool hook blocks it: no AfterTool
    comes, and the chat file's record of the call (its response written again with the
    call's error) closes it at the next hook, refused by the host; the log verifies."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.say("m1")
    shell = {"command": "echo x > forbidden.txt", "description": "scripted"}
    assert s.tool("run_shell_command", shell) is None
    with s.chat.open("a") as fh:
        fh.write(json.dumps({
            "id": "m1", "type": "gemini", "content": "", "timestamp": "2026-12-01T10:00:01.000Z",
            "toolCalls": [{"id": "run_shell_command__c1", "name": "run_shell_command",
                           "args": shell, "status": "error", "result": [{"functionResponse": {
                               "id": "run_shell_command__c1", "name": "run_shell_command",
                               "response": {"error": "Tool execution blocked: not here"}}}]}],
        }) + "\n")
    s.result("run_shell_command")
    s.say("m2", "done")
    assert 0 == s.hook("Stop", prompt="go", prompt_response="done").returncode
    recs = records(s.sid)
    (intent,) = [_fields(r) for r in recs if _kind(r) == "side_effect_intent"]
    (end,) = [_fields(r) for r in recs if _kind(r) == "tool_batch.effect.terminal"]
    assert (intent["tool_use_id"], "refused_by_host", "deny:host", "transcript") == (
        end["tool_use_id"], end["outcome"], end["authorized_by"], end["observed_via"])
    assert "Tool execution blocked: not here" in end["detail"]
    verify = subprocess.run([PYTHON, "-m", "smllm", "verify", s.sid], capture_output=True,
                            text=True, check=False)
    assert 0 == verify.returncode, verify.stdout + verify.stderr


def _reason(out: dict[str, Any] | None) -> str:
    assert out is not None
    assert "deny" == out["decision"]
    return str(out["reason"])


def test_dangerous_and_self_protecting_calls_are_denied_with_a_reason(tmp_path: Path) -> None:
    """Each answer Gemini reads as a block: the policy's deny, a write into Gemini's own
    configuration (the project's .gemini/ and .geminiignore, the user's ~/.gemini) by its
    file tools or a command, a command that asks to widen the tool sandbox, and an
    escalation, which Gemini cannot put to a person: a deny saying how to approve, and the
    review it opened closed as refused by the host."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    cases = [
        ("run_shell_command", {"command": "git push --force origin main"},
         "smllm policy denies this call: git push"),
        ("write_file", {"file_path": ".gemini/settings.json", "content": "{}"},
         "smllm protects Gemini CLI's configuration: Write would write"),
        ("replace", {"file_path": str(s.project / ".geminiignore"), "old_string": ".smllm/",
                     "new_string": "", "instruction": "x"},
         "smllm protects Gemini CLI's configuration: Edit would write"),
        ("run_shell_command", {"command": "echo '{}' > ~/.gemini/settings.json"},
         "smllm protects Gemini CLI's configuration"),
        ("run_shell_command", {"command": "ls", "additional_permissions": {
            "fileSystem": {"write": [str(home)]}}},
         "smllm denies a command that asks to widen Gemini CLI's tool sandbox"),
        ("run_shell_command", {"command": "rm -rf build"}, gemini.HOW_TO_APPROVE),
    ]
    for name, tool_input, expected in cases:
        proc = s.hook("PreToolUse", env=env, tool_name=name, tool_input=tool_input)
        assert 0 == proc.returncode, proc.stderr.decode()
        assert expected in _reason(_output(proc)), (name, tool_input)
    recs = records(s.sid)
    decisions = [_fields(r)["policy_decision"] for r in recs if _kind(r) == "side_effect_intent"]
    assert ["deny:policy"] * len(cases) == decisions
    assert [("rejected", "rejected")] == [
        (_fields(r)["decision"], _fields(x)["outcome"]) for r, x in itertools.pairwise(recs)
        if _kind(r) == "decision_applied" and _kind(x) == "approval_wait.effect.terminal"]
    assert not any(_kind(r) == "tool_batch.effect.started" for r in recs)


def test_a_commands_folder_is_where_it_runs(tmp_path: Path) -> None:
    """run_shell_command's ``dir_path`` is the folder the command runs in: ``rm -rf .`` there
    is judged as the deletion of that folder (here smllm's own .smllm/)."""
    s = Session(tmp_path)
    (s.project / ".smllm").mkdir()
    s.hook("SessionStart", source="startup")
    out = s.tool("run_shell_command", {"command": "rm -rf .", "dir_path": ".smllm"})
    assert "smllm protects itself" in _reason(out)
    call = gemini.tool_call({"tool_name": "run_shell_command", "session_id": "s",
                             "cwd": str(s.project), "tool_input": {"command": "ls",
                                                                   "dir_path": ".smllm"}},
                            {"GEMINI_PROJECT_DIR": str(s.project)})
    assert (str(s.project / ".smllm"), str(s.project)) == (call.cwd, call.project)


def test_an_mcp_tool_is_judged_as_one() -> None:
    """A tool of an MCP server (Gemini's ``mcp_context``) is named ``mcp__<server>__<tool>``,
    the name the gate judges MCP tools by."""
    call = gemini.tool_call({"tool_name": "query", "session_id": "s", "cwd": "/p",
                             "tool_input": {"sql": "drop table x"},
                             "mcp_context": {"server_name": "db", "tool_name": "query"}}, {})
    assert ("mcp__db__query", "mcp") == (call.tool, call.kind)


@pytest.mark.parametrize("case", ["store-unusable", "deadline", "bad-input", "no-tool-name"])
def test_a_gating_hook_that_fails_still_denies_on_gemini(tmp_path: Path, case: str) -> None:
    """Whatever goes wrong, Gemini gets its own deny (``decision: deny`` with a reason) on
    stdout and exit 0: exit 1, a timeout, garbage or Claude Code's deny would let the tool
    run on Gemini CLI."""
    s = Session(tmp_path)
    env: dict[str, str] = {}
    raw = None
    if case == "store-unusable":
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("")
        env["SMLLM_HOME"] = str(blocker)
    elif case == "deadline":
        env["SMLLM_HOOK_DEADLINE"] = "0.000001"
    elif case == "bad-input":
        raw = b'{"session_id": "g2", "tool_name": 3}'
    elif case == "no-tool-name":
        raw = json.dumps({"session_id": "g2", "hook_event_name": "BeforeTool"}).encode()
    proc = s.hook("PreToolUse", env=env, raw=raw, tool_name="run_shell_command",
                  tool_input={"command": "ls"})
    assert 0 == proc.returncode, proc.stderr.decode()
    assert _reason(_output(proc)).strip()
    assert "hookSpecificOutput" not in (_output(proc) or {})


@pytest.mark.parametrize("files", [
    {"smllm/__init__.py": "raise ImportError('broken smllm')\n"},
    {"smllm/__init__.py": "", "smllm/hooks/__init__.py": "def (:\n"},
    {"_json.py": "raise RuntimeError('poisoned _json')\n"},
], ids=["smllm-broken", "hooks-syntax-error", "json-raises"])
def test_the_executable_blocks_on_gemini_when_smllm_cannot_start(tmp_path: Path,
                                                                 files: dict[str, str]) -> None:
    """smllm cannot even be imported: the installed executable still blocks the call the way
    Gemini CLI reads a block (exit 2 with the reason on stderr, or Gemini's deny on stdout),
    never exit 1 or Claude Code's deny, on which Gemini runs the tool."""
    from test_hook_executable import _poisoned

    exe = _poisoned(tmp_path, files)
    s = Session(tmp_path)
    payload = json.dumps({"session_id": SID, "cwd": str(s.project), "hook_event_name":
                          "BeforeTool", "tool_name": "run_shell_command",
                          "tool_input": {"command": "rm -rf ~/"}})
    gate = subprocess.run([str(exe), "PreToolUse", "--harness", "gemini"], input=payload,
                          capture_output=True, text=True, timeout=60, check=False,
                          cwd=s.project)
    assert "Traceback" not in gate.stderr
    if gate.returncode == 2:
        assert "the call is denied" in gate.stderr
    else:
        assert (0, "deny") == (gate.returncode, json.loads(gate.stdout)["decision"])


def test_the_fallback_deny_is_geminis_deny() -> None:
    """The prebuilt deny (no JSON module needed) of a Gemini hook is Gemini's object."""
    from smllm import hooks

    data = json.loads(hooks.fallback_deny("gemini").replace(b"REASON", b"why"))
    assert {"decision": "deny", "reason": "smllm could not decide on this call and denies "
                                          "it (fail closed): why"} == data
    assert "hookSpecificOutput" in json.loads(hooks.fallback_deny("codex"))


def test_outputs_speak_geminis_event_names(tmp_path: Path) -> None:
    """Context for the prompt goes out under Gemini's event name (BeforeAgent), a stop's
    block as it is; a Claude Code hook's output keeps Claude Code's names."""
    s = Session(tmp_path)
    (s.project / ".smllm").mkdir()
    seed = Path(__file__).parent / "golden" / "seed001"
    for name in ("config.toml", "fix.smllm.yaml"):
        (s.project / ".smllm" / name).write_text((seed / name).read_text())
    start = _output(s.hook("SessionStart", source="startup"))
    assert start is not None
    assert "SessionStart" == start["hookSpecificOutput"]["hookEventName"]
    assert "smllm fire --session" in start["hookSpecificOutput"]["additionalContext"]
    fire = s.tool("run_shell_command", {"command": "smllm fire enter --param stateMachine=fix"})
    assert "Arrived by: enter" in _reason(fire)
    prompt = _output(s.hook("UserPromptSubmit", prompt="go on"))
    assert prompt is not None
    assert "BeforeAgent" == prompt["hookSpecificOutput"]["hookEventName"]
    stop = _output(s.hook("Stop", prompt="go on", prompt_response="done",
                          stop_hook_active=False))
    assert stop is not None
    assert ("block", True) == (stop["decision"], "<smllm>" in stop["reason"])


def test_scrub_drops_what_the_projects_dotenv_and_hook_settings_set(tmp_path: Path) -> None:
    """Gemini CLI loads the project's dotenv file into the environment its hooks get, and
    a hook object's ``env``: for Gemini's hooks smllm drops every SMLLM_* variable those
    name; the user's own ~/.gemini/.env is the user's."""
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / ".env").write_text("SMLLM_NOW=5\n")
    project = home / "work" / "proj"
    (project / ".gemini").mkdir(parents=True)
    (project / ".gemini" / ".env").write_text("# planted\nexport SMLLM_FAULT=locked\nA=1\n")
    (project / ".gemini" / "settings.json").write_text(json.dumps({"hooks": {"BeforeTool": [
        {"hooks": [{"type": "command", "command": "x", "env": {"SMLLM_HOME": "/tmp/x"}}]}]}}))
    env = {"GEMINI_PROJECT_DIR": str(project), "HOME": str(home), "SMLLM_FAULT": "locked",
           "SMLLM_HOME": "/tmp/x", "SMLLM_NOW": "5", "A": "1"}
    assert ["SMLLM_FAULT", "SMLLM_HOME"] == knobs.scrub(env, harness="gemini")
    assert {"SMLLM_NOW", "A"} <= set(env)
    # .gemini/.env wins over .env, as in Gemini CLI; without it, .env (here a folder up)
    (project / ".gemini" / ".env").unlink()
    (project.parent / ".env").write_text("SMLLM_NOW=1\n")
    assert {str(project.parent / ".env"): ["SMLLM_NOW"],
            str(project / ".gemini" / "settings.json"): ["SMLLM_HOME"]} == \
        knobs.shipped_gemini(str(project), str(home))
    # Claude Code's hooks read their own settings, not Gemini's files
    env = {"CLAUDE_PROJECT_DIR": str(project), "HOME": str(home), "SMLLM_NOW": "1"}
    assert [] == knobs.scrub(env)


def test_a_gemini_hook_ignores_a_fault_point_the_project_ships(tmp_path: Path) -> None:
    """SMLLM_FAULT=locked in the project's .gemini/.env would SIGKILL the gate at the journal
    lock (and Gemini runs the tool when its hook dies): the hook drops it and decides."""
    s = Session(tmp_path)
    (s.project / ".gemini").mkdir()
    (s.project / ".gemini" / ".env").write_text("SMLLM_FAULT=locked\n")
    proc = s.hook("PreToolUse", env={"SMLLM_FAULT": "locked"}, tool_name="run_shell_command",
                  tool_input={"command": "git push --force origin main"})
    assert 0 == proc.returncode, proc.stderr.decode()
    assert "git push" in _reason(_output(proc))
    assert b"ignoring SMLLM_FAULT" in proc.stderr
