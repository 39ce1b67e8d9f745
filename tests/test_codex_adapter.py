"""The Codex adapter (issue 21): payload -> ToolCall, patches judged by their files, and
answers that hold on Codex, where ``ask``, a reasonless deny and a crash let the tool run.

The property test runs the project's dangerous corpora through both adapters: whatever
the Claude Code hook denies or escalates is a deny with a reason on Codex.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import PYTHON, hook_output, kind, records, smllm
from smllm import gate
from smllm.gate import policy, review
from smllm.harness import claude, codex

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "corpus"))
import families
from cases import CASES, WORKSPACE_FILES

HOME = "/home/tester"


def _patch(*body: str) -> str:
    return "\n".join(("*** Begin Patch", *body, "*** End Patch", ""))


# ------------------------------------------------------------------ the patch reader


def test_patch_files_in_order() -> None:
    """Each file a patch adds, updates, moves to and deletes, with its action."""
    text = _patch("*** Add File: docs/a.md", "+hello", "*** Update File: src/b.py",
                  "*** Move to: src/c.py", "@@ def f():", "-    x", "+    y",
                  "*** End of File", "*** Delete File: old.txt")
    assert [("add", "docs/a.md"), ("update", "src/b.py"), ("move", "src/c.py"),
            ("delete", "old.txt")] == codex.patch_files(text)


@pytest.mark.parametrize(("text", "error"), [
    ("", "the patch does not start with '*** Begin Patch' (line 1)"),
    ("*** Add File: a\n+x\n*** End Patch\n", "does not start with '*** Begin Patch'"),
    ("*** Begin Patch\n*** Add File: a\n+x\n", "the patch has no '*** End Patch' line"),
    ("*** Begin Patch\n*** End Patch\n", "the patch changes no file"),
    ("*** Begin Patch\n*** Add File: \n*** End Patch\n", "names no file after"),
    ("*** Begin Patch\n*** Move to: x\n*** End Patch\n", "follows no '*** Update File:' (line 2)"),
    ("*** Begin Patch\n*** Rename File: x\n*** End Patch\n", "unknown header"),
])
def test_patch_errors_say_where(text: str, error: str) -> None:
    with pytest.raises(codex.PatchError) as info:
        codex.patch_files(text)
    assert error in info.value.render()


def test_a_patch_is_judged_as_write_and_edit_calls() -> None:
    call = codex.tool_call({"tool_name": "apply_patch", "session_id": "s", "cwd": "/p",
                            "tool_use_id": "t", "tool_input": {"command": _patch(
                                "*** Update File: a.py", "@@", "-x", "+y",
                                "*** Add File: b.py", "+z")}})
    judged = codex.judged(call)
    assert [("Edit", "a.py"), ("Write", "b.py")] == [
        (c.tool, c.input["file_path"]) for c in judged]
    assert {"codex"} == {c.harness for c in judged}
    assert {"t"} == {c.tool_use_id for c in judged}


def test_project_ignores_a_claude_code_folder(tmp_path: Path) -> None:
    """Codex declares no project: one inherited from a Claude Code session is not read."""
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    sub = tmp_path / "proj" / "src"
    sub.mkdir()
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s",
               "cwd": str(sub), "tool_use_id": "t"}
    call = codex.tool_call(payload, {"CLAUDE_PROJECT_DIR": "/elsewhere"})
    assert (str(tmp_path / "proj"), "codex") == (call.project, call.harness)
    assert "/elsewhere" == claude.tool_call(payload, {"CLAUDE_PROJECT_DIR": "/elsewhere"}).project


# ------------------------------------------------------------------ answers safe on Codex


@pytest.mark.parametrize(("decision", "blocked"), [
    ("deny", True), ("ask", True), ("allow", False), ("abstain", False), ("maybe", True)])
def test_answers(decision: str, blocked: bool) -> None:
    """Codex blocks only a deny with a reason: ask and anything unknown become one; allow
    and abstain print nothing (Codex has no plain allow)."""
    out = codex.pre_tool_use(decision, "because")
    if not blocked:
        assert out is None
        return
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert ("PreToolUse", "deny") == (spec["hookEventName"], spec["permissionDecision"])
    assert spec["permissionDecisionReason"].startswith("because" if decision != "maybe"
                                                       else "smllm cannot answer 'maybe'")
    if decision == "ask":
        assert codex.HOW_TO_APPROVE in spec["permissionDecisionReason"]


@pytest.mark.parametrize("reason", ["", "   ", "\n"])
def test_a_deny_always_has_a_reason(reason: str) -> None:
    assert codex.NO_REASON == codex.deny(reason)["hookSpecificOutput"][
        "permissionDecisionReason"]


def test_a_deny_is_claude_codes_deny() -> None:
    """The fail-closed answer hooks print on any crash (Claude Code's) also blocks Codex."""
    assert claude.deny("x") == codex.deny("x")


# ------------------------------------------------------------------ the property over the corpora


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One project holding both corpora's files, scripts and links."""
    root = tmp_path_factory.mktemp("codexcorpus") / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "build").mkdir()
    for name, text in {**WORKSPACE_FILES, **families.WORKSPACE}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    for name, target in families.LINKS.items():
        (root / name).symlink_to(target)
    return root


