"""Resume after a crash: crash inference, the unknown effect told to the agent, the hold,
reconciliation, and `smllm resume`."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, hook_output, kind, records, smllm
from smllm import journal

SID = "ff273730-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
SAMPLE = Path(__file__).parent / "fixtures" / "ledger_migration"
GATE_7 = {"command": "python3 gate.py rec_7", "description": "gate"}
GATE_8 = {"command": "python3 gate.py rec_8", "description": "Unlock rec_8"}


def _pre(tool_use_id: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any] | None:
    proc = hook("PreToolUse", base("PreToolUse", SID, cwd=str(cwd), tool_name="Bash",
                                   tool_input=tool_input, tool_use_id=tool_use_id))
    expected = 0
    assert expected == proc.returncode, proc.stderr
    return hook_output(proc)


def _crashed_session(project: Path) -> int:
    """A session that committed one gate call and crashed during the next; the intent's seq."""
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="startup"))
    hook("UserPromptSubmit", base("UserPromptSubmit", SID, cwd=str(project), prompt="migrate"))
    _pre("toolu_07", GATE_7, project)
    hook("PostToolUse", base("PostToolUse", SID, cwd=str(project), tool_name="Bash",
                             tool_input=GATE_7, tool_use_id="toolu_07",
                             tool_response={"stdout": "key-7"}))
    _pre("toolu_08", GATE_8, project)
    return next(r["sequence"] for r in records(SID)
                if r["payload"].get("event", {}).get("tool_use_id") == "toolu_08")


def _reason(out: dict[str, Any] | None) -> str:
    return str(out["hookSpecificOutput"].get("permissionDecisionReason", "")) if out else ""


