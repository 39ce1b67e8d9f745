"""The keyed chain (issue 19, acceptance 2): a journal forged by a process without smllm's
key fails `smllm verify`, which names the first forged line.

The journals here are written by the real hooks (one process per call, as Claude Code
runs them). The forger is what an escaped process would be: it can rewrite the log, its
head file and the MAC file beside it, and it knows the line codec, but not the key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

from helpers import base, hook, smllm
from smllm import journal
from smllm.journal import keyed

SID = "6d1b7a52-2f0e-4c39-9c1e-5d2a8f3b1c07"


def _session(tmp_path: Path, commands: int = 3) -> Path:
    """A session through the real hooks: start, a prompt, Bash calls (gate and outcome)."""
    cwd = str(tmp_path)
    assert 0 == hook("SessionStart", base("SessionStart", SID, cwd=cwd, source="startup")).returncode
    assert 0 == hook("UserPromptSubmit", base("UserPromptSubmit", SID, cwd=cwd,
                                              prompt="build it")).returncode
    for n in range(commands):
        call = {"tool_name": "Bash", "tool_input": {"command": f"echo {n}"},
                "tool_use_id": f"toolu_{n}"}
        assert 0 == hook("PreToolUse", base("PreToolUse", SID, cwd=cwd, **call)).returncode
        assert 0 == hook("PostToolUse", base("PostToolUse", SID, cwd=cwd, **call,
                                             tool_response={"stdout": f"{n}"})).returncode
    assert 0 == hook("SessionEnd", base("SessionEnd", SID, cwd=cwd, reason="other")).returncode
    return journal.log_path(SID)


def _forge(log: Path, start: int, edit: object = None, *, append: int = 0) -> None:
    """Re-chain ``log`` from line ``start`` on as a process without the key can: each line
    re-encoded with the journal's own codec (``edit(record)`` changes one first), ``append``
    more records at the end, and the head file rewritten to match. The MAC file is left as
    it was (the forger cannot compute a MAC)."""
    lines = log.read_bytes().splitlines()
    out = lines[: start - 1]
    prev = json.loads(out[-1])["hash"] if out else journal.GENESIS
    recs = [json.loads(raw) for raw in lines[start - 1:]]
    if callable(edit):
        edit(recs[0])
    seq = int(json.loads(lines[start - 2])["sequence"]) if start > 1 else 0
    extra = [{"payload": {"event": {"kind": "proposed", "turn": 9, "prompt": "forged"}},
              "payload_type": None, "recorded_at": recs[-1]["recorded_at"], "id": None}
             for _ in range(append)]
    for rec in [*recs, *extra]:
        seq += 1
        entry = journal.Entry(rec["payload"], rec["payload_type"])
        line, _, prev = journal.encode_record(entry, sequence=seq, prev=prev,
                                              recorded_at=rec["recorded_at"], skipped=0,
                                              rid=rec["id"])
        out.append(line.rstrip(b"\n"))
    log.write_bytes(b"".join(raw + b"\n" for raw in out))
    journal.write_head(str(log), seq, prev)


def _unkeyed_problems(log: Path) -> list[dict[str, object]]:
    """What verify finds with no key on the machine: the plain hash chain's findings."""
    moved = log.parent.parent / "no-key"
    report = json.loads(smllm("verify", "--json", str(log),
                              env={"SMLLM_HOME": str(moved)}).stdout)
    return list(report["problems"])


def _intent_lines(log: Path) -> list[int]:
    return [n for n, raw in enumerate(log.read_bytes().splitlines(), 1)
            if journal.kind_of(json.loads(raw)) == "side_effect_intent"]


def test_a_rechained_journal_fails_verify_at_the_first_forged_line(tmp_path: Path) -> None:
    """The forger rewrites one intent's command and re-chains every line after it (head
    file too): the unkeyed chain is intact, so only the key shows it; verify fails on the
    edited line, the lines before it still hold."""
    log = _session(tmp_path)
    assert (0, "ok") == (smllm("verify", SID).returncode, smllm("verify", SID).stdout[:2])
    target = _intent_lines(log)[1]  # the second Bash call's intent

    def rewrite(rec: dict[str, object]) -> None:
        rec["payload"]["event"]["input"] = {"command": "echo harmless"}  # type: ignore[index]

    _forge(log, target, rewrite)
    assert [] == _unkeyed_problems(log)  # without the key the forgery passes
    out = smllm("verify", SID)
    first = out.stdout.splitlines()[0]
    assert (1, f"FAILED: {log}:{target}: record's MAC does not match its hash: the chain "
               "was rewritten by a process without smllm's key (forged)") == (out.returncode,
                                                                             first)
    report = json.loads(smllm("verify", SID, "--json").stdout)
    lines = len(log.read_bytes().splitlines())
    assert list(range(target, lines + 1)) == [p["line"] for p in report["problems"]]
    assert {"kind": "key", "available": True, "sequence": lines, "error": None} == {
        k: v for k, v in report["anchors"][-1].items() if k != "where"}


