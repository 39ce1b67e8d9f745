"""smllm governing the real Gemini CLI 0.61.0 (issue 22), against the project's own scripted
Gemini API on 127.0.0.1: installed with ``smllm install --harness gemini`` into a fresh
project and an empty home, a session's shell and file-write calls and its model calls are
journaled, ``smllm verify`` passes, dangerous calls are blocked with a reason the model
receives, a hook that crashes or runs out of time still blocks, and Gemini's tool sandbox
(which install turns on) keeps smllm's files read-only to the agent's commands. Every run
must end by itself: an ``ask`` would hang a headless Gemini run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from gemini_harness import fields, records_of
from mock_process import CLEAN_EXPORT, export_diagnostics

from smllm import journal

SCRIPT = [
    {"shell": "echo hi > a.txt", "call_id": "c_shell"},
    {"write": {"file_path": "notes.md", "content": "hello\n"}, "call_id": "c_write"},
    {"shell": "git push --force origin main", "call_id": "c_push"},
    {"write": {"file_path": ".gemini/settings.json", "content": "{}"}, "call_id": "c_cfg"},
    {"call": {"name": "run_shell_command", "args": {
        "command": "echo x > ~/.gemini/settings.json", "additional_permissions": {
            "fileSystem": {"write": ["~/.gemini"]}}}}, "call_id": "c_escape"},
    {"shell": "rm -rf build", "call_id": "c_ask"},
    {"shell": "echo x > forbidden.txt", "call_id": "c_other"},
    {"text": "All done."},
]
#: the user's own BeforeTool hook, beside smllm's: it blocks what names "forbidden"
OTHER_HOOK = ("import json, sys; d = json.load(sys.stdin); "
              "print(json.dumps({'decision': 'deny', 'reason': 'the user hook says no'}) "
              "if 'forbidden' in json.dumps(d.get('tool_input')) else '{}')")



def test_a_scripted_session_is_journaled_and_gated(gemini: Any) -> None:
    (gemini.project / "build").mkdir()
    (gemini.project / "build" / "x.o").write_text("obj")
    (gemini.project / ".gemini").mkdir()
    (gemini.project / ".gemini" / "settings.json").write_text(json.dumps({"hooks": {
        "BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"type": "command", "name": "mine", "timeout": 20000,
             "command": f"{sys.executable} -c \"{OTHER_HOOK}\""}]}]}}))
    gemini.install_smllm()
    doctor = gemini.smllm("doctor", "--harness", "gemini")
    assert 0 == doctor.returncode, doctor.stdout
    run = gemini.run("do the thing", SCRIPT)
    assert (True, 0) == (run.ended, run.returncode), run.stderr[-3000:]
    recs = records_of(run.session_id)
    kinds = [journal.kind_of(r) for r in recs]
    start = fields(recs[0])
    assert ("session.start", "gemini", "gemini") == (kinds[0], start["harness"], start["host"])
    assert "session.end" == kinds[-1]
    intents = [fields(r) for r in recs if journal.kind_of(r) == "side_effect_intent"]
    assert [("Bash", "defer:host"), ("Write", "defer:host"), ("Bash", "deny:policy"),
            ("Write", "deny:policy"), ("Bash", "deny:policy"), ("Bash", "deny:policy"),
            ("Bash", "defer:host")] == [(i["tool_name"], i["policy_decision"]) for i in intents]
    ids = [i["tool_use_id"] for i in intents]
    ends = {fields(r)["tool_use_id"]: fields(r) for r in recs
            if journal.kind_of(r) == "tool_batch.effect.terminal"}
    # every intent ends: the call the user's hook blocked, from Gemini's chat file
    assert [ids[0], ids[1], ids[6]] == list(ends)
    assert [("succeeded", "allow:host"), ("succeeded", "allow:host"),
            ("refused_by_host", "deny:host")] == [(e["outcome"], e["authorized_by"])
                                                  for e in ends.values()]
    assert not (gemini.project / "forbidden.txt").exists()
    # the effects ran, the blocked calls did not
    assert "hi\n" == (gemini.project / "a.txt").read_text()
    assert "hello\n" == (gemini.project / "notes.md").read_text()
    assert (gemini.project / "build" / "x.o").exists()
    assert "hooks" in json.loads((gemini.project / ".gemini" / "settings.json").read_text())
    # the model received each reason
    outputs = run.tool_outputs()
    assert "Tool execution blocked: smllm policy denies this call: git push" in outputs["c_push"]
    assert "smllm protects Gemini CLI's configuration" in outputs["c_cfg"]
    assert "asks to widen Gemini CLI's tool sandbox" in outputs["c_escape"]
    assert "Gemini CLI cannot ask you from a hook" in outputs["c_ask"]
    assert "Tool execution blocked: the user hook says no" == outputs["c_other"]
    # every model call, from Gemini's chat file, before the call it chose
    calls = [fields(r) for r in recs if journal.kind_of(r) == "model.call"]
    assert [[i] for i in ids] + [[]] == [c["tool_use_ids"] for c in calls]
    assert ("All done.", "end_turn", 120) == (calls[-1]["text"], calls[-1]["stop_reason"],
                                              calls[-1]["usage"]["total"])
    order = [(journal.kind_of(r), fields(r).get("tool_use_id") or
              (fields(r).get("tool_use_ids") or [None])[0]) for r in recs]
    for tid in ids:
        assert order.index(("model.call", tid)) < order.index(("side_effect_intent", tid))
    verify = gemini.smllm("verify", run.session_id)
    assert 0 == verify.returncode, verify.stdout + verify.stderr
    # the audit views read a Gemini session as they read a Claude Code one
    export = gemini.smllm("export", "--journal", run.session_id, "--out", "/dev/stdout")
    assert 0 == export.returncode, export.stderr
    doc = json.loads(export.stdout)
    assert CLEAN_EXPORT == export_diagnostics(doc)
    assert doc["session_terminated_abnormally"] is False
    assert "gemini" == doc["sessions"][0]["harness"]
    ledger = gemini.smllm("ledger", "--journal", run.session_id)
    assert 0 == ledger.returncode, ledger.stderr
    assert f"audit ledger  {run.session_id}  harness: gemini  (" in ledger.stdout
    assert "git push --force origin main" in ledger.stdout
    sessions = gemini.smllm("sessions", "--json")
    rows = [json.loads(line) for line in sessions.stdout.splitlines() if line.strip()]
    assert [(run.session_id, "gemini")] == [(r["session_id"], r["harness"]) for r in rows]
    assert f"{run.session_id} (gemini)" in gemini.smllm("sessions").stdout


def test_a_hook_that_crashes_or_runs_out_of_time_still_blocks(gemini: Any, tmp_path: Path
                                                              ) -> None:
    """smllm's store unusable (every PreToolUse fails inside smllm), then smllm's own
    deadline passing: Gemini still blocks the call with the reason, which the model
    receives (Gemini would run it on exit 1, garbage or a hook it times out itself)."""
    gemini.install_smllm()
    # a file where the home install pinned should be (the hooks' own SMLLM_HOME would not
    # move it), then the home put back for the second run
    home = Path(gemini.smllm_home)
    shutil.move(home, tmp_path / "moved-away")
    home.write_text("")
    script = [{"shell": "echo ran > marker.txt", "call_id": "c1"}, {"text": "done"}]
    crashed = gemini.run("go", script)
    assert (True, 0) == (crashed.ended, crashed.returncode), crashed.stderr[-2000:]
    assert "smllm could not decide on this call and denies it (fail closed)" in \
        crashed.tool_outputs()["c1"]
    home.unlink()
    shutil.move(tmp_path / "moved-away", home)
    late = gemini.run("go", script, extra={"SMLLM_HOOK_DEADLINE": "0.000001"})
    assert (True, 0) == (late.ended, late.returncode), late.stderr[-2000:]
    assert "the hook ran out of time" in late.tool_outputs()["c1"]
    assert not (gemini.project / "marker.txt").exists()


def test_the_sandbox_keeps_smllms_files_read_only(gemini: Any) -> None:
    """With the tool sandbox and .geminiignore install writes, a write the gate lets
    through (yolo policy, paths only known at run time) cannot land in the project's
    .gemini/ (Gemini's hooks) or .smllm/, nor in smllm's store; the hooks, outside the
    sandbox, still journal the call and its output. .geminiignore itself stays writable
    (Gemini's choice): the tripwire install armed puts install's bytes back at the next
    hook, journals the violation after the call that made it, and the next call is denied
    with the reason, which the model receives."""
    (gemini.project / ".smllm").mkdir()
    (gemini.project / ".smllm" / "policy.toml").write_text('mode = "yolo"\n')
    gemini.install_smllm()
    ignore = gemini.project / ".geminiignore"
    installed = ignore.read_text()
    gemini.smllm_home.mkdir(exist_ok=True)
    # the folders come from files the agent could have written: the gate cannot see them
    (gemini.project / "dirs.txt").write_text(f".gemini\n.smllm\n{gemini.smllm_home}\n")
    (gemini.project / "ign.txt").write_text(".geminiignore\n")
    command = ("while read d; do echo x > $d/x; echo rc=$?; done < dirs.txt; "
               "read f < ign.txt; echo '# mine' >> $f; echo rc=$?; echo z > ok.txt; echo rc=$?")
    run = gemini.run("go", [{"shell": command, "call_id": "c1"},
                            {"shell": "echo again > again.txt", "call_id": "c2"},
                            {"text": "done"}])
    assert (True, 0) == (run.ended, run.returncode), run.stderr[-2000:]
    out = run.tool_outputs()["c1"]
    assert ["rc=1", "rc=1", "rc=1", "rc=0", "rc=0"] == [
        w for w in out.split() if w.startswith("rc=")], out
    assert not (gemini.project / ".gemini" / "x").exists()
    assert not (gemini.smllm_home / "x").exists()
    assert not (gemini.project / ".smllm" / "x").exists()
    assert (gemini.project / "ok.txt").exists()
    assert installed == ignore.read_text()
    recs = records_of(run.session_id)
    intents = [fields(r) for r in recs if journal.kind_of(r) == "side_effect_intent"]
    (end,) = [fields(r) for r in recs if journal.kind_of(r) == "tool_batch.effect.terminal"]
    assert [("allow:yolo", None), ("deny:policy", "tripwire.violation")] == [
        (i["policy_decision"], i["rule"] if i["policy_decision"] != "allow:yolo" else None)
        for i in intents]
    assert "rc=1" in str(end["output"])
    (violation,) = [fields(r) for r in recs if journal.kind_of(r) == "tripwire.violation"]
    assert (str(ignore), "modified", True, "PostToolUse", intents[0]["tool_use_id"]) == (
        violation["path"], violation["change"], violation["restored"],
        violation["observed_via"], violation["preceding"]["tool_use_id"])
    assert f"smllm's tripwire: {ignore} was modified outside smllm" in \
        run.tool_outputs()["c2"]
    assert not (gemini.project / "again.txt").exists()