def _held(out: dict[str, Any] | None) -> bool:
    """PreToolUse denied the call because it repeats an unknown effect."""
    decision = out["hookSpecificOutput"].get("permissionDecision") if out else None
    return decision == "deny" and _reason(out).startswith("smllm holds this call")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the gated migration sample (the gate reads gate.py before allowing it)."""
    p = tmp_path / "ledger_migration"
    shutil.copytree(SAMPLE, p)
    return p


def test_resume_after_crash_records_crash_and_resume(project: Path) -> None:
    """SessionStart resume: session.end crash_inferred, then session.resumed with its fields."""
    seq = _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    tail = records(SID)[-2:]
    end, resumed = (t["payload"]["record"] for t in tail)
    actual = ([kind(t) for t in tail], end["exit_reason"],
              {k: resumed[k] for k in ("prior_turn_count", "resumed_from_sequence",
                                       "unknown_effects")})
    expected = (["session.end", "session.resumed"], "crash_inferred",
                {"prior_turn_count": 1, "resumed_from_sequence": tail[0]["sequence"],
                 "unknown_effects": [seq]})
    assert expected == actual


def test_agent_is_told_the_unknown_effect(project: Path) -> None:
    """The resumed agent receives the in-flight effect, marked unknown, with how to reconcile."""
    seq = _crashed_session(project)
    out = hook_output(hook("SessionStart", base("SessionStart", SID, cwd=str(project),
                                                source="resume")))
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    actual = (f"sequence {seq}: tool:bash python3 gate.py rec_8" in text, "UNKNOWN" in text,
              f"smllm reconcile {seq} --outcome" in text.replace("SEQUENCE", str(seq)),
              "rec_7" in text, f"{sys.executable} -m smllm reconcile" in text)
    expected = (True, True, True, False, True)
    assert expected == actual


def test_clean_resume_has_no_crash_and_no_unknown(project: Path) -> None:
    """After an orderly end, resume records session.resumed only and tells the agent nothing."""
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="startup"))
    hook("SessionEnd", base("SessionEnd", SID, cwd=str(project), reason="other"))
    proc = hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    kinds = [kind(r) for r in records(SID)]
    expected = (["session.start", "session.end", "session.resumed"], None)
    assert expected == (
        kinds, hook_output(proc))


HOLD_CASES = [
    ("same call", GATE_8, True),
    ("same command, other description and spacing",
     {"command": "python3  gate.py   rec_8", "description": "retry"}, True),
    ("another record", {"command": "python3 gate.py rec_9"}, False),
]


@pytest.mark.parametrize(("name", "tool_input", "held"), HOLD_CASES,
                         ids=[c[0] for c in HOLD_CASES])
def test_reattempt_of_unknown_effect_is_held(project: Path, name: str,
                                             tool_input: dict[str, Any], held: bool) -> None:
    """A repeat of the unknown effect is denied with the reason; other calls are not."""
    seq = _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    out = _pre("toolu_retry", tool_input, project)
    intent = next(r["payload"]["event"] for r in records(SID)
                  if r["payload"].get("event", {}).get("tool_use_id") == "toolu_retry")
    actual = (_held(out), f"smllm reconcile {seq} --outcome not-applied" in _reason(out),
              intent["policy_decision"] == "deny:reconcile")
    expected = (True, True, True) if held else (False, False, False)
    assert expected == actual


@pytest.mark.parametrize("outcome", ["applied", "not-applied"])
def test_reconcile_records_the_outcome_and_releases_the_hold(project: Path, outcome: str) -> None:
    """`smllm reconcile` writes the terminal and effect.reconciled; the retry is then allowed."""
    seq = _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    assert _held(_pre("toolu_retry1", GATE_8, project))
    proc = smllm("reconcile", str(seq), "--outcome", outcome, "--journal", SID,
                 "--note", "ledger has 7 lines")
    terminal, done = (r["payload"]["record"] for r in records(SID)[-2:])
    retry = _pre("toolu_retry2", GATE_8, project)
    value = outcome.replace("-", "_")
    actual = (proc.returncode, terminal["intent_sequence"], terminal["observed_via"],
              terminal["outcome"], done["outcome"], done["verified_by"], done["note"],
              _held(retry), smllm("verify", SID).returncode)
    expected = (0, seq, "reconcile", value, value, "user", "ledger has 7 lines", False, 0)
    assert expected == actual


def test_reconcile_stdout(project: Path) -> None:
    """The reconcile command says what it recorded, where."""
    seq = _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    proc = smllm("reconcile", str(seq), "--outcome", "not-applied", "--journal", SID)
    n = records(SID)[-1]["sequence"]
    expected = (f"reconciled effect {seq} (tool:bash python3 gate.py rec_8): not applied, "
                f"verified by user; recorded at sequence {n - 1} and {n}\n")
    assert expected == proc.stdout


def test_reconcile_from_inside_claude_code_uses_its_session(project: Path, tmp_path: Path) -> None:
    """Run by the agent (CLAUDECODE, CLAUDE_CODE_SESSION_ID set), it finds the session itself."""
    seq = _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    proc = smllm("reconcile", str(seq), "--outcome", "applied", cwd=tmp_path,
                 env={"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": SID})
    expected = (0, "agent")
    assert expected == (proc.returncode, records(SID)[-1]["payload"]["record"]["verified_by"])


def test_reconcile_errors(project: Path) -> None:
    """A sequence that is not an effect, or one already settled, is refused clearly."""
    seq = _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    log = smllm("verify", SID, "--json")
    path = json.loads(log.stdout)["path"]
    wrong = smllm("reconcile", "1", "--outcome", "applied", "--journal", SID)
    smllm("reconcile", str(seq), "--outcome", "applied", "--journal", SID)
    again = smllm("reconcile", str(seq), "--outcome", "applied", "--journal", SID)
    n = records(SID)[-2]["sequence"]
    expected = [
        (1, f"smllm: error: sequence 1 is not the intent of an effect in {path} "
            f"(unknown effects in this journal: {seq})\n"),
        (1, f"smllm: error: effect {seq} already has an outcome (applied, observed via "
            f"reconcile, sequence {n}) (only an effect whose outcome is unknown can be "
            "reconciled)\n"),
    ]
    assert expected == [(wrong.returncode, wrong.stderr), (again.returncode, again.stderr)]


# --------------------------------------------------------------------- smllm resume


NOT_INTERACTIVE = ("smllm: error: smllm resume requires an interactive terminal; pass --last "
                   "or a session uuid for non-interactive resume\n")


def test_bare_resume_without_a_terminal_prints_the_seed_message(project: Path) -> None:
    """Bare `smllm resume` in a pipe exits non-zero with seed 000's message."""
    _crashed_session(project)
    proc = smllm("resume", cwd=project)
    expected = (2, "", NOT_INTERACTIVE)
    assert expected == (proc.returncode, proc.stdout, proc.stderr)