def _no_record(entries: list[Any], first: bool) -> None:
    """The review chain's journal, not kept here."""


def _claude_answer(payload: dict[str, Any], world: gate.World) -> dict[str, Any] | None:
    call = claude.tool_call(payload, {})
    v = review.evaluate(call, gate.decide(call, world), world.compiled, _no_record)
    return claude.pre_tool_use(v.decision, v.reason)


def _codex_answer(payload: dict[str, Any], world: gate.World) -> dict[str, Any] | None:
    call = codex.tool_call(payload)

    def decide(one: Any) -> gate.Verdict:
        return review.evaluate(one, gate.decide(one, world), world.compiled, _no_record)

    v = codex.verdict(call, decide, lambda c: None)
    return codex.pre_tool_use(v.decision, v.reason)


DANGEROUS = ([(f"bypass-{row}", command) for row, verdict, command in CASES if verdict != "allow"]
             + [(f"family-{family}", command) for family, _, command in families.DANGEROUS])


def _payload(tool: str, tool_input: dict[str, Any], cwd: Path, n: int) -> dict[str, Any]:
    return {"session_id": "corpus", "cwd": str(cwd), "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": tool_input, "tool_use_id": f"call_{n}",
            "permission_mode": "bypassPermissions"}


def test_what_claude_code_blocks_codex_blocks(workspace: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Every dangerous command of both corpora that the Claude Code adapter denies or
    escalates is a deny with a non-empty reason through the Codex adapter, its one JSON
    object on stdout; and the Codex adapter blocks nothing Claude Code would let run."""
    monkeypatch.setenv("HOME", HOME)
    world = gate.World(policy.load(str(workspace)), home=HOME)
    blocked = 0
    for n, (where, command) in enumerate(DANGEROUS):
        payload = _payload("Bash", {"command": command}, workspace, n)
        theirs = _claude_answer(payload, world)
        ours = _codex_answer(payload, world)
        decision = theirs["hookSpecificOutput"]["permissionDecision"] if theirs else None
        if decision in ("deny", "ask"):
            blocked += 1
            assert ours is not None, f"{where}: {command!r} runs on Codex"
            spec = json.loads(json.dumps(ours))["hookSpecificOutput"]
            assert "deny" == spec["permissionDecision"], f"{where}: {command!r}"
            assert spec["permissionDecisionReason"].strip(), f"{where}: {command!r}"
        else:
            assert ours is None, f"{where}: {command!r}: Codex blocks what Claude Code runs"
    assert blocked > 0.9 * len(DANGEROUS), (blocked, len(DANGEROUS))


PATCH_TARGETS = [".smllm/policy.toml", ".claude/settings.json", ".mcp.json",
                 ".codex/hooks.json", "src/app.py", "notes.md", "/etc/passwd", "../outside.txt"]


@pytest.mark.parametrize("target", PATCH_TARGETS)
@pytest.mark.parametrize(("header", "tool"), [("*** Add File: ", "Write"),
                                              ("*** Update File: ", "Edit"),
                                              ("*** Delete File: ", "Write")])
def test_a_patch_is_judged_like_write_and_edit(workspace: Path, target: str, header: str,
                                               tool: str) -> None:
    """A patch touching one file gets the decision Claude Code's Write/Edit of it gets
    (the protected set included); Codex's own folder is protected besides."""
    world = gate.World(policy.load(str(workspace)), home=str(workspace.parent))
    body = [header + target] + (["+x"] if "Add" in header else ["@@", "-a", "+b"]
                                if "Update" in header else [])
    ours = _codex_answer(_payload("apply_patch", {"command": _patch(*body)}, workspace, 0),
                         world)
    theirs = _claude_answer(_payload(tool, {"file_path": target, "content": "x"}, workspace, 0),
                            world)
    decision = theirs["hookSpecificOutput"]["permissionDecision"] if theirs else None
    if target.startswith((".smllm", ".claude", ".mcp", ".codex")):
        assert ours is not None
        assert "smllm protects" in ours["hookSpecificOutput"]["permissionDecisionReason"]
    if decision in ("deny", "ask") or target.startswith(".codex"):
        assert ours is not None
        assert "deny" == ours["hookSpecificOutput"]["permissionDecision"]
    else:
        assert ours is None


def test_a_patch_is_blocked_by_its_worst_file(workspace: Path) -> None:
    world = gate.World(policy.load(str(workspace)), home=str(workspace.parent))
    text = _patch("*** Add File: ok.md", "+fine", "*** Update File: .smllm/policy.toml",
                  "@@", "-a", "+b")
    out = _codex_answer(_payload("apply_patch", {"command": text}, workspace, 0), world)
    assert out is not None
    assert out["hookSpecificOutput"]["permissionDecisionReason"].startswith(
        "smllm protects itself: Edit of .smllm/policy.toml")


# ------------------------------------------------------------------ through the hook entry


def _codex_hook(event: str, payload: dict[str, Any] | bytes,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([PYTHON, "-c", "from smllm.hooks import cli; cli()", event,
                           "--harness", "codex"], input=data, capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=60, check=False)


def _fields(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def _of(recs: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [_fields(r) for r in recs if kind(r) == name]


def test_hook_entry_speaks_codex(tmp_path: Path) -> None:
    """``EVENT --harness codex``: an escalation is a reasoned deny, stdout one JSON object, the
    review it opened closed as refused; session.start names the harness; an allowed call
    prints nothing and its PostToolUse (a string output) closes it."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    base = {"session_id": "cx1", "cwd": str(project), "permission_mode": "bypassPermissions",
            "transcript_path": str(tmp_path / "rollout.jsonl")}
    assert b"" == _codex_hook("SessionStart", {**base, "hook_event_name": "SessionStart",
                                               "source": "startup", "model": "gpt-5.5"}).stdout
    ask = _codex_hook("PreToolUse", {**base, "hook_event_name": "PreToolUse",
                                     "tool_name": "Bash", "tool_input": {"command": "rm -rf build"},
                                     "tool_use_id": "c1"})
    out = hook_output(ask)
    assert out is not None
    assert 0 == ask.stdout.count(b"\n")
    assert "deny" == out["hookSpecificOutput"]["permissionDecision"]
    assert codex.HOW_TO_APPROVE in out["hookSpecificOutput"]["permissionDecisionReason"]
    shell = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "echo hi > a.txt"}, "tool_use_id": "c2"}
    assert b"" == _codex_hook("PreToolUse", shell).stdout
    post = {**shell, "hook_event_name": "PostToolUse", "tool_response": "ok\n"}
    assert b"" == _codex_hook("PostToolUse", post).stdout
    recs = records("cx1")
    start = _fields(recs[0])
    assert ("codex", "codex") == (start["harness"], start["host"])
    intents = _of(recs, "side_effect_intent")
    assert ["deny:policy", "allow:policy"] == [i["policy_decision"] for i in intents]
    assert "ask:user" == intents[0]["smllm_verdict"]
    applied = _of(recs, "decision_applied")
    assert [("rejected", "host")] == [(a["decision"], a["decision_source"]["kind"])
                                      for a in applied]
    terminal = _of(recs, "tool_batch.effect.terminal")
    listed = smllm("sessions", "--all", "--json")
    assert 0 == listed.returncode, listed.stderr
    assert [("cx1", "codex")] == [(r["session_id"], r.get("harness"))
                                  for r in map(json.loads, listed.stdout.splitlines())]
    assert "cx1 (codex)" in smllm("sessions", "--all").stdout
    assert [("c2", "succeeded", "ok\n")] == [
        (t["tool_use_id"], t["outcome"], t["output"]) for t in terminal]


@pytest.mark.parametrize("case", ["store-unusable", "deadline", "bad-input", "bad-harness"])
def test_a_hook_that_fails_still_blocks(tmp_path: Path, case: str) -> None:
    """Whatever goes wrong, Codex gets a deny with a reason on stdout and exit 0 (exit 1,
    exit 3, a timeout or text after the JSON would let the tool run)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    payload: dict[str, Any] | bytes = {
        "session_id": "cx2", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "c1"}
    env: dict[str, str] = {}
    args = ["PreToolUse", "--harness", "codex"]
    if case == "store-unusable":
        env["SMLLM_HOME"] = str(blocker)
    elif case == "deadline":
        env["SMLLM_HOOK_DEADLINE"] = "0.000001"
    elif case == "bad-input":
        payload = b'{"session_id": "cx2", "tool_name": 3}'
    else:
        args = ["PreToolUse", "--harness", "frobnicator"]
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = subprocess.run([PYTHON, "-c", "from smllm.hooks import cli; cli()", *args],
                          input=data, capture_output=True, env={**os.environ, **env},
                          timeout=60, check=False)
    assert 0 == proc.returncode, proc.stderr.decode()
    out = hook_output(proc)
    assert out is not None, proc.stderr.decode()
    spec = out["hookSpecificOutput"]
    assert "deny" == spec["permissionDecision"]
    assert spec["permissionDecisionReason"].strip()


# ------------------------------------------------------------------ the rollout reader


def _rollout_line(kind: str, payload: dict[str, Any], n: int) -> str:
    return json.dumps({"timestamp": f"2026-12-01T00:00:0{n}.000Z", "ordinal": n, "type": kind,
                       "payload": payload}) + "\n"


def test_model_calls_come_from_the_rollout(tmp_path: Path) -> None:
    """Each token_usage_record closes one model call; a line still being written waits for
    the next hook; nothing is journaled twice."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    rollout = tmp_path / "rollout-x.jsonl"
    rollout.write_text(_rollout_line("session_meta", {"cwd": str(project)}, 0))
    base = {"session_id": "cx3", "cwd": str(project), "permission_mode": "bypassPermissions",
            "transcript_path": str(rollout)}
    _codex_hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    with rollout.open("a") as fh:
        fh.write(_rollout_line("turn_context", {"model": "gpt-5.5"}, 1))
        fh.write(_rollout_line("response_item", {"type": "reasoning", "summary": [
            {"type": "summary_text", "text": "think"}]}, 2))
        fh.write(_rollout_line("response_item", {"type": "function_call", "call_id": "c1",
                                                 "name": "exec_command"}, 3))
        fh.write(_rollout_line("token_usage_record", {"response_id": "resp_1",
                                                      "usage": {"input_tokens": 7}}, 4))
        fh.write(_rollout_line("response_item", {"type": "message", "role": "assistant",
                                                 "content": [{"type": "output_text",
                                                              "text": "done"}]}, 5)[:-20])
    pre = {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": "ls"}, "tool_use_id": "c1"}
    assert b"" == _codex_hook("PreToolUse", pre).stdout
    kinds = [kind(r) for r in records("cx3")]
    assert ["session.start", "model.call", "side_effect_intent"] == kinds[:3]
    first = _of(records("cx3"), "model.call")[0]
    assert ("resp_1", "gpt-5.5", "tool_use", ["c1"], None, {"input_tokens": 7}) == (
        first["message_id"], first["model"], first["stop_reason"], first["tool_use_ids"],
        first["text"], first["usage"])
    assert first["thinking"]["omitted_live_only"]["bytes"] == len("think")
    text = rollout.read_text()
    rollout.write_text(text + _rollout_line("response_item", {
        "type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "done"}]}, 5)[-20:]
        + _rollout_line("token_usage_record", {"response_id": "resp_2", "usage": {}}, 6))
    _codex_hook("Stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False})
    calls = _of(records("cx3"), "model.call")
    assert [("resp_1", None), ("resp_2", "done")] == [(c["message_id"], c["text"]) for c in calls]
    assert 0 == smllm("verify", "cx3").returncode


def test_smllm_resume_reopens_a_codex_session_in_codex(tmp_path: Path) -> None:
    """`smllm resume ID` prints the reconciliation, then runs `codex resume <thread>
    ARGS...` in the session's folder (a Claude Code session keeps `claude --resume`)."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    base = {"session_id": "cx4", "cwd": str(project), "permission_mode": "bypassPermissions"}
    _codex_hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    _codex_hook("PreToolUse", {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": "echo hi > a.txt"},
                               "tool_use_id": "c1"})
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "codex-called.json"
    fake = bindir / "codex"
    fake.write_text("#!/usr/bin/env python3\nimport json, os, sys\n"
                    f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], "
                    "'cwd': os.getcwd()}))\n")
    fake.chmod(0o755)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    proc = smllm("resume", "cx4", "--", "--model", "gpt-5.5", env=env, cwd=project)
    assert 0 == proc.returncode, proc.stderr
    assert "unknown" in proc.stdout
    assert "re-opening cx4 in Codex" in proc.stdout
    called = json.loads(record.read_text())
    assert (["resume", "cx4", "--model", "gpt-5.5"], str(project)) == (called["argv"],
                                                                     called["cwd"])


# ------------------------------------------------------- smllm fire from Codex's shell

SEED001 = Path(__file__).parent / "golden" / "seed001"


@pytest.mark.parametrize(("command", "plain"), [
    ("smllm fire enter --param stateMachine=fix",
     ("fire", "enter", ["stateMachine=fix"], None, False)),
    ("  smllm   fire reproduced --param bugId=BUG-7 --param=note=x --session sm-abc  ",
     ("fire", "reproduced", ["bugId=BUG-7", "note=x"], "sm-abc", False)),
    ("smllm fire 'fixed' --param \"note=a b\" --json",
     ("fire", "fixed", ["note=a b"], None, True)),
    ("smllm fire --session=sm-abc done", ("fire", "done", [], "sm-abc", False)),
    ("smllm status", ("status", None, [], None, False)),
    ("smllm status --session sm-abc --json", ("status", None, [], "sm-abc", True)),
    (f"{Path(sys.executable).parent}/smllm fire x", ("fire", "x", [], None, False)),
])
def test_a_plain_fire_is_read_exactly(command: str, plain: tuple[Any, ...]) -> None:
    from smllm.harness import codex_fire

    assert plain == tuple(codex_fire.parse(command) or ())


@pytest.mark.parametrize("command", [
    "smllm fire x; rm -rf ~", "smllm fire x && rm -rf ~", "smllm fire x || true",
    "smllm fire x | tee f", "smllm fire x &", "smllm fire x;", "smllm fire x # note",
    "smllm fire $(id)", "smllm fire `id`", "smllm fire $X", "smllm fire \"$(id)\"",
    "smllm fire ${X}", "smllm fire x --param a=$(id)", "smllm fire ~", "smllm fire x*",
    "smllm fire {a,b}", "smllm fire x > f", "smllm fire x 2>&1", "smllm fire x < f",
    "smllm fire x <<< y", "SMLLM_HOME=/tmp smllm fire x", "env smllm fire x",
    "(smllm fire x)", "{ smllm fire x; }", "smllm fire x\nrm -rf ~", "smllm fire x \\\n y",
    "/tmp/smllm fire x", "./smllm fire x", "smllm-evil fire x", "smllm fire",
    "smllm fire x y", "smllm fire x --force", "smllm fire x --session", "smllm fire -x",
    "smllm status --param a=b", "smllm status x", "smllm reconcile", "smllm export",
    "smllm fire 'x", "echo smllm fire x", "smllm fire x --session --json",
])
def test_hostile_look_alikes_are_not_plain(command: str) -> None:
    """Anything but one simple command of literal words is left to the gate."""
    from smllm.harness import codex_fire

    assert codex_fire.parse(command) is None


def _machine_project(tmp_path: Path, machine: str | None = None) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".smllm").mkdir()
    (project / ".smllm" / "config.toml").write_text((SEED001 / "config.toml").read_text())
    (project / ".smllm" / "fix.smllm.yaml").write_text(
        machine or (SEED001 / "fix.smllm.yaml").read_text())
    return project


def _audit(home: Path) -> list[dict[str, Any]]:
    [path] = (home / "audit").glob("sm-*.jsonl")
    return [json.loads(x) for x in path.read_text().splitlines()]


def _reason(proc: subprocess.CompletedProcess[bytes]) -> str:
    out = hook_output(proc)
    assert out is not None, proc.stderr.decode()[-2000:]
    assert "deny" == out["hookSpecificOutput"]["permissionDecision"]
    return str(out["hookSpecificOutput"]["permissionDecisionReason"])


def test_the_hook_runs_a_plain_fire_and_answers_with_its_output(
        tmp_path: Path, smllm_home: Path) -> None:
    """Codex's sandbox keeps smllm's store read-only to the agent's shell: the hook runs a
    plain fire itself, in the session bound to the Codex thread, and the deny's reason is
    what the fire printed; the journal keeps the gate's decision, rule
    machine.fire-in-hook, and what the fire did. A look-alike is not run."""
    from smllm.harness import codex_fire

    project = _machine_project(tmp_path)
    base = {"session_id": "cx-fire", "cwd": str(project), "permission_mode": "bypassPermissions",
            "transcript_path": str(tmp_path / "rollout.jsonl")}
    env = {"SMLLM_IDS": "sm-cxfire,i-100001"}
    _codex_hook("SessionStart", {**base, "hook_event_name": "SessionStart",
                                 "source": "startup", "model": "gpt-5.5"}, env)

    def shell(n: int, command: str) -> subprocess.CompletedProcess[bytes]:
        return _codex_hook("PreToolUse", {**base, "hook_event_name": "PreToolUse",
                                          "tool_name": "Bash", "tool_use_id": f"c{n}",
                                          "tool_input": {"command": command}}, env)

    entered = _reason(shell(1, "smllm fire enter --param stateMachine=fix"))
    assert entered.startswith(codex_fire.HEAD)
    assert "Arrived by: enter (new bug)" in entered
    assert "exit status" not in entered
    refused = _reason(shell(2, "smllm fire fixed"))
    assert refused.startswith(codex_fire.HEAD)
    assert "fixed is not offered here" in refused
    assert refused.endswith("(exit status 1)")
    status = _reason(shell(3, "smllm status --json"))
    shown = json.loads(status[len(codex_fire.HEAD):])
    assert ("sm-cxfire", "TRIAGE") == (shown["session"], shown["location"]["state"])
    for n, command in enumerate(["smllm fire reproduced --param bugId=BUG-7; rm -rf ~",
                                 "smllm fire reproduced --param bugId=$(id)",
                                 "smllm fire reproduced --param bugId=BUG-7 > f",
                                 "SMLLM_HOME=/tmp smllm fire reproduced --param bugId=BUG-7"],
                                4):
        out = hook_output(shell(n, command))
        reason = "" if out is None else out["hookSpecificOutput"]["permissionDecisionReason"]
        assert not reason.startswith(codex_fire.HEAD), command
    audit = _audit(smllm_home)
    assert [("bind", None, "accepted"), ("fire", "enter", "accepted"),
            ("fire", "fixed", "refused")] == [
        (ln["call"], ln["event"], ln["outcome"]) for ln in audit]
    assert ("codex", "cx-fire") == (audit[0]["binding"]["harness"],
                                    audit[0]["binding"]["hostSession"])
    recs = records("cx-fire")
    intents = {i["tool_use_id"]: i for i in _of(recs, "side_effect_intent")}
    assert [("allow:policy", codex_fire.RULE, "machine.fire")] * 3 == [
        (intents[t]["policy_decision"], intents[t]["rule"], intents[t]["gate_rule"])
        for t in ("c1", "c2", "c3")]
    assert {"c4", "c5", "c6", "c7"} <= set(intents)
    assert not any(intents[t]["rule"] == codex_fire.RULE for t in ("c4", "c5", "c6", "c7"))
    terminal = {t["tool_use_id"]: t for t in _of(recs, "tool_batch.effect.terminal")}
    assert [("succeeded", "accepted", "smllm", "PreToolUse"),
            ("failed", "refused", "smllm", "PreToolUse"),
            ("succeeded", None, "smllm", "PreToolUse")] == [
        (terminal[t]["outcome"], terminal[t]["fire"], terminal[t]["ran_by"],
         terminal[t]["observed_via"]) for t in ("c1", "c2", "c3")]
    assert "Arrived by: enter (new bug)" in terminal["c1"]["output"]
    assert {"sm-cxfire"} == {terminal[t]["session"] for t in ("c1", "c2", "c3")}
    assert 0 == smllm("verify", "cx-fire").returncode


def test_a_fire_whose_guard_runs_a_command_runs_it_sandboxed_from_the_hook(
        tmp_path: Path, smllm_home: Path) -> None:
    """Issue 19: the hook runs a fire whose guard runs a command (outside Codex's sandbox,
    on files the agent wrote) with the guard in smllm's own sandbox: the check runs (it
    writes its result into the project), but its attempts at the project's .smllm/ and at
    a file outside the project change nothing; the fire is journaled as run by smllm."""
    from smllm.harness import codex_fire

    marker = tmp_path / "guard-ran-outside"
    run = (f"echo ran > out/ran; touch {marker}; echo x >> .smllm/config.toml; "
           "test -f out/ran")
    machine = (SEED001 / "fix.smllm.yaml").read_text().replace(
        "reproduced: { target: FIX, actions: setRef }",
        "reproduced: { target: FIX, actions: setRef, guard: { type: command, params: "
        f"{{ run: \"{run}\" }} }} }}")
    assert "type: command" in machine
    project = _machine_project(tmp_path, machine)
    (project / "out").mkdir()
    config = (project / ".smllm" / "config.toml").read_bytes()
    base = {"session_id": "cx-guard", "cwd": str(project), "permission_mode": "bypassPermissions",
            "transcript_path": str(tmp_path / "rollout.jsonl")}
    _codex_hook("SessionStart", {**base, "hook_event_name": "SessionStart",
                                 "source": "startup", "model": "gpt-5.5"},
                {"SMLLM_IDS": "sm-cxguard"})
    entered = smllm("fire", "--session", "sm-cxguard", "enter", "--param", "stateMachine=fix",
                    cwd=project)
    assert 0 == entered.returncode, entered.stderr
    reason = _reason(_codex_hook("PreToolUse", {
        **base, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "g1",
        "tool_input": {"command": "smllm fire reproduced --param bugId=BUG-7"}}))
    assert reason.startswith(codex_fire.HEAD), reason
    assert "Arrived by: reproduced" in reason
    assert ("ran\n", False, config) == ((project / "out" / "ran").read_text(), marker.exists(),
                                        (project / ".smllm" / "config.toml").read_bytes())
    fired = _audit(smllm_home)[-1]
    assert (["bind", "fire", "fire"], "accepted", "bwrap") == (
        [ln["call"] for ln in _audit(smllm_home)], fired["outcome"],
        fired["trace"][0]["sandbox"])
    [intent] = _of(records("cx-guard"), "side_effect_intent")
    assert ("allow:policy", codex_fire.RULE, "smllm") == (
        intent["policy_decision"], intent["rule"], intent["ran_by"])
