"""Benchmark: `smllm export` on 100k and 1M-record logs, `smllm ledger`, `smllm verify`.

    .venv/bin/python bench/bench_export.py [--sizes 100000,1000000] [--keep DIR]

Logs are written with the journal's own encoder (no hooks), in a realistic mix: a turn,
model calls, tool intents with started and terminal records (some outputs large enough
to be replaced by ``omitted_live_only`` markers), approvals. Every command runs in its
own process; wall time and peak RSS come from ``os.wait4``. The baseline, measured in
the same run on the same log, is the least any reader must do: a Python process that
reads every line and ``json.loads`` it. Printed: records/s, peak memory, and the ratios
(export ÷ baseline time; peak memory at the largest size ÷ at the smallest — the
export must stay within 10 %).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smllm import journal
from smllm.base import clock

PYTHON = sys.executable
T0 = 1785665700000
BASELINE = ("import json,sys\nn=0\nfor line in open(sys.argv[1],'rb'):\n"
            "    json.loads(line); n+=1\nprint(n)\n")


def _entries(i: int) -> list[journal.Entry]:
    """One 'step' of a session: ten records."""
    tid = f"toolu_{i:08d}"
    out = "ok\n" * 20 if i % 50 else "x" * (journal.STRING_LIMIT + 1)
    return [
        journal.event("model.call", message_id=f"msg_{i}", model="claude-sonnet-4-5",
                      stop_reason="tool_use", usage={"input_tokens": 1200, "output_tokens": 80},
                      tool_use_ids=[tid], transcript_uuid=None, at=None),
        journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                      tool_use_id=tid, idempotency_key=f"idem-{i:032x}",
                      policy_decision="allow:policy", rule="default", reason="ordinary tool call",
                      pending_action_id=None, input={"command": f"python3 step.py {i}"},
                      permission_mode="default", agent_id=None),
        journal.fact("tool_batch.effect.started", {"tool_use_id": tid,
                     "idempotency_key": f"idem-{i:032x}", "intent_sequence": 0,
                     "operation": "tool:bash"}),
        journal.fact("tool_batch.effect.terminal", {"tool_use_id": tid,
                     "idempotency_key": f"idem-{i:032x}", "intent_sequence": 0,
                     "operation": "tool:bash", "outcome": "succeeded", "observed_via": "hook",
                     "duration_ms": 12, "output": {"stdout": out, "stderr": ""}}),
        journal.event("model.call", message_id=f"msg_{i}b", model="claude-sonnet-4-5",
                      stop_reason="tool_use", usage={"input_tokens": 1300, "output_tokens": 60},
                      tool_use_ids=[f"{tid}e"], transcript_uuid=None, at=None),
        journal.event("side_effect_intent", operation="tool:edit", tool_name="Edit",
                      tool_use_id=f"{tid}e", idempotency_key=f"idem-e{i:031x}",
                      policy_decision="allow:policy", rule="default", reason="ordinary tool call",
                      pending_action_id=None, input={"file_path": "a.py", "old_string": "a = 1",
                                                     "new_string": f"a = {i}"},
                      permission_mode="default", agent_id=None),
        journal.fact("tool_batch.effect.started", {"tool_use_id": f"{tid}e",
                     "idempotency_key": f"idem-e{i:031x}", "intent_sequence": 0,
                     "operation": "tool:edit"}),
        journal.fact("tool_batch.effect.terminal", {"tool_use_id": f"{tid}e",
                     "idempotency_key": f"idem-e{i:031x}", "intent_sequence": 0,
                     "operation": "tool:edit", "outcome": "succeeded", "observed_via": "hook",
                     "duration_ms": 3, "output": {"ok": True}}),
        journal.fact("host.event", {"hook_event_name": "Notification", "message": "working"}),
        journal.event("completed", turn=1),
    ]


def write_log(path: Path, records: int) -> None:
    """``records`` records with a valid hash chain, written straight with the encoder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    prev = journal.GENESIS
    seq = 0
    with open(path, "wb") as fh:
        start = journal.fact("session.start", {"session_id": path.parent.name, "source": "startup",
                                               "cwd": "/tmp/bench", "build": {"display": "bench"}})
        accepted = journal.event("accepted", turn=1, prompt="go")
        batch = [start, accepted]
        i = 0
        while seq < records:
            if not batch:
                batch = _entries(i)
                i += 1
            entry = batch.pop(0)
            seq += 1
            line, _, prev = journal.encode_record(entry, sequence=seq, prev=prev,
                                                  recorded_at=clock.iso_utc(T0 + seq * 10),
                                                  skipped=0)
            fh.write(line)


def measure(argv: list[str], cwd: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB) of one process, which must succeed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"failed: {' '.join(argv)}\n{err}")
    return wall, usage.ru_maxrss


def bench_size(root: Path, records: int) -> dict[str, tuple[float, int]]:
    log = root / f"sid-bench-{records}" / "session.jsonl"
    t = time.perf_counter()
    write_log(log, records)
    print(f"\n{records:,} records: log {log.stat().st_size / 1e6:,.0f} MB written in "
          f"{time.perf_counter() - t:.1f}s", flush=True)
    out = root / f"export-{records}.json"
    env_home = ["env", f"SMLLM_HOME={root / 'home'}"]
    smllm = [*env_home, PYTHON, "-m", "smllm"]
    results = {
        "baseline": measure([PYTHON, "-c", BASELINE, str(log)], root),
        "export": measure([*smllm, "export", "--journal", str(log), "--out", str(out)], root),
        "ledger": measure([*smllm, "ledger", "--plain", str(out)], root),
        "verify": measure([*smllm, "verify", str(log)], root),
    }
    base_wall = results["baseline"][0]
    for name, (wall, rss) in results.items():
        print(f"  {name:<8} {wall:7.2f}s  {records / wall:>10,.0f} records/s  "
              f"peak {rss / 1024:6.1f} MiB  time x{wall / base_wall:5.2f} baseline", flush=True)
    print(f"  export size {out.stat().st_size / 1e6:,.0f} MB")
    log.unlink()
    out.unlink()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--keep", type=Path, help="work in this folder (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.keep or Path(tempfile.mkdtemp(prefix="smllm-bench-export-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        runs = {n: bench_size(root, n) for n in sizes}
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    small, large = min(sizes), max(sizes)
    print(f"\npeak memory, {large:,} vs {small:,} records (flat means x1.00, limit x1.10):")
    for name in ("baseline", "export", "ledger", "verify"):
        ratio = runs[large][name][1] / runs[small][name][1]
        verdict = "" if name != "export" else ("  OK" if ratio <= 1.10 else "  OVER 10 %")
        print(f"  {name:<8} x{ratio:.3f}{verdict}")
    export_ratio = runs[large]["export"][1] / runs[small]["export"][1]
    return 0 if export_ratio <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
