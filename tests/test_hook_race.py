"""PermissionRequest and PostToolUse race (Claude Code runs the first while the person
answers): the journal is the same whichever lands first (issue 20, journal/hostcall.py).

Each test replays one call Claude Code decides (``defer:host``) through the real hook
entry points, with a transcript written as Claude Code 2.1.332 writes it: the tool use
before PreToolUse, the tool_result line (with Claude Code's ``permissionDecision``) after
PostToolUse, then the model's next message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, kind, records

TID = "toolu_race_1"
USER_ALLOW = {"decision": "accept", "source": "user_temporary", "grantScope": "once"}
USER_DENY = {"decision": "reject", "source": "user_reject", "reasonCode": "unknown"}
MODE_ALLOW = {"decision": "accept", "source": "config", "reasonType": "mode"}
HOST_DENY = {"decision": "reject", "source": "config", "reasonCode": "unknown"}


class Session:
    def __init__(self, tmp_path: Path, name: str) -> None:
        self.sid = f"race-{name}"
        self.cwd = tmp_path / name
        self.cwd.mkdir()
        self.transcript = tmp_path / f"{name}.jsonl"
        self.tool = {"tool_name": "Write", "cwd": str(self.cwd), "tool_input": {
            "file_path": str(self.cwd / "notes.md"), "content": "hello\n"}}

    def line(self, obj: dict[str, Any]) -> None:
        with self.transcript.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")

    def hook(self, event: str, **extra: Any) -> None:
        tid = {} if event == "PermissionRequest" else {"tool_use_id": TID}
        payload = base(event, self.sid, transcript_path=str(self.transcript),
                       **self.tool, **tid, **extra)
        proc = hook(event, payload)
        assert 0 == proc.returncode, proc.stderr.decode()

    def start(self) -> None:
        hook("SessionStart", base("SessionStart", self.sid, source="startup", cwd=str(self.cwd),
                                  transcript_path=str(self.transcript)))
        self.line({"type": "assistant", "uuid": "a1", "message": {
            "id": "msg_1", "model": "claude-test", "role": "assistant", "stop_reason": "tool_use",
            "usage": {}, "content": [{"type": "tool_use", "id": TID, "name": "Write",
                                      "input": self.tool["tool_input"]}]}})
        self.hook("PreToolUse")

    def result(self, permission: dict[str, Any], *, error: bool) -> None:
        self.line({"type": "user", "uuid": "u1", "permissionDecision": permission,
                   "message": {"role": "user", "content": [{
                       "type": "tool_result", "tool_use_id": TID, "is_error": error,
                       "content": "no" if error else "File created"}]}})
        self.line({"type": "assistant", "uuid": "a2", "message": {
            "id": "msg_2", "model": "claude-test", "role": "assistant", "stop_reason": "end_turn",
            "usage": {}, "content": [{"type": "text", "text": "done"}]}})

    def end(self) -> list[dict[str, Any]]:
        hook("Stop", base("Stop", self.sid, transcript_path=str(self.transcript),
                          cwd=str(self.cwd), stop_hook_active=False))
        hook("SessionEnd", base("SessionEnd", self.sid, transcript_path=str(self.transcript),
                                cwd=str(self.cwd), reason="other"))
        return records(self.sid)


def _body(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    return payload.get("event") or payload.get("record") or {}


def _summary(recs: list[dict[str, Any]]) -> tuple[list[str], list[Any], dict[str, str]]:
    """(kinds, the terminals' authorized_by, each wait's last state)."""
    waits: dict[str, str] = {}
    for r in recs:
        if kind(r) == "approval_wait.effect.started":
            waits[_body(r)["pending_action_id"]] = "open"
        elif kind(r) == "approval_wait.effect.terminal":
            waits[_body(r)["pending_action_id"]] = _body(r)["outcome"]
    return ([kind(r) for r in recs],
            [_body(r).get("authorized_by") for r in recs
             if kind(r) == "tool_batch.effect.terminal"], waits)


CALL = ["side_effect_intent", "approval.review", "approval_wait.effect.started",
        "decision_applied", "approval_wait.effect.terminal", "tool_batch.effect.started",
        "tool_batch.effect.terminal"]


@pytest.mark.parametrize("order", ["prompt-first", "post-first", "prompt-after-the-line"])
def test_a_person_approves_whichever_hook_lands_first(tmp_path: Path, order: str) -> None:
    """The same kinds in causal order, allow:user, the wait closed approved, for each order;
    no tool_batch.effect.started before the authorization is known."""
    s = Session(tmp_path, order)
    s.start()
    assert "tool_batch.effect.started" not in [kind(r) for r in records(s.sid)]
    if order == "prompt-first":
        s.hook("PermissionRequest")
        s.hook("PostToolUse", tool_response={"type": "create"})
        s.result(USER_ALLOW, error=False)
    elif order == "post-first":
        s.hook("PostToolUse", tool_response={"type": "create"})
        s.hook("PermissionRequest")
        s.result(USER_ALLOW, error=False)
    else:  # the line (and a later hook reading it) before PermissionRequest lands at all
        s.hook("PostToolUse", tool_response={"type": "create"})
        s.result(USER_ALLOW, error=False)
        hook("Stop", base("Stop", s.sid, transcript_path=str(s.transcript), cwd=str(s.cwd),
                          stop_hook_active=False))
        s.hook("PermissionRequest")
    kinds, auth, waits = _summary(s.end())
    start = kinds.index("side_effect_intent")
    assert (CALL, ["allow:user"], ["approved"]) == (
        kinds[start:start + len(CALL)], auth, list(waits.values())), kinds
    assert kinds.count("approval.review") == 1


def test_the_orders_give_the_same_journal(tmp_path: Path) -> None:
    """Kinds and bodies (ids and times aside) agree across the two landing orders."""
    def run(order: str) -> list[tuple[str, Any, Any, Any]]:
        s = Session(tmp_path, order)
        s.start()
        first, second = (("PermissionRequest", "PostToolUse") if order == "a"
                         else ("PostToolUse", "PermissionRequest"))
        for event in (first, second):
            extra = {"tool_response": {"type": "create"}} if event == "PostToolUse" else {}
            s.hook(event, **extra)
        s.result(USER_ALLOW, error=False)
        return [(kind(r), _body(r).get("authorized_by"), _body(r).get("outcome"),
                 _body(r).get("decision")) for r in s.end()]
    assert run("a") == run("b")


@pytest.mark.parametrize(("permission", "prompt", "expected", "wait"), [
    (USER_DENY, True, "deny:user", ["rejected"]),
    (HOST_DENY, True, "deny:host", ["rejected"]),
])
def test_a_refusal_closes_its_prompt(tmp_path: Path, permission: dict[str, Any], prompt: bool,
                                     expected: str, wait: list[str]) -> None:
    """A person's no is deny:user (Claude Code's permissionDecision says so, whatever the
    tool_result's text); Claude Code refusing on its own is deny:host; no start either way."""
    s = Session(tmp_path, permission["source"])
    s.start()
    if prompt:
        s.hook("PermissionRequest")
    s.result(permission, error=True)
    kinds, auth, waits = _summary(s.end())
    assert ([expected], wait, False) == (auth, list(waits.values()),
                                         "tool_batch.effect.started" in kinds), kinds


