"""Seed 000's crash and resume through the real Claude Code CLI: the gated migration.

The sample (tests/fixtures/ledger_migration) migrates eight records one at a time
through a slow gate, with an append-only ledger and a verifier strict about
duplicates. The scripted model migrates rec_1..rec_7; `claude` is SIGKILLed while the
gate call for rec_8 is in flight. `claude --resume` then records `crash_inferred` and
`session.resumed`, tells the model the unknown effect, holds its re-attempt until
`smllm reconcile` records the verified outcome, and finishes rec_8 only.
"""


from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from harness import Harness, Run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "ledger_migration"
TOKEN = "zorptic-migrator-7731"
MIGRATE = """import json, sys
rec, key = sys.argv[1], sys.argv[2]
path = f"records/{rec}.json"
old = json.load(open(path))
new = {"id": old["id"], "schema": 2, "owner": old["owner"],
       "balance": {"cents": old["balance_cents"], "currency": "USD"},
       "migrated_by": "zorptic-migrator-7731", "unlock_key": key}
open(path, "w").write(json.dumps(new) + "\\n")
open("migration_ledger.txt", "a").write(f"{rec} {key} zorptic-migrator-7731\\n")
"""
PROMPT = ("Read MIGRATION.md and perform the gated Zorptic ledger migration exactly as "
          "specified, working through all 8 records. For each record, run python3 gate.py "
          "rec_N to get its key, migrate that record, append its ledger line, then run the gate "
          "for the next record. Proceed record by record.")


def _key(rec: str) -> str:
    return hashlib.sha256(f"zorptic:{rec}".encode()).hexdigest()[:16]


def _bash(command: str, tool_id: str | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"tool_use": {"name": "Bash", "input": {"command": command}}}
    if tool_id is not None:
        turn["id"] = tool_id
    return turn


def _gate(n: int, tool_id: str | None = None) -> dict[str, Any]:
    return _bash(f"python3 gate.py rec_{n}", tool_id)


def _migrate(n: int, tool_id: str | None = None) -> dict[str, Any]:
    return _bash(f"python3 .tools/migrate_one.py rec_{n} {_key(f'rec_{n}')}", tool_id)


def _ledger(project: Path) -> list[str]:
    return (project / "migration_ledger.txt").read_text().splitlines()


def _gate8_in_flight(project: Path) -> Any:
    """kill_after: seven ledger lines, and the gate call for rec_8 has started."""

    def due(run: Run) -> bool:
        if len(_ledger(project)) < 7:
            return False
        intents = {r["sequence"] for r in run.journal()
                   if (r["payload"].get("event") or {}).get("kind") == "side_effect_intent"
                   and "gate.py rec_8" in json.dumps(r["payload"]["event"].get("input"))}
        return any(r.get("payload_type") == "tool_batch.effect.started"
                   and r["payload"]["record"].get("intent_sequence") in intents
                   for r in run.journal())

    return due


