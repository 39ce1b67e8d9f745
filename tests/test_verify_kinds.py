"""``smllm verify`` says what a file is when it is not a journal, re-checks an export with
``--export``, reports a log without an orderly end, and stays exact with bounded state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import smllm
from smllm import journal
from smllm.journal import verify as verify_mod
from smllm.journal.verify import verify

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
BILLING_ID = "c7dfaecc-adf6-4348-87df-95576e15136e"
MIGRATION_ID = "ff273730-5b1e-4c2a-9d3f-7a8b9c0d1e2f"


def _copy(tmp_path: Path, name: str, sid: str) -> Path:
    log = tmp_path / sid / "session.jsonl"
    log.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / name / sid / "session.jsonl", log)
    return log


@pytest.fixture
def billing(tmp_path: Path) -> Path:
    return _copy(tmp_path, "billing", BILLING_ID)


def _export(log: Path, out: Path, *flags: str) -> Path:
    proc = smllm("export", "--journal", str(log), "--out", str(out), *flags)
    assert 0 == proc.returncode, proc.stderr
    return out


def test_an_export_is_refused_with_how_to_verify_it(billing: Path, tmp_path: Path) -> None:
    """An export given as a journal: exit 1, says it is an export and names --export."""
    out = _export(billing, tmp_path / "t.json")
    proc = smllm("verify", str(out))
    assert (1, f"FAILED: {out}:1: not a journal: it is an smllm export (one JSON document), "
               "not a journal; verify an export's hash chain with "
               "`smllm verify --export PATH`\n") == (proc.returncode, proc.stdout)


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "session.jsonl"
    empty.write_bytes(b"")
    proc = smllm("verify", str(empty))
    assert (1, f"FAILED: {empty}:1: not a journal: the file is empty (a journal holds at "
               "least its first record)\n") == (proc.returncode, proc.stdout)


@pytest.mark.parametrize("text", ["hello\nworld\n", "a,b,c\n1,2,3\n4,5,6", '{"hello": 1}\n'])
def test_a_text_file_is_refused_with_what_it_starts_with(tmp_path: Path, text: str) -> None:
    """Text with no journal record (not even JSON lines with an envelope): exit 1, the
    first characters shown, and the JSON report says it is not a journal."""
    junk = tmp_path / "notes.txt"
    junk.write_text(text)
    proc = smllm("verify", str(junk))
    lines = len(text.splitlines())
    first = text.splitlines()[0]
    assert (1, f"FAILED: {junk}:1: not a journal: none of its {lines} line(s) is a journal "
               f"record (it starts with {first!r}); a journal is the session.jsonl the hooks "
               "write; verify an export's hash chain with `smllm verify --export PATH` "
               "instead\n") == (proc.returncode, proc.stdout)
    report = json.loads(smllm("verify", str(junk), "--json").stdout)
    assert (False, True) == (report["ok"], report["not_journal"].startswith("none of its"))


def test_export_flag_rechecks_the_chain_of_the_envelopes(billing: Path, tmp_path: Path) -> None:
    """`verify --export` on seed 000's raw export: ok, and the events are the log's bytes."""
    out = _export(billing, tmp_path / "t.json")
    proc = smllm("verify", "--export", str(out))
    assert (0, f"ok: {out} (stream main): 233 records, hash chain intact, invariants hold\n"
               "  the events are the logs' exact bytes: their sha256 is the one the export's "
               "header records\n") == (proc.returncode, proc.stdout)


def _edit_event(out: Path, old: str, new: str) -> None:
    text = out.read_text()
    assert old in text
    out.write_text(text.replace(old, new, 1))


def test_export_flag_names_an_edited_envelope(billing: Path, tmp_path: Path) -> None:
    out = _export(billing, tmp_path / "t.json")
    _edit_event(out, "rm -rf stale_cache.txt\"}", "rm -rf stale_cache.tx\"}")
    proc = smllm("verify", "--export", str(out))
    assert 1 == proc.returncode
    assert proc.stdout.startswith(f"FAILED: {out} (stream main):180: record was edited"), \
        proc.stdout


def test_export_flag_sees_a_removed_event(billing: Path, tmp_path: Path) -> None:
    """The last event removed leaves a valid chain; the header's line count gives it away."""
    out = _export(billing, tmp_path / "t.json")
    lines = out.read_text().splitlines(keepends=True)
    end = lines.index("  ]\n")
    lines[end - 2] = lines[end - 2].rstrip().rstrip(",") + "\n"
    del lines[end - 1]
    out.write_text("".join(lines))
    proc = smllm("verify", "--export", str(out))
    assert (1, f"FAILED: {out} (stream main): the export's header says 233 line(s), its "
               "events hold 232: events were removed or added\n"
               f"  also {out} (stream main): the events' bytes do not add up to the log's "
               "sha256 in the export's header: the export was edited\n") == (
        proc.returncode, proc.stdout)


