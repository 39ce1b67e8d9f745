"""The journal stays valid and complete against hostile input and a hostile store (issue 10)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest
from tests.helpers import PYTHON, base, hook, hook_output, smllm

from smllm import journal
from smllm.base import paths
from smllm.base.errors import JournalError
from smllm.journal.log import lock_file as log_lock_file
from smllm.journal.verify import verify

SID = "trust-journal-1"


def _bash(sid: str, tid: str, command: str) -> dict[str, object]:
    return base("PreToolUse", sid, tool_name="Bash", tool_use_id=tid,
                tool_input={"command": command})


def _append(path: str, n: int) -> None:
    for i in range(n):
        journal.append(path, [journal.event("note", i=i)])


def test_surrogate_payloads_round_trip_and_verify() -> None:
    """Intents whose input holds lone surrogates get gapless sequences, valid UTF-8 lines and
    read back to the very same strings."""
    commands = ["rm -rf ~/\ud800", "echo \udfff", "x\ud83d y"]
    for i, command in enumerate(commands):
        raw = json.dumps(_bash(SID, f"toolu_{i}", command)).encode()  # \\ud800 escapes
        proc = hook("PreToolUse", raw)
        assert (0, b"") == (proc.returncode, proc.stderr)
        proc.stdout.decode("utf-8")  # strict
    path = journal.locate(SID)
    lines = Path(path).read_bytes().splitlines()
    for line in lines:
        line.decode("utf-8")  # strict: raises on an invalid line
    intents = [r for r in journal.iter_records(path)
               if journal.kind_of(r) == "side_effect_intent"]
    assert commands == [journal.body_of(r)["input"]["command"] for r in intents]
    assert list(range(1, len(lines) + 1)) == [json.loads(x)["sequence"] for x in lines]
    assert (True, []) == (verify(Path(path)).ok, verify(Path(path)).problems)


def test_oversized_record_is_capped_and_writers_stay_in_step(tmp_path: Path) -> None:
    """A 200 MB record becomes a line under LINE_LIMIT with omitted_live_only markers."""
    path = str(tmp_path / "s" / journal.LOG_NAME)
    blob = ["x" * 30_000] * 7000  # 210 MB of strings each under STRING_LIMIT
    journal.append(path, [journal.event("big", blob=blob, keep="small")])
    _append(path, 1)
    recs = list(journal.iter_records(path))
    assert [1, 2] == [r["sequence"] for r in recs]
    assert os.path.getsize(path) < journal.LINE_LIMIT
    body = journal.body_of(recs[0])
    assert ("small", ["bytes", "sha256"]) == (body["keep"], sorted(body["blob"]["omitted_live_only"]))
    assert verify(Path(path)).ok


def test_200mb_line_keeps_the_next_writer_in_step(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A 200 MB record line already in the log: the next writer (a fresh process) appends
    sequence 2 after it, and the chain verifies."""
    path = str(tmp_path / "s" / journal.LOG_NAME)
    monkeypatch.setattr("smllm.journal.codec.LINE_LIMIT", 1 << 40)
    journal.append(path, [journal.event("big", blob=["y" * 30_000] * 7000)])
    assert os.path.getsize(path) > 200_000_000
    code = ("import sys; from smllm import journal; "
            "print(journal.append(sys.argv[1], [journal.event('next')])[0].sequence)")
    out = subprocess.run([PYTHON, "-c", code, path], capture_output=True, text=True, check=True)
    assert "2\n" == out.stdout
    assert [1, 2] == [r["sequence"] for r in journal.iter_records(path)]
    assert verify(Path(path)).ok


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_huge_sequence_exports_in_bounded_memory(tmp_path: Path) -> None:
    """A record claiming sequence 10**18 exports under a 1 GiB address-space limit."""
    path = journal.locate(SID, create=True)
    _append(path, 2)
    line, _, _ = journal.codec.encode_record(journal.event("forged"), sequence=10**18,
                                           prev=journal.GENESIS, recorded_at="2026-01-01T00:00:00.000Z",
                                           skipped=0)
    with open(path, "ab") as fh:
        fh.write(line)
    out = tmp_path / "e.json"
    proc = subprocess.run([PYTHON, "-m", "smllm", "export", "--session", SID, "--out", str(out)],
                          capture_output=True, text=True, preexec_fn=_limit_memory, check=False)
    assert (0, "") == (proc.returncode, proc.stderr)
    diag = json.loads(out.read_text())["diagnostics"]
    assert 1 == diag["sequence_gaps"]


@pytest.mark.parametrize("cut", [1, 2, 3, 4, 5])
def test_truncated_tail_is_reported_with_the_count(cut: int) -> None:
    """`head -n -K` leaves a valid chain; verify names K missing records from the head kept
    beside the log, and so does a later writer's record."""
    path = journal.locate(SID, create=True)
    _append(path, 10)
    lines = Path(path).read_bytes().splitlines(keepends=True)
    Path(path).write_bytes(b"".join(lines[:-cut]))
    proc = smllm("verify", SID)
    assert (1, f"FAILED: {path}:{11 - cut}: {cut} record(s) missing at the end of the log: it "
               f"ends at sequence {10 - cut}, the head recorded beside it (head) says sequence 10\n") == \
        (proc.returncode, proc.stdout)
    _append(path, 1)  # the next writer sees the cut and says so in the log
    report = verify(Path(path))
    assert (cut, [f"{cut} record(s) were cut from the end of the log after sequence {10 - cut} "
                  f"(its head was sequence 10, seen by the next writer)"]) == \
        (report.missing, [p.what for p in report.problems])