def test_allowed_without_a_prompt_is_allow_host(tmp_path: Path) -> None:
    """No prompt (acceptEdits): allow:host, started and terminal together, no wait."""
    s = Session(tmp_path, "mode")
    s.start()
    s.hook("PostToolUse", tool_response={"type": "create"})
    s.result(MODE_ALLOW, error=False)
    kinds, auth, waits = _summary(s.end())
    start = kinds.index("side_effect_intent")
    assert (["side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal"],
            ["allow:host"], {}) == (kinds[start:start + 3], auth, waits)


def test_a_crash_with_the_prompt_open_closes_the_wait_unknown(tmp_path: Path) -> None:
    """The session dies while the prompt is shown: the resume closes the wait ``unknown``
    and reports the call as an unknown effect (it may have run)."""
    s = Session(tmp_path, "crash")
    s.start()
    s.hook("PermissionRequest")
    hook("SessionStart", base("SessionStart", s.sid, source="resume", cwd=str(s.cwd),
                              transcript_path=str(s.transcript)))
    recs = records(s.sid)
    _, _, waits = _summary(recs)
    intent = next(r for r in recs if kind(r) == "side_effect_intent")["sequence"]
    resumed = _body(next(r for r in recs if kind(r) == "session.resumed"))
    assert (["unknown"], [intent]) == (list(waits.values()), resumed["unknown_effects"])
