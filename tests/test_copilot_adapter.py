"""The Copilot adapter (issue 22): native camelCase payloads in smllm's shape, Copilot's
tools as the catalogue's, the id of each call found in Copilot's events.jsonl, model calls
read from it, and answers in the flat native shape Copilot reads (a Claude-format answer in
a native hook file is ignored: the tool would run)."""

from __future__ import annotations

import doctest
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import PYTHON, kind, records, smllm
from smllm.harness import copilot, copilot_events

SID = "5f0c2d1e-0000-4000-8000-00000000c0p1".replace("p", "a")


def _line(kind_: str, data: dict[str, Any], n: int) -> str:
    return json.dumps({"type": kind_, "data": data, "id": f"e{n}",
                       "timestamp": f"2026-12-06T04:00:{n:02d}.000Z"}) + "\n"


class Session:
    """A Copilot session as its hooks see it: a project, ``COPILOT_HOME`` with the session's
    events.jsonl (written as Copilot writes it before each hook), and the hooks run as
    installed (``smllm-hook EVENT --harness copilot``) with native payloads."""

    def __init__(self, root: Path, smllm_home: Path) -> None:
        self.project = root / "proj"
        (self.project / ".git").mkdir(parents=True)
        self.copilot_home = root / "copilot-home"
        self.events = self.copilot_home / "session-state" / SID / "events.jsonl"
        self.events.parent.mkdir(parents=True)
        self.events.write_text(_line("session.start", {"selectedModel": "claude-sonnet-4.5"}, 0))
        self.n = 1
        self.env = {**os.environ, "COPILOT_HOME": str(self.copilot_home),
                    "SMLLM_HOME": str(smllm_home)}
        self.env.pop("CLAUDE_PROJECT_DIR", None)

    def write(self, kind_: str, data: dict[str, Any]) -> None:
        with self.events.open("a") as fh:
            fh.write(_line(kind_, data, self.n))
        self.n += 1

    def model_call(self, msg: str, calls: list[tuple[str, str, dict[str, Any]]],
                   text: str = "") -> None:
        self.write("session.usage_record", {"usage": {"model": "claude-sonnet-4.5",
                                                      "inputTokens": 10, "outputTokens": 5}})
        self.write("assistant.message", {"apiCallId": msg, "content": text, "toolRequests": [
            {"toolCallId": cid, "name": name, "arguments": args} for cid, name, args in calls]})
        for cid, name, args in calls:
            self.write("tool.execution_start", {"toolCallId": cid, "toolName": name,
                                                "arguments": args})

    def hook(self, event: str, data: dict[str, Any] | bytes, *,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        raw = data if isinstance(data, bytes) else json.dumps(
            {"sessionId": SID, "timestamp": 1796530021588 + self.n, "cwd": str(self.project),
             **data}).encode()
        return subprocess.run(
            [PYTHON, "-c", "from smllm.hooks import cli; cli()", event, "--harness", "copilot"],
            input=raw, capture_output=True, cwd=self.project,
            env={**self.env, **(env or {})}, timeout=60, check=False)

    def answer(self, event: str, data: dict[str, Any] | bytes, **kw: Any
               ) -> dict[str, Any] | None:
        proc = self.hook(event, data, **kw)
        assert 0 == proc.returncode, proc.stderr.decode()
        out = proc.stdout.decode()
        return json.loads(out) if out.strip() else None

    def tool(self, cid: str, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """A model call choosing the tool, then its preToolUse answer."""
        self.model_call(f"msg_{cid}", [(cid, name, args)])
        return self.answer("PreToolUse", {"toolName": name, "toolArgs": args})

    def done(self, cid: str, name: str, args: dict[str, Any]) -> None:
        assert self.answer("PostToolUse", {"toolName": name, "toolArgs": args, "toolResult": {
            "resultType": "success", "textResultForLlm": "ok"}}) is None
        self.write("tool.execution_complete", {"toolCallId": cid, "success": True})


@pytest.fixture
def session(tmp_path: Path, smllm_home: Path) -> Session:
    return Session(tmp_path, smllm_home)


def _fields(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def test_a_session_is_journaled_with_copilots_ids_and_model_calls(session: Session) -> None:
    assert session.answer("SessionStart", {"source": "new", "initialPrompt": "go"}) is None
    assert session.answer("UserPromptSubmit", {"prompt": "go"}) is None
    echo = {"command": "echo hi > a.txt", "description": "write a"}
    # the default policy leaves a safe call to Copilot's own permissions: no answer
    assert session.tool("toolu_1", "bash", echo) is None
    session.done("toolu_1", "bash", echo)
    create = {"path": str(session.project / "notes.md"), "file_text": "hello\n"}
    assert session.tool("toolu_2", "create", create) is None
    session.done("toolu_2", "create", create)
    push = {"command": "git push --force origin main", "description": "push"}
    denied = session.tool("toolu_3", "bash", push)
    # the flat native deny (a hookSpecificOutput object would be ignored and the push run)
    assert denied is not None
    assert "hookSpecificOutput" not in denied
    assert ("deny", True) == (denied["permissionDecision"],
                              "smllm policy denies this call" in denied["permissionDecisionReason"])
    session.write("tool.execution_complete", {"toolCallId": "toolu_3", "success": False})
    session.model_call("msg_end", [], "All done.")
    assert session.answer("Stop", {"transcriptPath": str(session.events),
                                   "stopReason": "end_turn", "stop_hook_active": False}) is None
    assert session.answer("SessionEnd", {"reason": "complete"}) is None
    recs = records(SID)
    kinds = [kind(r) for r in recs]
    start = _fields(recs[0])
    assert ("session.start", "copilot", "copilot") == (kinds[0], start["host"], start["harness"])
    intents = {_fields(r)["tool_use_id"]: _fields(r) for r in recs
               if kind(r) == "side_effect_intent"}
    assert ["toolu_1", "toolu_2", "toolu_3"] == list(intents)
    # Copilot's tools as the catalogue's, Copilot's name kept
    assert ("Bash", "bash") == (intents["toolu_1"]["tool_name"], intents["toolu_1"]["host_tool"])
    assert ("Write", "create", str(session.project / "notes.md")) == (
        intents["toolu_2"]["tool_name"], intents["toolu_2"]["host_tool"],
        intents["toolu_2"]["input"]["file_path"])
    assert intents["toolu_3"]["policy_decision"] == "deny:policy"
    terminal = {_fields(r)["tool_use_id"] for r in recs if kind(r) == "tool_batch.effect.terminal"}
    assert {"toolu_1", "toolu_2"} == terminal
    # every model call, before the intent of the call it chose
    calls = [_fields(r) for r in recs if kind(r) == "model.call"]
    assert ["msg_toolu_1", "msg_toolu_2", "msg_toolu_3", "msg_end"] == [
        c["message_id"] for c in calls]
    assert ([["toolu_1"], ["toolu_2"], ["toolu_3"], []], "All done.", 10) == (
        [c["tool_use_ids"] for c in calls], calls[-1]["text"], calls[0]["usage"]["input_tokens"])
    order = [(kind(r), _fields(r).get("message_id") or _fields(r).get("tool_use_id"))
             for r in recs if kind(r) in ("model.call", "side_effect_intent")]
    assert order.index(("model.call", "msg_toolu_2")) < order.index(
        ("side_effect_intent", "toolu_2"))
    assert ("completed", "session.end") == (kinds[-2], kinds[-1])
    verify = smllm("verify", SID, env=session.env)
    assert 0 == verify.returncode, verify.stdout + verify.stderr


def test_identical_calls_in_one_batch_get_their_own_ids(session: Session) -> None:
    """A parallel batch of two identical calls: each PreToolUse takes the first id not
    journaled yet, each PostToolUse the first journaled one."""
    session.answer("SessionStart", {"source": "new"})
    ls = {"command": "ls", "description": "list"}
    session.model_call("msg_1", [("toolu_a", "bash", ls), ("toolu_b", "bash", ls)])
    for _ in range(2):
        session.answer("PreToolUse", {"toolName": "bash", "toolArgs": ls})
    session.done("toolu_a", "bash", ls)
    session.done("toolu_b", "bash", ls)
    recs = records(SID)
    assert ["toolu_a", "toolu_b"] == [_fields(r)["tool_use_id"] for r in recs
                                      if kind(r) == "side_effect_intent"]
    assert ["toolu_a", "toolu_b"] == [_fields(r)["tool_use_id"] for r in recs
                                      if kind(r) == "tool_batch.effect.terminal"]


def test_copilots_own_configuration_and_smllms_are_guarded(session: Session) -> None:
    session.answer("SessionStart", {"source": "new"})
    hooks = {"path": str(session.project / ".github" / "hooks" / "x.json"),
             "file_text": "{}"}
    out = session.tool("toolu_1", "create", hooks)
    assert out is not None
    assert out["permissionDecision"] == "deny"
    assert "smllm protects Copilot's configuration" in out["permissionDecisionReason"]
    home = {"command": f"echo '{{}}' > {session.copilot_home}/config.json", "description": "x"}
    out = session.tool("toolu_2", "bash", home)
    assert out is not None
    assert "Copilot's configuration" in out["permissionDecisionReason"]
    own = {"path": str(session.project / ".smllm" / "policy.toml"), "old_str": "a",
           "new_str": "b"}
    out = session.tool("toolu_3", "edit", own)
    assert out is not None
    assert out["permissionDecision"] == "deny"
    assert "smllm protects itself" in out["permissionDecisionReason"]


def test_an_escalation_is_a_deny_saying_how_to_approve(session: Session) -> None:
    session.answer("SessionStart", {"source": "new"})
    (session.project / "build").mkdir()
    out = session.tool("toolu_1", "bash", {"command": "rm -rf build", "description": "x"})
    assert out is not None
    assert out["permissionDecision"] == "deny"
    assert "smllm does not hand this call to Copilot's prompt" in out["permissionDecisionReason"]


def test_a_crashing_or_late_gate_denies_in_the_native_shape(session: Session,
                                                            tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    args = {"command": "echo ran > marker.txt", "description": "x"}
    session.model_call("msg_1", [("toolu_1", "bash", args)])
    crashed = session.answer("PreToolUse", {"toolName": "bash", "toolArgs": args},
                             env={"SMLLM_HOME": str(blocker)})
    assert crashed is not None
    assert crashed["permissionDecision"] == "deny"
    assert "(fail closed)" in crashed["permissionDecisionReason"]
    late = session.answer("PreToolUse", {"toolName": "bash", "toolArgs": args},
                          env={"SMLLM_HOOK_DEADLINE": "0.000001"})
    assert late == {"permissionDecision": "deny", "permissionDecisionReason":
                    "smllm could not decide on this call and denies it (fail closed): the "
                    "hook ran out of time (0 s, SMLLM_HOOK_DEADLINE)"}
    garbled = session.answer("PreToolUse", b"{not json")
    assert garbled is not None
    assert garbled["permissionDecision"] == "deny"


def test_context_for_the_model_is_flat() -> None:
    """SessionStart/UserPromptSubmit context: Copilot's native file reads it at the top
    level only (a Claude-format SessionStart context is dropped, measured)."""
    result = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "C"}}
    assert {"additionalContext": "C"} == copilot.native("SessionStart", result)
    assert {"decision": "block", "reason": "R"} == copilot.native(
        "Stop", {"decision": "block", "reason": "R"})
    assert {"permissionDecision": "deny", "permissionDecisionReason": copilot.NO_REASON} == \
        copilot.native("PreToolUse", {"hookSpecificOutput": {"permissionDecision": "deny"}})


def test_the_tool_catalogue_mapping() -> None:
    for name, args, tool, key in [
            ("bash", {"command": "ls"}, "Bash", "command"),
            ("create", {"path": "/p/a", "file_text": "x"}, "Write", "file_path"),
            ("edit", {"path": "/p/a", "old_str": "x", "new_str": "y"}, "Edit", "file_path"),
            ("view", {"path": "/p/a"}, "Read", "file_path"),
            ("sql", {"query": "select 1"}, "sql", "query")]:
        call = copilot.tool_call({"session_id": "s", "cwd": "/p", "tool_name": name,
                                  "tool_input": args, "tool_use_id": "t"})
        assert (tool, True) == (call.tool, key in call.input)
    assert "other" == copilot.tool_call({"session_id": "s", "cwd": "/p", "tool_name": "sql",
                                         "tool_input": {}, "tool_use_id": "t"}).kind


def test_call_id_reads_only_the_tail_it_needs(tmp_path: Path) -> None:
    """A call whose start line is past the first tail read is still found (up to the
    bounded tail); an unknown call or a missing file gives None."""
    path = tmp_path / "events.jsonl"
    big = "x" * (copilot_events.TAIL + 10)
    path.write_text(_line("tool.execution_start", {"toolCallId": "t1", "toolName": "create",
                                                   "arguments": {"file_text": big}}, 1)
                    + _line("hook.start", {}, 2))
    assert "t1" == copilot_events.call_id(str(path), "create", {"file_text": big}, pre=True,
                                          claimed=set)
    assert copilot_events.call_id(str(path), "bash", {}, pre=True, claimed=set) is None
    assert copilot_events.call_id(str(tmp_path / "none"), "bash", {}, pre=True,
                                  claimed=set) is None


@pytest.mark.parametrize("module", [copilot, copilot_events], ids=lambda m: m.__name__)
def test_the_modules_examples_hold(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert (result.failed, result.attempted > 0) == (0, True)


def test_claude_codes_hooks_run_by_copilot_leave_it_to_the_copilot_hooks(
        session: Session, tmp_path: Path) -> None:
    """Copilot runs .claude/settings.json's hooks too (Claude-format payload: an ISO
    timestamp, no tool_use_id): smllm's Claude Code hook then answers nothing when smllm's
    Copilot hooks are installed, and denies (saying what to install) when they are not. A
    variable alone does not silence Claude Code's hooks: its payloads always carry a
    tool_use_id or a permission_mode."""
    claude_format = {"hook_event_name": "PreToolUse", "session_id": SID,
                     "timestamp": "2026-12-06T04:00:00.000Z", "cwd": str(session.project),
                     "tool_name": "Bash", "tool_input": {"command": "echo hi > a.txt"}}
    env = {**session.env, "COPILOT_CLI": "1"}

    def claude_hook(event: str, data: dict[str, Any]) -> dict[str, Any] | None:
        proc = subprocess.run([PYTHON, "-c", "from smllm.hooks import cli; cli()", event],
                              input=json.dumps(data).encode(), capture_output=True,
                              cwd=session.project, env=env, timeout=60, check=False)
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    denied = claude_hook("PreToolUse", claude_format)
    assert denied is not None
    assert copilot.NOT_INSTALLED == denied["hookSpecificOutput"]["permissionDecisionReason"]
    hooks = session.project / ".github" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "smllm.json").write_text("{}")
    assert claude_hook("PreToolUse", claude_format) is None
    assert claude_hook("Stop", {**claude_format, "hook_event_name": "Stop"}) is None
    # Claude Code's own payload, even with COPILOT_CLI set, is gated as ever
    real = {k: v for k, v in claude_format.items() if k != "timestamp"}
    bash = claude_hook("PreToolUse", {**real, "tool_use_id": "toolu_1",
                                      "tool_input": {"command": "git push --force origin main"},
                                      "permission_mode": "default"})
    assert bash is not None
    assert "deny" == bash["hookSpecificOutput"]["permissionDecision"]
    assert copilot.under_copilot(json.dumps({**claude_format, "permission_mode": "x"}).encode(),
                                 env) is None


def test_a_subagents_calls_go_to_its_own_log(session: Session) -> None:
    """Copilot's sub-agent hooks carry ``agentId``: its start, its calls and its stop are
    journaled in the sub-agent's log, the main log keeps the main agent's."""
    session.answer("SessionStart", {"source": "new"})
    agent = {"agentId": "a1b2", "agentType": "general-purpose", "agentName": "general-purpose",
             "parentAgentId": "main"}
    assert session.answer("SubagentStart", {**agent, "transcriptPath": str(session.events)}
                          ) is None
    ls = {"command": "ls", "description": "list"}
    session.model_call("msg_sub", [("toolu_sub", "bash", ls)])
    assert session.answer("PreToolUse", {**agent, "toolName": "bash", "toolArgs": ls}) is None
    assert session.answer("PostToolUse", {**agent, "toolName": "bash", "toolArgs": ls,
                                          "toolResult": {"resultType": "success"}}) is None
    session.write("tool.execution_complete", {"toolCallId": "toolu_sub", "success": True})
    assert session.answer("SubagentStop", {**agent, "response": "Sub done.",
                                           "stopReason": "end_turn",
                                           "stop_hook_active": False}) is None
    from smllm import journal

    sub = list(journal.iter_records(journal.log_path(SID, agent_id="a1b2")))
    assert "side_effect_intent" in [kind(r) for r in sub]
    assert [("side_effect_intent", "toolu_sub"), ("tool_batch.effect.terminal", "toolu_sub")] == [
        (kind(r), _fields(r)["tool_use_id"]) for r in sub
        if kind(r) in ("side_effect_intent", "tool_batch.effect.terminal")]
    assert "side_effect_intent" not in [kind(r) for r in records(SID)]