def test_resume_check_reports_committed_and_unknown(project: Path) -> None:
    """--check prints the reconciliation: one committed effect, one unknown, and starts nothing."""
    seq = _crashed_session(project)
    proc = smllm("resume", "--check", SID)
    path = json.loads(smllm("verify", SID, "--json").stdout)["path"]
    n = len(records(SID))
    key = records(SID)[seq - 1]["payload"]["event"]["idempotency_key"]
    expected = (
        f"session {SID}  {project}\n"
        f"journal {path}: {n} records, last end: none recorded (the session is running, or "
        "it crashed)\n"
        "committed effects: 1 (intent and terminal record)\n"
        "unknown effects: 1 (intent recorded, no outcome: verify the actual state before "
        "retrying)\n"
        f"  {seq:>5}  tool:bash  python3 gate.py rec_8  {key}\n"
        f"record what you find: smllm reconcile SEQ --outcome applied|not-applied --journal "
        f"{SID}\n"
    )
    assert (0, expected) == (proc.returncode, proc.stdout)


def test_resume_check_after_a_resume_names_the_last_end(project: Path) -> None:
    """After a resume the journal's last end is the inferred crash, and the resume after it:
    `--check` says so (it used to say "last end: none recorded")."""
    _crashed_session(project)
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"))
    kinds = [(r["sequence"], kind(r)) for r in records(SID)]
    end = next(s for s, k in kinds if k == "session.end")
    resumed = next(s for s, k in kinds if k == "session.resumed")
    proc = smllm("resume", "--check", SID)
    line = proc.stdout.splitlines()[1].split("last end: ", 1)[1]
    data = json.loads(smllm("resume", SID, "--json").stdout)
    assert (f"crash_inferred (sequence {end}), then resumed at sequence {resumed}: no end "
            "recorded since (the session is running, or it crashed)",
            {"exit_reason": "crash_inferred", "sequence": end}, resumed) == (
        line, data["last_end"], data["resumed_at"])
    hook("SessionEnd", base("SessionEnd", SID, cwd=str(project), reason="other"))
    final = smllm("resume", "--check", SID).stdout.splitlines()[1].split("last end: ", 1)[1]
    assert (True, True) == (final.startswith("clean (sequence "), final.endswith(")"))


def _fake_claude(tmp_path: Path) -> tuple[dict[str, str], Path]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "claude-called.json"
    script = bindir / "claude"
    script.write_text(
        "#!/usr/bin/env python3\nimport json, os, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], "
        "'cwd': os.getcwd()}))\n")
    script.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}, record


@pytest.mark.parametrize("how", [["--last"], [SID]])
def test_resume_reopens_the_session_in_claude_code(project: Path, tmp_path: Path,
                                                   how: list[str]) -> None:
    """Without --check, resume runs `claude --resume <host id>` in the session's folder."""
    _crashed_session(project)
    env, record = _fake_claude(tmp_path)
    proc = smllm("resume", *how, env=env, cwd=project)
    called = json.loads(record.read_text())
    assert (0, ["--resume", SID], str(project)) == (proc.returncode, called["argv"],
                                                    called["cwd"])


CLAUDE_ARGS = ["--permission-mode", "acceptEdits", "--plugin-dir", "/opt/smllm plugin",
               "--model", "sonnet", "--", "-p looks like an option"]


