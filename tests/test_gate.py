"""The approval gate through the real PreToolUse/PostToolUse entry points (subprocesses)."""


from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, hook_output, kind, records, smllm
from judge_server import JudgeServer, judge_server

CHAIN = ["approval.review", "approval_wait.effect.started", "stage_requirement_resolved",
         "decision_applied", "approval_wait.effect.terminal", "side_effect_intent",
         "tool_batch.effect.started"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git project with the seed's sample files and an empty .smllm folder."""
    root = tmp_path / "billing_demo"
    (root / ".git").mkdir(parents=True)
    (root / ".smllm").mkdir()
    (root / "stale_cache.txt").write_text("cached rollup 2026-07-01\n")
    (root / "check_costs.py").write_text("print(round(1000 * 0.0417, 2))\n")
    return root


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    """A scripted judge on 127.0.0.1."""
    with judge_server() as server:
        yield server


def policy(project: Path, text: str) -> None:
    (project / ".smllm" / "policy.toml").write_text(text)


JUDGE_GATE = 'authority = "gate"\nreviewers = ["llm_judge"]\n[llm_judge]\ntimeout = 2\n'


def pre(project: Path, sid: str, command: str, tid: str, env: dict[str, str] | None = None,
        tool: str = "Bash", tool_input: dict[str, Any] | None = None,
        mode: str = "default") -> dict[str, Any] | None:
    payload = base("PreToolUse", sid, cwd=str(project), tool_name=tool,
                   tool_input=tool_input or {"command": command}, tool_use_id=tid,
                   permission_mode=mode)
    proc = hook("PreToolUse", payload, env=env, cwd=project)
    return hook_output(proc)


def judge_env(judge: JudgeServer) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": judge.url, "ANTHROPIC_API_KEY": "sk-test"}


def decision(out: dict[str, Any] | None) -> str:
    return "abstain" if out is None else str(out["hookSpecificOutput"]["permissionDecision"])


def intents(sid: str) -> list[dict[str, Any]]:
    return [r["payload"]["event"] for r in records(sid) if kind(r) == "side_effect_intent"]


def bodies(sid: str, name: str) -> list[dict[str, Any]]:
    return [r["payload"]["record"] for r in records(sid) if kind(r) == name]


def test_judge_approves_seed_chain(project: Path, judge: JudgeServer) -> None:
    """rm -rf escalates to the judge, which approves: seed 000's chain, in order, one id."""
    policy(project, JUDGE_GATE)
    judge.verdict("allow_once", "a stale cache file inside the project")
    out = pre(project, "s-approve", "rm -rf stale_cache.txt", "t1", judge_env(judge))
    assert "allow" == decision(out)
    recs = records("s-approve")
    assert CHAIN == [kind(r) for r in recs]
    ids = {r["payload"].get("record", r["payload"].get("event", {})).get("pending_action_id")
           for r in recs[:6]}
    assert 1 == len(ids)
    applied = bodies("s-approve", "decision_applied")[0]
    digest = "sha256:" + hashlib.sha256(judge.bodies[0]).hexdigest()
    expected = {"decision": "approved", "policy_result": "allow", "kind": "llm_judge",
                "prompt_version": 2, "params_version": 2, "context_digest": digest}
    actual = {"decision": applied["decision"], "policy_result": applied["policy_result"],
              **{k: applied["decision_source"][k] for k in ("kind", "prompt_version",
                                                            "params_version", "context_digest")}}
    assert expected == actual
    assert "allow:llm_judge" == intents("s-approve")[0]["policy_decision"]
    assert "smllm-approval-judge" in json.loads(judge.bodies[0])["system"]
    assert "sk-test" == judge.headers[0].get("x-api-key")


def test_judge_rejects(project: Path, judge: JudgeServer) -> None:
    """A judge rejection denies the call with the judge's reason and stamps deny:llm_judge."""
    policy(project, JUDGE_GATE)
    judge.verdict("reject", "the user never asked to delete caches")
    out = pre(project, "s-reject", "rm -rf stale_cache.txt", "t1", judge_env(judge))
    assert "deny" == decision(out)
    assert "the user never asked to delete caches" in out["hookSpecificOutput"][
        "permissionDecisionReason"]
    assert ["deny:llm_judge"] == [i["policy_decision"] for i in intents("s-reject")]
    assert ["rejected"] == [r["outcome"] for r in bodies("s-reject",
                                                          "approval_wait.effect.terminal")]


@pytest.mark.parametrize(("answer", "error_part"), [
    ({"text": "Sure, go ahead!"}, "not one JSON object"),
    ({"text": '{"verdict": "approve", "reason": "ok"}'}, "unknown verdict"),
    ({"text": '{"verdict": "allow_once"}'}, "exactly the keys"),
    ({"text": '{"verdict": "allow_once", "reason": "x"}', "status": 500}, "HTTP 500"),
    ({"text": '{"verdict": "allow_once", "reason": "x"}', "delay": 4}, "cannot reach"),
])
def test_judge_failure_never_allows(project: Path, judge: JudgeServer, answer: dict[str, Any],
                                    error_part: str) -> None:
    """Garbage, HTTP errors and timeouts deny (fail closed) and journal the fallback."""
    policy(project, JUDGE_GATE.replace("timeout = 2", "timeout = 1"))
    judge.answers.append(answer)
    out = pre(project, "s-fail", "rm -rf stale_cache.txt", "t1", judge_env(judge))
    assert "deny" == decision(out)
    failed = bodies("s-fail", "stage_requirement_resolved")[0]
    assert ("failed", True) == (failed["outcome"], error_part in failed["error"])
    applied = bodies("s-fail", "decision_applied")[0]
    assert ("rejected", "fallback") == (applied["decision"], applied["decision_source"]["kind"])
    assert ["deny:policy"] == [i["policy_decision"] for i in intents("s-fail")]


def test_judge_unreachable_falls_back_to_user(project: Path) -> None:
    """With the judge down, the next reviewer (the user's prompt) gets the call: ask."""
    policy(project, 'reviewers = ["llm_judge", "user"]\n[llm_judge]\ntimeout = 1\n')
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k"}
    out = pre(project, "s-down", "rm -rf stale_cache.txt", "t1", env)
    assert "ask" == decision(out)
    stages = [(r["stage"], r["outcome"]) for r in bodies("s-down", "stage_requirement_resolved")]
    assert [("llm_judge", "failed"), ("user", "delegated")] == stages


@pytest.mark.parametrize(("authority", "mode", "command", "expected", "stamp"), [
    ("guard", "default", "ls -la", "abstain", "defer:host"),
    ("gate", "default", "ls -la", "allow", "allow:policy"),
    ("guard", "bypassPermissions", "ls -la", "allow", "allow:policy"),
    ("guard", "default", "git reset --hard", "deny", "deny:policy"),
    ("guard", "default", "rm -rf stale_cache.txt", "ask", "ask:user"),
])
def test_authority(project: Path, authority: str, mode: str, command: str, expected: str,
                   stamp: str) -> None:
    """guard never answers allow (the host decides) unless the host bypasses permissions."""
    policy(project, f'authority = "{authority}"\n')
    out = pre(project, "s-auth", command, "t1", mode=mode)
    assert (expected, stamp) == (decision(out), intents("s-auth")[0]["policy_decision"])


def _command_reviewer(tmp_path: Path, verdict: str) -> str:
    """A [command] table whose program answers ``verdict`` for every call."""
    script = tmp_path / f"review_{verdict}.py"
    script.write_text("import json, sys\njson.load(sys.stdin)\n"
                      f"print(json.dumps({{'verdict': {verdict!r}, 'reason': 'said so'}}))\n")
    return f'[command]\nargv = ["{sys.executable}", "{script}"]\n'


def _post(project: Path, sid: str, command: str, tid: str) -> None:
    payload = base("PostToolUse", sid, cwd=str(project), tool_name="Bash",
                   tool_input={"command": command}, tool_use_id=tid,
                   tool_response={"stdout": ""}, duration_ms=1)
    hook("PostToolUse", payload, cwd=project)


@pytest.mark.parametrize("authority", ["guard", "gate"])
@pytest.mark.parametrize(("reviewer", "verdict", "answer", "stamp", "authorized_by"), [
    ("llm_judge", "allow_once", "allow", "allow:llm_judge", ["allow:llm_judge"]),
    ("llm_judge", "reject", "deny", "deny:llm_judge", []),
    ("command", "allow_once", "allow", "allow:command", ["allow:command"]),
    ("command", "reject", "deny", "deny:command", []),
])
def test_machine_reviewer_answer_takes_effect_under_either_authority(
    project: Path, judge: JudgeServer, tmp_path: Path, authority: str, reviewer: str,
    verdict: str, answer: str, stamp: str, authorized_by: list[str],
) -> None:
    """A judge's or command's approval answers allow and a rejection deny, under guard as
    under gate: the intent and the terminal record name the reviewer, and no approval is
    left in smllm_verdict while the host decides."""
    extra = (_command_reviewer(tmp_path, verdict) if reviewer == "command" else
             "[llm_judge]\ntimeout = 2\n")
    policy(project, f'authority = "{authority}"\nreviewers = ["{reviewer}"]\n{extra}')
    judge.verdict(verdict, "said so")
    sid = f"s-{reviewer}-{verdict}-{authority}"
    out = pre(project, sid, "rm -rf stale_cache.txt", "t1", judge_env(judge))
    if answer == "allow":
        _post(project, sid, "rm -rf stale_cache.txt", "t1")
    intent = intents(sid)[0]
    applied = bodies(sid, "decision_applied")[0]
    reason = f"{'approved' if answer == 'allow' else 'rejected'} by the {reviewer} reviewer: said so"
    assert (answer, stamp, None, reason, reason, applied["decision_source"]["kind"],
            authorized_by) == (
        decision(out), intent["policy_decision"], intent.get("smllm_verdict"), intent["reason"],
        out["hookSpecificOutput"]["permissionDecisionReason"], reviewer,
        [r["authorized_by"] for r in bodies(sid, "tool_batch.effect.terminal")])


def test_failed_judge_passes_to_the_command_reviewer_under_guard(
    project: Path, tmp_path: Path,
) -> None:
    """Under guard, a judge that cannot be reached passes the call to the next reviewer, a
    command, whose approval takes effect (allow:command)."""
    policy(project, 'reviewers = ["llm_judge", "command"]\n[llm_judge]\ntimeout = 1\n'
           + _command_reviewer(tmp_path, "allow_once"))
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k"}
    out = pre(project, "s-next", "rm -rf stale_cache.txt", "t1", env)
    stages = [(r["stage"], r["outcome"]) for r in bodies("s-next", "stage_requirement_resolved")]
    assert ("allow", "allow:command", [("llm_judge", "failed"), ("command", "approved")]) == (
        decision(out), intents("s-next")[0]["policy_decision"], stages)


def test_grant_made_by_a_judge_takes_effect_under_guard(project: Path,
                                                          judge: JudgeServer) -> None:
    """Under guard, a judge's "always allow in this workspace" allows this call and, through
    its grant, the same call later (allow:policy, rule amendment:<id>), without asking again."""
    policy(project, 'reviewers = ["llm_judge"]\n[llm_judge]\ntimeout = 2\n')
    judge.verdict("always_allow_in_workspace", "routine cache cleanup")
    env = judge_env(judge)
    outs = [decision(pre(project, "s-gg", "rm -rf stale_cache.txt", t, env)) for t in ("t1", "t2")]
    grant = bodies("s-gg", "policy.amendment")[0]
    assert (["allow", "allow"], [("allow:llm_judge", "fs.delete-recursive-workspace"),
                                 ("allow:policy", f"amendment:{grant['id']}")], 1) == (
        outs, [(i["policy_decision"], i["rule"]) for i in intents("s-gg")], len(judge.bodies))


@pytest.mark.parametrize(("text", "where"), [
    ('mode = "strict"\n', "policy.toml:1: unknown mode 'strict'"),
    ('mode = "untrusted"\n[[rule]]\nid = "a"\ndecision = "maybe"\ncommand = "x"\n',
     "policy.toml:4: unknown decision 'maybe'"),
    ("mode = \n", "policy.toml:1: invalid TOML"),
])
def test_broken_policy_denies_everything(project: Path, text: str, where: str) -> None:
    """A broken policy file denies every gated call with the file:line error as reason."""
    policy(project, text)
    for command in ("ls", "echo hi"):
        out = pre(project, "s-broken", command, f"t-{command}")
        reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        assert ("deny", True) == (decision(out), where in reason)
    proc = smllm("policy", "check", "--cwd", str(project))
    assert (1, True) == (proc.returncode, where in proc.stderr)
    doctor = smllm("doctor", "--project", str(project))
    assert any(line.startswith("error  policy: ") and where in line
               for line in doctor.stdout.splitlines()), doctor.stdout


def test_amendment_applies_and_revokes(project: Path, judge: JudgeServer) -> None:
    """'Always allow in this workspace' is journaled, allows later calls, and is revocable."""
    policy(project, JUDGE_GATE)
    judge.verdict("always_allow_in_workspace", "routine cache cleanup")
    env = judge_env(judge)
    assert "allow" == decision(pre(project, "s-grant", "rm -rf stale_cache.txt", "t1", env))
    amendment = bodies("s-grant", "policy.amendment")[0]
    assert ("added", "llm_judge") == (amendment["action"], amendment["granted_by"])
    assert "allow" == decision(pre(project, "s-grant", "rm -rf stale_cache.txt", "t2", env))
    later = intents("s-grant")[1]
    assert ("allow:policy", f"amendment:{amendment['id']}", 1) == (
        later["policy_decision"], later["rule"], len(judge.bodies))
    listed = smllm("policy", "grants")
    assert amendment["id"] in listed.stdout
    revoked = smllm("policy", "grants", "--revoke", amendment["id"])
    assert 0 == revoked.returncode
    assert ["added", "revoked"] == [a["action"] for a in bodies("s-grant", "policy.amendment")]
    judge.verdict("reject", "not again")
    assert "deny" == decision(pre(project, "s-grant", "rm -rf stale_cache.txt", "t3", env))


def test_command_reviewer(project: Path, tmp_path: Path) -> None:
    """The command reviewer gets JSON on stdin and its JSON verdict decides."""
    script = tmp_path / "review.py"
    script.write_text(
        "import json, sys\nreq = json.load(sys.stdin)\n"
        "ok = 'stale_cache' in req['tool_input']['command']\n"
        "print(json.dumps({'verdict': 'allow_once' if ok else 'reject', "
        "'reason': 'cache' if ok else 'not a cache'}))\n")
    policy(project, f'authority = "gate"\nreviewers = ["command"]\n[command]\n'
           f'argv = ["{sys.executable}", "{script}"]\n')
    outs = [decision(pre(project, "s-cmd", c, f"t{i}")) for i, c in
            enumerate(["rm -rf stale_cache.txt", "rm -rf check_costs.py"])]
    stamps = [i["policy_decision"] for i in intents("s-cmd")]
    assert (["allow", "deny"], ["allow:command", "deny:command"]) == (outs, stamps)


@pytest.mark.parametrize(("tool", "tool_input", "expected"), [
    ("Edit", {"file_path": "check_costs.py", "old_string": "a", "new_string": "b"}, "allow"),
    ("Write", {"file_path": "/etc/hosts", "content": "x"}, "deny"),
    ("Write", {"file_path": ".claude/settings.json", "content": "{}"}, "deny"),
    ("Write", {"file_path": "/opt/elsewhere/x.txt", "content": "x"}, "ask"),
    ("Write", {"file_path": "check_costs.py", "content": ""}, "ask"),
    ("Read", {"file_path": "/etc/hosts"}, "allow"),
    ("mcp__fs__delete_file", {"path": "x"}, "ask"),
    ("mcp__fs__read_file", {"path": "x"}, "allow"),
])
def test_other_tools(project: Path, tool: str, tool_input: dict[str, Any], expected: str) -> None:
    """File tools are judged by path, MCP tools by name."""
    policy(project, 'authority = "gate"\n')
    out = pre(project, "s-tools", "", "t1", tool=tool, tool_input=tool_input)
    assert expected == decision(out)


def test_post_tool_use_records_authorizer(project: Path) -> None:
    """The terminal record says who let the call run: the host, or the user at its prompt."""
    sid = "s-post"
    pre(project, sid, "ls", "t1")
    pre(project, sid, "rm -rf stale_cache.txt", "t2")
    prompt = base("PermissionRequest", sid, cwd=str(project), tool_name="Bash",
                  tool_input={"command": "rm -rf stale_cache.txt"})
    hook("PermissionRequest", prompt, cwd=project)
    for tid, cmd in (("t1", "ls"), ("t2", "rm -rf stale_cache.txt")):
        payload = base("PostToolUse", sid, cwd=str(project), tool_name="Bash",
                       tool_input={"command": cmd}, tool_use_id=tid,
                       tool_response={"stdout": ""}, duration_ms=1)
        hook("PostToolUse", payload, cwd=project)
    terminal = [r["authorized_by"] for r in bodies(sid, "tool_batch.effect.terminal")]
    assert ["allow:host", "allow:user"] == terminal
    user = [r["decision_source"]["kind"] for r in bodies(sid, "decision_applied")]
    assert ["user"] == user


def test_yolo_stamps_and_abstains(project: Path) -> None:
    """yolo: no approvals, smllm abstains, and the intent says so."""
    policy(project, 'mode = "yolo"\n')
    out = pre(project, "s-yolo", "git reset --hard", "t1")
    assert ("abstain", "allow:yolo") == (decision(out), intents("s-yolo")[0]["policy_decision"])


@pytest.mark.parametrize(("mode", "command", "expected"), [
    ("untrusted", "ls -la", "allow"),
    ("untrusted", "make build", "ask"),
    ("deny-unmatched", "make build", "deny"),
    ("deny-unmatched", "cat README", "allow"),
    ("on-request", "make build", "allow"),
])
def test_modes(project: Path, mode: str, command: str, expected: str) -> None:
    """untrusted escalates anything not known read-only; deny-unmatched denies it."""
    policy(project, f'mode = "{mode}"\nauthority = "gate"\n')
    assert expected == decision(pre(project, f"s-{mode}", command, "t1"))


@pytest.mark.parametrize(("edit", "expected"), [
    (None, "unchanged"),
    ("echo changed\n", "changed"),
    ("", "missing"),
])
def test_script_digest_checked_after_run(project: Path, edit: str | None, expected: str) -> None:
    """A script analysed before the run has its digest in the intent and is re-checked after."""
    script = project / "build.sh"
    script.write_text("echo building\n")
    sid = "s-script"
    pre(project, sid, "bash build.sh", "t1")
    intent = intents(sid)[0]
    digest = "sha256:" + hashlib.sha256(b"echo building\n").hexdigest()
    if edit == "":
        script.unlink()
    elif edit is not None:
        script.write_text(edit)
    payload = base("PostToolUse", sid, cwd=str(project), tool_name="Bash",
                   tool_input={"command": "bash build.sh"}, tool_use_id="t1",
                   tool_response={"stdout": "building"}, duration_ms=1)
    hook("PostToolUse", payload, cwd=project)
    terminal = bodies(sid, "tool_batch.effect.terminal")[0]
    assert ({str(script): digest}, {str(script): expected}) == (
        intent["scripts"], terminal["scripts_after"])
