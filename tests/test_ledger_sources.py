"""smllm ledger: status marks, straight from a journal (--last, --session), a pure function
of its export, and streaming with long-open effects (issues 18, 20, 25)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import smllm
from journalgen import Effect, append, write_session
from smllm import journal
from smllm.audit import ledger
from smllm.journal import sidecar

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z
FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
BILLING_ID = "c7dfaecc-adf6-4348-87df-95576e15136e"


def _marked(tmp_path: Path) -> str:
    """A session with one effect of each fate, ended by a crash."""
    sid = "mark0001-run"
    path = write_session(sid, cwd=str(tmp_path), start_ms=T0, effects=[
        Effect("make ok"),
        Effect("make fails", outcome="failed"),
        Effect("make refused", decision="defer:host", outcome="refused_by_host",
               authorized_by="deny:host"),
        Effect("rm -rf /", decision="deny:policy", outcome=None),
        Effect("make crash", outcome=None),
        Effect("make settled", outcome=None),
    ], end="crash_inferred")
    tid = f"toolu_{sid[:8]}_5"
    append(path, [journal.fact("tool_batch.effect.terminal", {
        "tool_use_id": tid, "idempotency_key": sidecar.idempotency_key(sid, tid),
        "intent_sequence": 0, "operation": "tool:bash", "outcome": "not_applied",
        "observed_via": "reconcile"})], T0 + 60_000)
    return sid


MARKED_ROWS = [
    "   4  +   0.0s  tool run   bash       auth=allow:policy  make ok",
    "   7  +   0.0s  tool run   bash       auth=allow:policy  [failed]  make fails",
    "  10  +   0.0s  tool run   bash       auth=deny:host  [refused_by_host]  make refused",
    "  13  +   0.0s  tool run   bash       auth=deny:policy  [denied]  rm -rf /",
    "  15  +   0.0s  tool run   bash       auth=allow:policy  [unknown]  make crash",
    "  17  +   0.0s  tool run   bash       auth=allow:policy  [reconciled: not_applied]  "
    "make settled",
]


def test_rows_mark_what_did_not_simply_succeed(tmp_path: Path) -> None:
    """Failed, refused by the host, denied, unknown (started, never finished, the session
    over) and reconciled effects are marked, read straight from the journal; a success is
    not (seed 000's rows keep their form)."""
    sid = _marked(tmp_path)
    proc = smllm("ledger", "--session", sid, "--plain")
    assert (0, MARKED_ROWS) == (proc.returncode, proc.stdout.splitlines()[1:])


def test_marks_follow_the_viewers_rule(tmp_path: Path) -> None:
    """The ledger's status is the viewer's effect status: one rule, in audit/ledger."""
    from smllm.serve import views
    from smllm.serve.sessionscan import Effect as ViewEffect

    effect = ViewEffect("main", 1, 1, "bash", "x", "allow:policy", None, None, None, "t",
                        started=3)
    assert [("unknown", "in flight")] == [(views.effect_status(effect, False),
                                           views.effect_status(effect, True))]
    assert views.ledger_status is ledger.effect_status


def test_last_reads_the_journal_as_its_export_would(tmp_path: Path) -> None:
    """`ledger --last` in the session's folder prints what `ledger EXPORT` prints for its
    export, byte for byte (plain and --json), without an export written first."""
    _marked(tmp_path)
    out = tmp_path / "t.json"
    assert 0 == smllm("export", "--last", "--out", str(out), cwd=tmp_path).returncode
    for flags in (["--plain"], ["--json"], ["--effects", "--plain"]):
        direct = smllm("ledger", "--last", *flags, cwd=tmp_path)
        exported = smllm("ledger", str(out), *flags, cwd=tmp_path)
        assert (0, exported.stdout) == (direct.returncode, direct.stdout)


def test_an_export_and_a_journal_together_is_a_usage_error(tmp_path: Path) -> None:
    proc = smllm("ledger", str(tmp_path / "t.json"), "--last")
    assert (2, True) == (proc.returncode, "not both" in proc.stderr)


def test_no_source_is_a_usage_error() -> None:
    proc = smllm("ledger")
    assert (2, True) == (proc.returncode, "smllm ledger --last" in proc.stderr)


@pytest.fixture
def billing_export(tmp_path: Path) -> Path:
    log = tmp_path / BILLING_ID / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(FIXTURES / "billing" / BILLING_ID / "session.jsonl", log)
    out = tmp_path / "trajectory.json"
    assert 0 == smllm("export", "--journal", str(log), "--out", str(out)).returncode
    return out


def test_the_ledger_is_a_pure_function_of_its_export(billing_export: Path,
                                                     tmp_path: Path) -> None:
    """The same export gives byte-identical ledgers under another $HOME, another working
    folder and other disk contents (a Makefile and a git config that say different
    things)."""
    runs = []
    for n, script in enumerate(("ls", "rm -rf /")):
        home, work = tmp_path / f"home{n}", tmp_path / f"work{n}"
        work.mkdir()
        home.mkdir()
        (home / ".gitconfig").write_text(f"[alias]\n\tdiff = !{script}\n")
        (work / "Makefile").write_text(f"all:\n\t{script}\n")
        env = {"HOME": str(home), "SMLLM_HOME": str(tmp_path / f"smllm{n}")}
        runs.append([smllm("ledger", str(billing_export), *flags, cwd=work, env=env).stdout
                     for flags in (["--plain"], ["--effects", "--plain"], ["--json"])])
    assert runs[0] == runs[1]
    assert " 101  +  24.2s  tool run   bash       auth=allow:policy" not in runs[0][1]


def test_the_ledger_never_analyses_a_command(billing_export: Path) -> None:
    """The shell analyser is not even importable: the ledger still prints seed 000's
    rows (it reads known_safe from the intents; it analysed every bash row before)."""
    code = ("import sys\nsys.modules['smllm.gate'] = None\nsys.modules['smllm.gate.shell'] = None\n"
            "from smllm.cli import main\n"
            f"sys.exit(main(['ledger', {str(billing_export)!r}, '--effects', '--plain']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, env=dict(os.environ))
    assert (0, 6) == (proc.returncode, len(proc.stdout.splitlines())), proc.stderr


def test_long_open_effects_come_out_the_same_through_the_first_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With HOLD at 2 records, every effect that stays open longer (the crash, the
    reconciled one, a terminal landing late) is resolved from the first pass: the rows are
    the ones a ledger holding everything gives."""
    sid = _marked(tmp_path)
    path = Path(journal.log_path(sid))
    tid = "toolu_late"
    append(str(path), [
        journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                      tool_use_id=tid, idempotency_key="k-late", policy_decision="defer:host",
                      rule=None, reason="r", pending_action_id=None, input={"command": "late"}),
        *[journal.event("model.call", message_id=f"m{i}", model="m", stop_reason="end_turn",
                        usage={}, tool_use_ids=[]) for i in range(5)],
        journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": tid, "idempotency_key": "k-late", "intent_sequence": 0,
            "operation": "tool:bash", "outcome": "succeeded", "observed_via": "transcript",
            "authorized_by": "allow:user"}),
    ], T0 + 70_000)
    source = ledger.from_journal(path)
    whole = [r.plain() for r in ledger.iter_rows(source)]
    passes = []
    real = ledger._Pass.__init__

    def counting(self: ledger._Pass, **kw: object) -> None:
        passes.append(kw["late"] is None)
        real(self, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ledger, "HOLD", 2)
    monkeypatch.setattr(ledger._Pass, "__init__", counting)
    held = [r.plain() for r in ledger.iter_rows(source)]
    assert (whole, [False, True]) == (held, passes)
    assert "  21  +  70.0s  tool run   bash       auth=allow:user  late" in whole[-6:]
