"""smllm governing the real Codex CLI 0.169.0 (issue 21), against the project's own
scripted Responses API on 127.0.0.1: installed with ``smllm install --harness codex``
into a fresh project and an empty home, a session's shell calls and patch are journaled,
``smllm verify`` passes, dangerous calls are blocked with a reason the model receives,
and a hook that crashes still blocks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from mock_process import CLEAN_EXPORT, export_diagnostics

from smllm import journal

PATCH_NOTES = "*** Begin Patch\n*** Add File: notes.md\n+hello from the patch\n*** End Patch\n"
PATCH_PROTECTED = "*** Begin Patch\n*** Add File: .smllm/evil.toml\n+mode = \"yolo\"\n*** End Patch\n"

SCRIPT = [
    {"shell": "echo hi > a.txt", "call_id": "c_shell"},
    {"patch": PATCH_NOTES, "call_id": "c_patch"},
    {"shell": "git push --force origin main", "call_id": "c_push"},
    {"patch": PATCH_PROTECTED, "call_id": "c_protected"},
    {"shell": "rm -rf build", "call_id": "c_ask"},
    {"text": "All done."},
]


def _fields(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def _kinds(recs: list[dict[str, Any]]) -> list[str]:
    return [journal.kind_of(r) for r in recs]


def _by_call(recs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {_fields(r)["tool_use_id"]: _fields(r) for r in recs if journal.kind_of(r) == kind}


def _journal(codex: Any, session: str) -> list[dict[str, Any]]:
    return list(journal.iter_records(journal.log_path(session)))


def test_a_scripted_session_is_journaled_and_gated(codex: Any) -> None:
    (codex.project / "build").mkdir()
    (codex.project / "build" / "x.o").write_text("obj")
    codex.install_smllm()
    doctor = codex.smllm("doctor", "--harness", "codex")
    assert 0 == doctor.returncode, doctor.stdout
    run = codex.run("do the thing", SCRIPT)
    assert 0 == run.returncode, run.stderr[-3000:]
    session = run.thread_id
    recs = _journal(codex, session)
    kinds = _kinds(recs)
    start = _fields(recs[0])
    assert ("session.start", "codex", "codex") == (kinds[0], start["harness"], start["host"])
    assert "session.end" == kinds[-1]
    intents = _by_call(recs, "side_effect_intent")
    assert {"c_shell", "c_patch", "c_push", "c_protected", "c_ask"} == set(intents)
    assert ("Bash", "apply_patch") == (intents["c_shell"]["tool_name"],
                                       intents["c_patch"]["tool_name"])
    terminal = _by_call(recs, "tool_batch.effect.terminal")
    assert {"c_shell", "c_patch"} == set(terminal)
    assert "succeeded" == terminal["c_shell"]["outcome"]
    # the effects ran, the blocked calls did not
    assert "hi\n" == (codex.project / "a.txt").read_text()
    assert "hello from the patch\n" == (codex.project / "notes.md").read_text()
    assert not (codex.project / ".smllm" / "evil.toml").exists()
    assert (codex.project / "build" / "x.o").exists()
    # the model received each reason
    outputs = run.tool_outputs()
    assert "Command blocked by PreToolUse hook: smllm policy denies this call: git push" in \
        outputs["c_push"]
    assert "smllm protects itself" in outputs["c_protected"]
    assert "Codex cannot ask you" in outputs["c_ask"]
    # every model call, from Codex's rollout: its response id, the calls it made, its text
    calls = [_fields(r) for r in recs if journal.kind_of(r) == "model.call"]
    replies = [r["reply"]["id"] for r in run.log if r.get("kind") == "main"]
    assert replies == [c["message_id"] for c in calls]
    assert [["c_shell"], ["c_patch"], ["c_push"], ["c_protected"], ["c_ask"], []] == [
        c["tool_use_ids"] for c in calls]
    assert ("All done.", "gpt-5.5", "end_turn") == (calls[-1]["text"], calls[-1]["model"],
                                                   calls[-1]["stop_reason"])
    assert 100 == calls[0]["usage"]["input_tokens"]
    verify = codex.smllm("verify", session)
    assert 0 == verify.returncode, verify.stdout + verify.stderr
    # the audit views read a Codex session as they read a Claude Code one
    export = codex.smllm("export", "--journal", session, "--out", "/dev/stdout")
    assert 0 == export.returncode, export.stderr
    doc = json.loads(export.stdout)
    assert CLEAN_EXPORT == export_diagnostics(doc)
    assert doc["session_terminated_abnormally"] is False
    ledger = codex.smllm("ledger", "--journal", session)
    assert 0 == ledger.returncode, ledger.stderr
    assert "apply_patch" in ledger.stdout
    sessions = codex.smllm("sessions", "--json")
    assert 0 == sessions.returncode, sessions.stderr
    rows = [json.loads(line) for line in sessions.stdout.splitlines() if line.strip()]
    assert [(session, "codex")] == [(r["session_id"], r["harness"]) for r in rows]
    listing = codex.smllm("sessions")
    assert f"{session} (codex)" in listing.stdout


def test_doctor_fails_after_the_hook_command_is_edited(codex: Any) -> None:
    codex.install_smllm()
    hooks = codex.project / ".codex" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] += " "
    hooks.write_text(json.dumps(data))
    doctor = codex.smllm("doctor", "--harness", "codex")
    assert 1 == doctor.returncode
    assert "PreToolUse hook modified since it was trusted" in doctor.stdout
    # and Codex indeed skips it: the dangerous command runs
    run = codex.run("go", [{"shell": "echo ran > marker.txt", "call_id": "c1"},
                           {"text": "done"}])
    assert 0 == run.returncode, run.stderr[-2000:]
    assert (codex.project / "marker.txt").exists()


def test_a_hook_that_crashes_still_blocks(codex: Any, tmp_path: Path) -> None:
    """smllm's store is unusable (a file where its folder should be): every PreToolUse
    fails inside smllm, and Codex still blocks with the reason, which the model receives.
    (The home install pins is the broken one: the hooks' own SMLLM_HOME would not move it.)"""
    codex.install_smllm()
    shutil.move(codex.smllm_home, tmp_path / "moved-away")
    Path(codex.smllm_home).write_text("")  # a file where the pinned home should be
    run = codex.run("go", [{"shell": "echo ran > marker.txt", "call_id": "c1"},
                           {"text": "done"}])
    assert 0 == run.returncode, run.stderr[-2000:]
    assert not (codex.project / "marker.txt").exists()
    assert "smllm could not decide on this call and denies it (fail closed)" in \
        run.tool_outputs()["c1"]


def test_a_hook_out_of_time_still_blocks(codex: Any) -> None:
    """The hook's own deadline ends it with a deny before Codex's timeout would let the
    call run."""
    codex.install_smllm()
    run = codex.run("go", [{"shell": "echo ran > marker.txt", "call_id": "c1"},
                           {"text": "done"}], extra={"SMLLM_HOOK_DEADLINE": "0.000001"})
    assert 0 == run.returncode, run.stderr[-2000:]
    assert not (codex.project / "marker.txt").exists()
    assert "the hook ran out of time" in run.tool_outputs()["c1"]


def test_the_sandbox_keeps_the_protected_set_read_only(codex: Any) -> None:
    """With the permission profile install writes (and no sandbox chosen elsewhere), a
    write the gate lets through (yolo mode, a path only known at run time) still cannot
    land in the project's .smllm/ or smllm's store; the hooks, outside the sandbox, still
    journal the call and its output."""
    import base64

    codex.write_config(sandbox_mode=None)
    (codex.project / ".smllm").mkdir()
    (codex.project / ".smllm" / "policy.toml").write_text('mode = "yolo"\n')
    codex.install_smllm()
    store = base64.b64encode(str(codex.smllm_home).encode()).decode()
    command = ("d=$(echo LnNtbGxt | base64 -d); echo x > $d/x; echo rc1=$?; "
               f"s=$(echo {store} | base64 -d); echo y > $s/y; echo rc2=$?; "
               "echo z > ok.txt; echo rc3=$?")
    run = codex.run("go", [{"shell": command, "call_id": "c1"}, {"text": "done"}])
    assert 0 == run.returncode, run.stderr[-2000:]
    out = run.tool_outputs()["c1"]
    assert ("rc1=1", "rc2=1", "rc3=0") == tuple(
        w for w in out.split() if w.startswith("rc")), out
    assert not (codex.project / ".smllm" / "x").exists()
    assert not (codex.smllm_home / "y").exists()
    assert (codex.project / "ok.txt").exists()
    recs = _journal(codex, run.thread_id)
    terminal = _by_call(recs, "tool_batch.effect.terminal")
    assert "rc1=1" in str(terminal["c1"]["output"])
    assert "allow:yolo" == _by_call(recs, "side_effect_intent")["c1"]["policy_decision"]


def test_fresh_clone_installer_with_harness_codex(codex: Any, wheelhouse: Path,
                                                  tmp_path: Path) -> None:
    """Fresh clone -> installer/install.sh --harness codex PROJECT (an empty home) ->
    a Codex session runs the installed environment's hooks and is journaled."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent.parent
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True,
                   capture_output=True)
    venv = tmp_path / "venv"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(codex.home), "CODEX_HOME": str(codex.codex_home),
           "PYTHON": os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
           "SMLLM_VENV": str(venv), "SMLLM_HOME": str(codex.smllm_home),
           "SMLLM_NO_MODIFY_PATH": "1", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    proc = subprocess.run(["bash", str(clone / "installer" / "install.sh"), "--harness", "codex",
                           str(codex.project)], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert 0 == proc.returncode, proc.stdout + proc.stderr
    hooks = json.loads((codex.project / ".codex" / "hooks.json").read_text())
    assert f"{venv / 'bin' / 'smllm-hook'} PreToolUse --harness codex --home {codex.smllm_home}" \
        == \
        hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    run = codex.run("go", [{"shell": "echo hi > a.txt", "call_id": "c1"}, {"text": "done"}])
    assert 0 == run.returncode, run.stderr[-2000:]
    kinds = _kinds(_journal(codex, run.thread_id))
    assert ["session.start", "side_effect_intent", "tool_batch.effect.terminal"] == [
        k for k in kinds if k in ("session.start", "side_effect_intent",
                                  "tool_batch.effect.terminal")]
    doctor = subprocess.run([str(venv / "bin" / "smllm"), "doctor", "--harness", "codex"],
                            cwd=codex.project, env=env, capture_output=True, text=True,
                            check=False)
    assert 0 == doctor.returncode, doctor.stdout