def test_records_appended_without_the_key_are_named(tmp_path: Path) -> None:
    """Two well-chained records appended after the session end, head file updated: the
    first of them is the first forged line."""
    log = _session(tmp_path, commands=1)
    lines = len(log.read_bytes().splitlines())
    _forge(log, lines, append=2)
    assert [] == _unkeyed_problems(log)
    out = smllm("verify", SID)
    assert out.stdout.startswith(f"FAILED: {log}:{lines + 1}: record has no MAC in chain.mac: "
                                 "it was not written by smllm with this user's key"), out.stdout
    assert 1 == out.returncode


def test_removing_the_mac_file_does_not_switch_the_check_off(tmp_path: Path) -> None:
    """The register in the key's folder says the log was written with the key: a log
    whose MAC file is gone (or emptied) fails from its first line."""
    log = _session(tmp_path, commands=1)
    macs = log.parent / keyed.MAC_NAME
    macs.write_bytes(b"")
    out = smllm("verify", SID)
    assert out.stdout.startswith(f"FAILED: {log}:1: record has no MAC"), out.stdout
    macs.unlink()
    assert smllm("verify", SID).stdout.startswith(f"FAILED: {log}:1: record has no MAC")


def test_a_slot_copied_from_another_record_does_not_vouch(tmp_path: Path) -> None:
    """MAC slots are bound to their sequence and to the record's hash: moving the MAC
    file's slots around (or another log's slots in) fails."""
    log = _session(tmp_path, commands=1)
    macs = log.parent / keyed.MAC_NAME
    data = macs.read_bytes()
    slot = keyed.SLOT
    swapped = data[slot:2 * slot] + data[:slot] + data[2 * slot:]
    macs.write_bytes(swapped)
    out = smllm("verify", SID)
    assert out.stdout.startswith(f"FAILED: {log}:1: record has no MAC"), out.stdout
    fixed = data[:slot].replace(b" 1 ", b" 2 ", 1)  # slot 1's MAC claimed for sequence 2
    macs.write_bytes(data[:slot] + fixed + data[2 * slot:])
    out = smllm("verify", SID)
    assert out.stdout.startswith(f"FAILED: {log}:2: record's MAC does not match"), out.stdout


def test_the_key_is_private_and_the_mac_is_hmac_sha256(tmp_path: Path, smllm_home: Path) -> None:
    """The key: 32 random bytes as hex, 0600, in a 0700 folder of smllm's state; each slot
    holds HMAC-SHA256 under it of the record's hash (checked with the standard library)."""
    log = _session(tmp_path, commands=1)
    key_file = smllm_home / keyed.KEY_FOLDER / keyed.KEY_NAME
    assert (0o700, 0o600) == (stat.S_IMODE(os.stat(key_file.parent).st_mode),
                              stat.S_IMODE(os.stat(key_file).st_mode))
    secret = bytes.fromhex(key_file.read_text().strip())
    assert 32 == len(secret)
    slots = (log.parent / keyed.MAC_NAME).read_bytes().splitlines()
    hashes = [json.loads(raw)["hash"] for raw in log.read_bytes().splitlines()]
    assert [f"{n:>20} " + hmac.new(secret, b"smllm-journal-mac-v1\0" + h.encode(),
                                   hashlib.sha256).hexdigest()
            for n, h in enumerate(hashes, 1)] == [s.decode() for s in slots]


def test_a_log_from_before_the_key_is_checked_unkeyed_and_says_so(tmp_path: Path,
                                                                  smllm_home: Path) -> None:
    """A journal written before the key existed (not in its register) still verifies, and
    verify's anchors say the key did not vouch for it."""
    log = _session(tmp_path, commands=1)
    register = smllm_home / keyed.KEY_FOLDER / keyed.REGISTER_NAME
    register.write_text("")
    report = json.loads(smllm("verify", SID, "--json").stdout)
    assert (True, False) == (report["ok"], report["anchors"][-1]["available"])
    assert "not in the key's register" in report["anchors"][-1]["error"]
    assert log.exists()


def test_a_writer_killed_between_the_mac_and_the_record_leaves_a_log_that_verifies(
        tmp_path: Path) -> None:
    """The MAC is written before the record: a hook killed in between (fault point
    before-write) leaves a slot the next writer overwrites, never a record without one."""
    _session(tmp_path, commands=1)
    # smllm allows it (bypassPermissions), so PreToolUse writes the effect's start too
    call = {"tool_name": "Bash", "tool_input": {"command": "echo killed"}, "tool_use_id": "t_k",
            "permission_mode": "bypassPermissions"}
    killed = hook("PreToolUse", base("PreToolUse", SID, cwd=str(tmp_path), **call),
                  env={"SMLLM_FAULT": "before-write"})
    assert -9 == killed.returncode
    call["tool_use_id"] = "t_after"
    assert 0 == hook("PreToolUse", base("PreToolUse", SID, cwd=str(tmp_path), **call)).returncode
    out = smllm("verify", SID)
    assert (0, "unfinished") == (out.returncode, out.stdout.split(":")[0]), out.stdout