def test_symlinked_journal_is_refused(tmp_path: Path) -> None:
    """A session.jsonl planted as a link is never followed: the gating hook denies, the
    link's target is unchanged."""
    folder = journal.session_folder(SID, create=True)
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    os.chmod(target, 0o644)
    os.symlink(target, os.path.join(folder, journal.LOG_NAME))
    out = hook_output(hook("PreToolUse", _bash(SID, "toolu_1", "ls")))
    assert out is not None
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert ("deny", True) == (out["hookSpecificOutput"]["permissionDecision"],
                              f"{folder}/session.jsonl is a symbolic link" in reason)
    assert ("keep\n", 0o644) == (target.read_text(), target.stat().st_mode & 0o777)


def test_escaping_by_id_entry_is_refused(tmp_path: Path) -> None:
    """A by-id entry pointing outside the store is refused with a message naming it."""
    index = Path(paths.data_root()) / "sessions" / "by-id"
    index.mkdir(parents=True)
    (index / SID).write_text("../../../../tmp/evil\n")
    with pytest.raises(JournalError) as err:
        journal.locate(SID, create=True)
    assert (f"store index entry {index / SID} does not name a dated folder "
            f"('../../../../tmp/evil')") == err.value.what
    assert not (tmp_path / "evil").exists()


def test_linked_date_folder_is_refused(tmp_path: Path) -> None:
    """A dated folder replaced by a link to elsewhere is refused, not written through."""
    folder = Path(journal.session_folder(SID, create=True))
    day = folder.parent
    os.rename(day, tmp_path / "moved")
    os.symlink(tmp_path / "moved", day)
    with pytest.raises(paths.UnsafeStore) as err:
        journal.locate(SID, create=True)
    assert f"{day} is a symbolic link" == err.value.what


def test_permissive_store_is_repaired_and_reported() -> None:
    """A 0777 store of ours is set back to 0700 by the next hook, and doctor says so."""
    root = Path(paths.data_root())
    journal.locate(SID, create=True)
    os.chmod(root, 0o777)
    os.chmod(root / "sessions", 0o755)
    hook("PreToolUse", _bash(SID, "toolu_1", "ls"))
    assert (0o700, 0o700) == (root.stat().st_mode & 0o777,
                              (root / "sessions").stat().st_mode & 0o777)
    report = smllm("doctor").stdout
    assert f"store folder {root} was 0777: smllm set it to 0700" in report


def test_store_of_another_user_is_refused() -> None:
    """A store folder owned by someone else is refused with how to fix it."""
    root = Path(paths.data_root())
    journal.locate(SID, create=True)
    os.chown(root / "sessions", 12345, 12345)
    with pytest.raises(paths.UnsafeStore) as err:
        journal.locate(SID, create=True)
    assert (f"{root / 'sessions'} belongs to user 12345, not to this user",
            "give it back (chown) or point SMLLM_HOME elsewhere") == (err.value.what, err.value.fix)


def test_two_projects_with_one_session_id_keep_separate_journals(tmp_path: Path) -> None:
    """Project B reusing A's session id starts its own journal: A's session stays open
    and A's latest journal holds only A's commands."""
    a, b = tmp_path / "a", tmp_path / "b"
    for proj, cmd in ((a, "echo from-a"), (b, "echo from-b")):
        proj.mkdir()
        env = {"CLAUDE_PROJECT_DIR": str(proj)}
        start = base("SessionStart", SID, source="startup", cwd=str(proj))
        assert 0 == hook("SessionStart", start, env=env).returncode
        pre = _bash(SID, f"toolu_{proj.name}", cmd)
        pre["cwd"] = str(proj)
        assert 0 == hook("PreToolUse", pre, env=env).returncode
    log_a = journal.locate(SID, project=str(a))
    log_b = journal.locate(SID, project=str(b))
    cmds = {p: [journal.body_of(r)["input"]["command"] for r in journal.iter_records(p)
                if journal.kind_of(r) == "side_effect_intent"] for p in (log_a, log_b)}
    ends = [journal.kind_of(r) for r in journal.iter_records(log_a)].count("session.end")
    assert (["echo from-a"], ["echo from-b"], 0) == (cmds[log_a], cmds[log_b], ends)
    assert log_a != log_b
    from smllm.journal import lookup

    assert Path(log_a) == lookup.latest(str(a)).path


def test_state_sidecar_fifo_is_refused_not_waited_on() -> None:
    """A FIFO planted as state.json makes the gating hook deny at once instead of hanging."""
    folder = journal.session_folder(SID, create=True)
    os.mkfifo(os.path.join(folder, journal.STATE_NAME))
    proc = hook("PreToolUse", _bash(SID, "toolu_1", "ls"), timeout=20)
    out = hook_output(proc)
    assert out is not None
    assert "deny" == out["hookSpecificOutput"]["permissionDecision"]