@pytest.mark.parametrize("how", [["--last"], [SID], []])
def test_resume_passes_the_words_after_dashes_to_claude(project: Path, tmp_path: Path,
                                                         how: list[str]) -> None:
    """`smllm resume … -- CLAUDE_ARGS…` runs `claude --resume <host id> CLAUDE_ARGS…`, each
    word as given (a second `--` included); bare `resume` takes them too (it then needs
    a terminal for its picker, and says so)."""
    _crashed_session(project)
    env, record = _fake_claude(tmp_path)
    proc = smllm("resume", *how, "--", *CLAUDE_ARGS, env=env, cwd=project)
    if not how:
        expected = (2, "smllm: error: smllm resume requires an interactive terminal; pass "
                       "--last or a session uuid for non-interactive resume\n", False)
        assert expected == (proc.returncode, proc.stderr, record.exists())
        return
    called = json.loads(record.read_text())
    shown = proc.stdout.splitlines()[-1]
    assert (0, ["--resume", SID, *CLAUDE_ARGS], True) == (
        proc.returncode, called["argv"], shown.endswith(
            "with --permission-mode acceptEdits --plugin-dir '/opt/smllm plugin' --model "
            "sonnet -- '-p looks like an option'"))


@pytest.mark.parametrize(("words", "message"), [
    (["--check", "--", "--model", "x"],
     "smllm: error: -- CLAUDE_ARGS is for starting Claude Code, and --check only prints "
     "the reconciliation (drop --check (and --json) or the arguments after --)\n"),
    (["--", "--resume", "other"],
     "smllm: error: --resume after -- would choose another session; smllm resume passes "
     "--resume <session id> itself (name the session as smllm resume's JOURNAL (or --last) "
     "instead)\n"),
    (["--", "--session-id=x"],
     "smllm: error: --session-id=x after -- would choose another session; smllm resume "
     "passes --resume <session id> itself (name the session as smllm resume's JOURNAL (or "
     "--last) instead)\n"),
])
def test_resume_refuses_claude_args_it_cannot_pass(project: Path, tmp_path: Path,
                                                   words: list[str], message: str) -> None:
    """Arguments for claude with --check, or ones that choose the session, are refused and
    claude is not started."""
    _crashed_session(project)
    env, record = _fake_claude(tmp_path)
    proc = smllm("resume", "--last", *words, env=env, cwd=project)
    assert (2, message, False) == (proc.returncode, proc.stderr, record.exists())


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj) + "\n"


def test_host_synthetic_result_does_not_settle_an_unknown_effect(project: Path,
                                                                 tmp_path: Path) -> None:
    """A tool_result the host writes for the killed call at resume leaves the effect unknown."""
    transcript = tmp_path / "transcript.jsonl"
    tool_use = {"type": "assistant", "uuid": "u1", "message": {
        "id": "msg_1", "model": "m", "stop_reason": "tool_use", "usage": {},
        "content": [{"type": "tool_use", "id": "toolu_08", "name": "Bash", "input": GATE_8}]}}
    transcript.write_text(_line(tool_use))
    extra = {"cwd": str(project), "transcript_path": str(transcript)}
    hook("SessionStart", base("SessionStart", SID, source="startup", **extra))
    hook("UserPromptSubmit", base("UserPromptSubmit", SID, prompt="migrate", **extra))
    hook("PreToolUse", base("PreToolUse", SID, tool_name="Bash", tool_input=GATE_8,
                            tool_use_id="toolu_08", **extra))
    with open(transcript, "a") as fh:
        fh.write(_line({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_08", "is_error": True,
             "content": "[Request interrupted by user for tool use]"}]}}))
        fh.write(_line({"type": "assistant", "uuid": "u2", "message": {
            "id": "msg_2", "model": "m", "stop_reason": "end_turn", "usage": {},
            "content": [{"type": "text", "text": "resumed"}]}}))
    hook("SessionStart", base("SessionStart", SID, source="resume", **extra))
    resumed = records(SID)[-1]["payload"]["record"]
    terminals = [r for r in records(SID) if kind(r) == "tool_batch.effect.terminal"]
    expected = (1, [])
    assert expected == (len(resumed["unknown_effects"]), terminals)