def _kinds(records: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """Seed 000's jq spine: (sequence, kind, operation or exit_reason)."""
    out = []
    for r in records:
        ev = (r.get("payload") or {}).get("event")
        k = ev["kind"] if isinstance(ev, dict) else (r.get("payload_type") or "")
        body = ev if isinstance(ev, dict) else (r.get("payload") or {}).get("record") or {}
        out.append((r["sequence"], k, str(body.get("operation") or body.get("exit_reason") or "")))
    return out


def _received(run: Run, text: str) -> bool:
    """The model received ``text`` in a request of this run (messages or system)."""
    return any(text in json.dumps(body.get(part)) for body in run.requests
               for part in ("messages", "system"))


def _results_text(run: Run) -> dict[str, str]:
    """The text of each tool result the model received, by tool_use_id."""
    out = {}
    for block in run.tool_results():
        content = block.get("content")
        if isinstance(content, list):
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        out[str(block.get("tool_use_id"))] = str(content)
    return out


@pytest.mark.parametrize("sandbox", [False, True], ids=["no-sandbox", "sandbox"])
def test_crash_mid_gate_then_resume_migrates_every_record_exactly_once(
        claude: Harness, sandbox: bool) -> None:
    """Seed 000 end to end: kill during the rec_8 gate, resume, the agent reconciles the
    unknown effect itself (in the sandbox too, where the journal is read-only to its
    commands: its plain `smllm reconcile` is one of smllm's own), and finishes once."""
    project = claude.project
    for item in SAMPLE.iterdir():
        dst = project / item.name
        (shutil.copytree if item.is_dir() else shutil.copyfile)(item, dst)
    (project / ".tools").mkdir()
    (project / ".tools" / "migrate_one.py").write_text(MIGRATE)
    claude.install_smllm(*(() if sandbox else ("--no-sandbox",)))
    # `smllm` on PATH, as the installer puts it (README command 1)
    env = {"GATE_SLEEP": "1.5",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

    script = [step for n in range(1, 9) for step in (_gate(n), _migrate(n))]
    first = claude.run(PROMPT, script=[*script, {"text": "done"}], permission_mode="bypass",
                       env=env, kill_after=_gate8_in_flight(project), timeout=240)
    rec8 = json.loads((project / "records" / "rec_8.json").read_text())
    assert (True, 7, 1) == (first.killed, len(_ledger(project)), rec8["schema"]), first.describe()
    sid = first.session_id
    gates = [t for t in _results_text(first).values() if t.startswith("unlock key for rec_")]
    assert 7 == len(gates), _results_text(first)
    in_flight = [s for s, k, op in _kinds(first.journal()) if k == "side_effect_intent"][-1]

    evidence = "ledger has 7 lines and rec_8 is still v1"
    # one plain command: smllm's own, which the gate admits (and the sandbox lets out)
    reconcile = f"smllm reconcile {in_flight} --outcome not-applied --evidence '{evidence}'"
    second = claude.run(
        "Continue the migration from where it stopped.", resume=sid, permission_mode="bypass",
        env=env, timeout=240,
        script=[_gate(8, "toolu_retry"), _bash("wc -l < migration_ledger.txt", "toolu_check"),
                _bash(reconcile, "toolu_reconcile"), _gate(8, "toolu_gate8"),
                _migrate(8, "toolu_migrate8"), _bash("python3 verify.py", "toolu_verify"),
                {"text": "Migration complete."}])
    assert 0 == second.returncode, second.describe()

    records = second.journal()
    spine = [(k, op) for _, k, op in _kinds(records)
             if k in ("session.end", "session.resumed")]
    resumed = next(r for r in records if r.get("payload_type") == "session.resumed")
    assert [("session.end", "crash_inferred"), ("session.resumed", "")] == spine[:2]
    assert [in_flight] == resumed["payload"]["record"]["unknown_effects"]
    assert 1 == resumed["payload"]["record"]["prior_turn_count"]

    # the model was told the unknown effect, and its first re-attempt was held

    told = f"sequence {in_flight}: tool:bash python3 gate.py rec_8"
    assert _received(second, "their outcome is UNKNOWN"), second.describe()
    assert _received(second, told), second.describe()
    results = _results_text(second)
    assert "smllm holds this call" in results["toolu_retry"], results
    assert "7" == results["toolu_check"].strip(), results
    assert f"reconciled effect {in_flight}" in results["toolu_reconcile"], results
    assert f"unlock key for rec_8: {_key('rec_8')}" in results["toolu_gate8"], results
    assert "OK: 8 records migrated exactly once" in results["toolu_verify"], results

    # the end state: every record once, no duplicate ledger line, no key twice
    verify = subprocess.run([sys.executable, "verify.py"], cwd=project, capture_output=True,
                            text=True, check=False)
    assert (0, 8, 8) == (verify.returncode, len(_ledger(project)), len(set(_ledger(project))))
    keys = [r["payload"]["event"]["idempotency_key"] for r in records
            if (r["payload"].get("event") or {}).get("kind") == "side_effect_intent"]
    assert [] == [k for k, n in Counter(keys).items() if n > 1]
    reconciled = [r["payload"]["record"] for r in records
                  if r.get("payload_type") == "tool_batch.effect.terminal"
                  and r["payload"]["record"].get("observed_via") == "reconcile"]
    assert [(in_flight, "not_applied")] == [(r["intent_sequence"], r["outcome"])
                                            for r in reconciled]
    claims = [r["payload"]["record"] for r in records
              if r.get("payload_type") == "effect.reconciled"]
    assert [("agent", evidence)] == [(c["verified_by"], c["note"]) for c in claims]
    check = claude.smllm("verify", sid)
    assert 0 == check.returncode, check.stdout + check.stderr