def test_full_disk_denies_and_leaves_no_intent_or_start() -> None:
    """When the disk fills mid-append (RLIMIT_FSIZE stands in for it), the gate denies and
    the journal holds neither the call's intent nor its start: only what was there."""
    path = journal.locate(SID, create=True)
    _append(path, 3)
    before = Path(path).read_bytes()
    limit = len(before) + 200  # the intent line is longer: the write stops part-way

    def full() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    data = json.dumps(_bash(SID, "toolu_full", "ls")).encode()
    proc = subprocess.run([PYTHON, "-c", "from smllm.hooks import cli; cli()", "PreToolUse"],
                          input=data, capture_output=True, preexec_fn=full, check=False)
    decision = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert (0, "deny", before) == (proc.returncode, decision, Path(path).read_bytes())
    assert verify(Path(path)).ok


HOST_REFUSAL = ("touch in '/p/x' needs approval. The path is inside the working directories "
                "for this session ('/p'), and Claude Code asks before a shell command creates, "
                "changes or removes files there.")
PERSON_REFUSAL = ("The user doesn't want to proceed with this tool use. The tool use was "
                  "rejected (eg. if it was a file edit, the new_string was NOT written to the "
                  "file). STOP what you are doing and wait for the user to tell you how to "
                  "proceed.")


@pytest.mark.parametrize(("text", "stamp", "kind"), [
    (HOST_REFUSAL, "deny:host", "host"), (PERSON_REFUSAL, "deny:user", "user")])
def test_refusal_is_a_persons_only_when_the_transcript_shows_one(
        tmp_path: Path, text: str, stamp: str, kind: str) -> None:
    """A prompted call refused as in `claude -p` is deny:host (with what the host said); the
    refusal text of a person at the prompt is deny:user."""
    transcript = tmp_path / "t.jsonl"
    sid = "refusal-1"
    pre = _bash(sid, "toolu_r", "touch x")
    pre["transcript_path"] = str(transcript)
    assert 0 == hook("PreToolUse", pre).returncode
    ask = base("PermissionRequest", sid, tool_name="Bash", tool_input={"command": "touch x"})
    ask["transcript_path"] = str(transcript)
    assert 0 == hook("PermissionRequest", ask).returncode
    lines = [
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_r", "is_error": True, "content": text}]}},
        {"type": "assistant", "message": {"id": "msg_2", "model": "m", "stop_reason": "end_turn",
                                          "content": [{"type": "text", "text": "ok"}]}},
    ]
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    stop = base("Stop", sid, stop_hook_active=False)
    stop["transcript_path"] = str(transcript)
    assert 0 == hook("Stop", stop).returncode
    recs = list(journal.iter_records(journal.locate(sid)))
    terminal = [journal.body_of(r) for r in recs
                if journal.kind_of(r) == "tool_batch.effect.terminal"]
    applied = [journal.body_of(r)["decision_source"]["kind"] for r in recs
               if journal.kind_of(r) == "decision_applied"]
    assert ([stamp], [kind]) == ([t["authorized_by"] for t in terminal], applied)


def test_fifo_transcript_neither_hangs_nor_blocks_the_next_hook(tmp_path: Path) -> None:
    """A FIFO as transcript_path: two PreToolUse calls of the session both decide on their
    own (no deadline deny) and both intents are journaled."""
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    reasons = []
    for i in (1, 2):
        payload = _bash(SID, f"toolu_f{i}", "rm -rf ~/")
        payload["transcript_path"] = str(fifo)
        out = hook_output(hook("PreToolUse", payload, env={"SMLLM_HOOK_DEADLINE": "20"},
                               timeout=30))
        assert out is not None
        reasons.append("ran out of time" in out["hookSpecificOutput"]["permissionDecisionReason"])
    intents = [journal.body_of(r)["tool_use_id"] for r in journal.iter_records(
        journal.locate(SID)) if journal.kind_of(r) == "side_effect_intent"]
    assert ([False, False], ["toolu_f1", "toolu_f2"]) == (reasons, intents)


def test_deadline_denies_a_hook_stuck_on_the_lock() -> None:
    """A PreToolUse waiting on a journal lock held elsewhere denies at its deadline."""
    import fcntl

    path = journal.locate(SID, create=True)
    _append(path, 1)
    with open(path, "rb") as log, open(log_lock_file(log.fileno()), "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the lock every writer of this log takes
        proc = hook("PreToolUse", _bash(SID, "toolu_l", "ls"),
                    env={"SMLLM_HOOK_DEADLINE": "1"}, timeout=30)
    out = hook_output(proc)
    assert out is not None
    assert (0, "deny", "smllm could not decide on this call and denies it (fail closed): the "
                       "hook ran out of time (1 s, SMLLM_HOOK_DEADLINE)") == (
        proc.returncode, out["hookSpecificOutput"]["permissionDecision"],
        out["hookSpecificOutput"]["permissionDecisionReason"])