def test_export_flag_refuses_a_redacted_export(billing: Path, tmp_path: Path) -> None:
    out = _export(billing, tmp_path / "r.json", "--redacted")
    proc = smllm("verify", "--export", str(out))
    assert (1, True) == (proc.returncode, "verify the raw export" in proc.stdout)


def test_a_journal_cut_off_mid_effect_is_unfinished(tmp_path: Path) -> None:
    """Seed 000's migration killed while `gate.py rec_8` ran: the chain holds, and the
    report says the log has no orderly end, naming the effect that never finished."""
    log = _copy(tmp_path, "migration", MIGRATION_ID)
    proc = smllm("verify", str(log))
    assert (0, f"unfinished: {log}: 505 records, hash chain intact, invariants hold; no "
               "orderly end: 1 effect(s) started and never finished: toolu_16 (sequence "
               "505, line 505); no session end after the last session start or resume\n"
               "  the session crashed or is still running: after a crash, `smllm resume` "
               "continues it and `smllm reconcile SEQ` records what an unknown effect did\n"
            ) == (proc.returncode, proc.stdout)
    report = json.loads(smllm("verify", str(log), "--json").stdout)
    assert (True, False, [505]) == (report["ok"], report["orderly_end"],
                                    [e["sequence"] for e in report["open_effects"]])


def test_a_session_that_ended_in_order_is_ok(billing: Path) -> None:
    report = json.loads(smllm("verify", str(billing), "--json").stdout)
    assert (True, True, [], []) == (report["ok"], report["orderly_end"], report["unfinished"],
                                    report["open_effects"])


def _intents(path: Path, keys: list[str], *, start: bool = True) -> None:
    for n, key in enumerate(keys):
        tid = f"toolu_{n}"
        entries = [journal.event("side_effect_intent", tool_use_id=tid, idempotency_key=key)]
        if start:
            entries.append(journal.fact("tool_batch.effect.started", {"tool_use_id": tid}))
            entries.append(journal.fact("tool_batch.effect.terminal", {"tool_use_id": tid}))
        journal.append(path, entries)


def test_a_saturated_filter_gives_no_false_finding(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """With a filter of 8 bits every key is a candidate: the second pass confirms them
    exactly, so 40 distinct keys verify clean and one real repeat is named once."""
    monkeypatch.setattr(verify_mod._Seen, "BITS", 8)
    clean, repeated = tmp_path / "a" / "session.jsonl", tmp_path / "b" / "session.jsonl"
    clean.parent.mkdir()
    repeated.parent.mkdir()
    _intents(clean, [f"idem-{n}" for n in range(40)])
    keys = [f"idem-{n}" for n in range(40)]
    keys[30] = "idem-7"
    _intents(repeated, keys)
    bad = verify(repeated)
    assert (True, [(91, "idempotency key idem-7 already used on line 22")]) == (
        verify(clean).ok, [(p.line, p.what) for p in bad.problems])


def test_a_start_long_after_its_intent_is_confirmed(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Intents fall out of the bounded window of recent ones; a start whose intent left it
    is confirmed by the second pass, and a start with no intent at all is still caught."""
    monkeypatch.setattr(verify_mod, "RECENT_INTENTS", 2)
    path = tmp_path / "session.jsonl"
    _intents(path, [f"idem-{n}" for n in range(6)], start=False)
    journal.append(path, [journal.fact("tool_batch.effect.started", {"tool_use_id": "toolu_0"}),
                          journal.fact("tool_batch.effect.started", {"tool_use_id": "toolu_x"})])
    report = verify(path)
    assert [(8, "effect toolu_x started without a durable side_effect_intent before it")] == [
        (p.line, p.what) for p in report.problems]