def test_crash_closes_open_subagent_logs_too(project: Path) -> None:
    """A subagent log left open by the crash gets its crash_inferred end; its effect is listed."""
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="startup"))
    hook("SubagentStart", base("SubagentStart", SID, agent_id="agent-7", agent_type="x"))
    hook("PreToolUse", base("PreToolUse", SID, cwd=str(project), agent_id="agent-7",
                            tool_name="Bash", tool_input=GATE_7, tool_use_id="toolu_sub"))
    out = hook_output(hook("SessionStart", base("SessionStart", SID, cwd=str(project),
                                                source="resume")))
    child = [kind(r) for r in records_of(SID, "agent-7")]
    resumed = records(SID)[-1]["payload"]["record"]
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    seq = next(r["sequence"] for r in records_of(SID, "agent-7")
               if r["payload"].get("event", {}).get("tool_use_id") == "toolu_sub")
    told = f"subagent/agent-7 sequence {seq}: tool:bash python3 gate.py rec_7" in text
    end = records_of(SID, "agent-7")[-1]["payload"]["record"]["exit_reason"]
    expected = ("session.end", "crash_inferred", [{"stream": "subagent/agent-7", "sequence": seq}],
                True)
    assert expected == (child[-1], end, resumed["unknown_subagent_effects"], told)


def records_of(session_id: str, agent_id: str) -> list[dict[str, Any]]:
    return list(journal.iter_records(journal.log_path(session_id, agent_id=agent_id)))


def test_bare_resume_on_a_terminal_opens_the_picker(project: Path) -> None:
    """On a terminal, bare `smllm resume --check` lists sessions and reports the chosen one."""
    _crashed_session(project)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "smllm", "resume", "--check"], stdin=slave,
                            stdout=slave, stderr=slave, cwd=project, env=dict(os.environ))
    os.close(slave)
    data = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        try:
            chunk = os.read(master, 4096) if ready else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        data += chunk
        if b"Choose a session" in data and b"\n1\r\n" not in data:
            os.write(master, b"1\n")
    proc.wait(timeout=30)
    os.close(master)
    text = data.decode().replace("\r\n", "\n")
    expected = (0, True, True)
    assert expected == (proc.returncode, "  1  " in text and SID in text,
                        "unknown effects: 1" in text)


def test_crash_uptime_runs_to_the_last_record(project: Path) -> None:
    """crash_inferred's uptime_ms is from the start to the last record before the crash."""
    t0 = 1_785_665_700_000
    at = {"startup": t0, "prompt": t0 + 5_000, "tool": t0 + 9_250, "resume": t0 + 600_000}
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="startup"),
         env={"SMLLM_NOW": str(at["startup"])})
    hook("UserPromptSubmit", base("UserPromptSubmit", SID, cwd=str(project), prompt="go"),
         env={"SMLLM_NOW": str(at["prompt"])})
    hook("PreToolUse", base("PreToolUse", SID, cwd=str(project), tool_name="Bash",
                            tool_input=GATE_8, tool_use_id="toolu_08"),
         env={"SMLLM_NOW": str(at["tool"])})
    hook("SessionStart", base("SessionStart", SID, cwd=str(project), source="resume"),
         env={"SMLLM_NOW": str(at["resume"])})
    end = next(r["payload"]["record"] for r in records(SID) if kind(r) == "session.end")
    expected = ("crash_inferred", 9_250)
    assert expected == (end["exit_reason"], end["uptime_ms"])


def test_the_agent_reconciles_only_the_session_it_runs_in(tmp_path: Path) -> None:
    """`smllm reconcile` runs outside the sandbox; from the agent's shell (CLAUDECODE set) it
    must not write another session's journal: --journal and --last are refused."""
    for flags in (["--journal", "someone-else"], ["--last"]):
        proc = smllm("reconcile", "5", "--outcome", "applied", *flags,
                     env={"CLAUDECODE": "1"}, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("smllm: error: inside Claude Code, smllm reconcile "
                                      "records outcomes in the session it runs in only ")
