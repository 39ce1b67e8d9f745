"""Benchmark: `smllm export` on 100k and 1M-record logs, `smllm ledger`, `smllm verify`.

    .venv/bin/python bench/bench_export.py [--sizes 100000,1000000] [--rounds 3] [--keep DIR]

Logs are written with the journal's own encoder (no hooks), in a realistic mix: a turn,
model calls, tool intents with started and terminal records (some outputs large enough
to be replaced by ``omitted_live_only`` markers), approvals. Every command runs in its
own process, in interleaved rounds (medians and ranges); peak RSS per child comes from GNU
time (``bench/measure.py``: ``os.wait4`` would include this process's memory). The
baseline, measured in the same rounds on the same log, is the least any reader must do: a
Python process with the hooks' flags (``-I -S``) that reads every line and ``json.loads``
it. The fsync floor of the same run (bare ``write`` + ``fsync`` of lines of the log's mean
size) is printed beside the throughputs. Printed: records/s, peak memory, and the ratios
(export ÷ baseline time; peak memory at the largest size ÷ at the smallest — the
export must stay within 10 %; the redacted export ÷ the raw export's time, on the same
log — within 1.5×: the median and range of each round's own ratio, the load average
beside). At the sizes of ``--secret-sizes`` a second log, the same mix with one secret
planted in a prompt, is exported too: there every record is masked by value (the
document holds a secret), the redacted export's costlier case, printed beside.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import Stats, fsync_floor, hook_interpreter, timed_with_peak

from smllm import journal
from smllm.base import clock

PYTHON = sys.executable
T0 = 1785665700000
BASELINE = ("import json,sys\nn=0\nfor line in open(sys.argv[1],'rb'):\n"
            "    json.loads(line); n+=1\nprint(n)\n")


#: the secret ``--secret-sizes`` logs carry (in one prompt, step 3)
PLANTED = "use DB_PASSWORD=Zq8x9pW2kLmN3vB7 for the staging database"


def _entries(i: int, planted: bool = False) -> list[journal.Entry]:
    """One 'step' of a session: ten records (eleven in the step holding the secret)."""
    tid = f"toolu_{i:08d}"
    out = "ok\n" * 20 if i % 50 else "x" * (journal.STRING_LIMIT + 1)
    secret = [journal.event("proposed", turn=2, prompt=PLANTED)] if planted and i == 3 else []
    return [*secret,
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


def write_log(path: Path, records: int, planted: bool = False) -> None:
    """``records`` records with a valid hash chain, written straight with the encoder
    (``planted``: one of them a prompt holding :data:`PLANTED`)."""
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
                batch = _entries(i, planted)
                i += 1
            entry = batch.pop(0)
            seq += 1
            line, _, prev = journal.encode_record(entry, sequence=seq, prev=prev,
                                                  recorded_at=clock.iso_utc(T0 + seq * 10),
                                                  skipped=0)
            fh.write(line)


def bench_size(root: Path, records: int, rounds: int, secret: bool = False
               ) -> dict[str, tuple[float, int]]:
    """Median wall seconds and peak RSS KiB of each reader on a log of ``records``
    (``secret``: the planted log's exports too)."""
    log = root / f"sid-bench-{records}" / "session.jsonl"
    t = time.perf_counter()
    write_log(log, records)
    size = log.stat().st_size
    print(f"\n{records:,} records: log {size / 1e6:,.0f} MB written in "
          f"{time.perf_counter() - t:.1f}s", flush=True)
    out = root / f"export-{records}.json"
    red = root / f"export-{records}-redacted.json"
    env = {**os.environ, "SMLLM_HOME": str(root / "home")}
    python, flags = hook_interpreter()
    smllm = [PYTHON, "-m", "smllm"]
    cases = {
        "baseline": [python, *flags, "-c", BASELINE, str(log)],
        "export": [*smllm, "export", "--journal", str(log), "--out", str(out)],
        "redacted": [*smllm, "export", "--journal", str(log), "--out", str(red), "--redacted"],
        "ledger": [*smllm, "ledger", "--plain", str(out)],
        "verify": [*smllm, "verify", str(log)],
    }
    seeded = root / f"sid-bench-{records}-secret" / "session.jsonl"
    if secret:
        write_log(seeded, records, planted=True)
        cases["export-s"] = [*smllm, "export", "--journal", str(seeded), "--out",
                             str(root / "export-s.json")]
        cases["redacted-s"] = [*smllm, "export", "--journal", str(seeded), "--out",
                               str(root / "export-s-redacted.json"), "--redacted"]
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    peaks: dict[str, list[int]] = {name: [] for name in cases}
    floors: list[float] = []
    for _ in range(rounds):
        floors.append(fsync_floor(str(root), 500, max(1, size // records)))
        for name, argv in cases.items():  # ledger reads the export: keep this order
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, kib = timed_with_peak(argv, env=env, cwd=str(root))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child's, via GNU time
            cpus[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            walls[name].append(wall)
            peaks[name].append(kib)
    base_wall = Stats.of(walls["baseline"]).median
    floor = Stats.of(floors)
    results = {}
    for name in cases:
        w = Stats.of(walls[name])
        rss = max(peaks[name])
        results[name] = (w.median, rss)
        print(f"  {name:<8} {w.median:7.2f}s [{w.low:.2f}–{w.high:.2f}]  "
              f"{records / w.median:>10,.0f} records/s  peak {rss / 1024:6.1f} MiB  "
              f"time x{w.median / base_wall:5.2f} baseline", flush=True)
    print(f"  fsync floor {floor.median:,.0f} lines/s [{floor.low:,.0f}–{floor.high:,.0f}] of "
          f"{size // records}-byte lines (write + fsync each, same folder, same run); "
          f"export reads {records / results['export'][0] / floor.median:,.1f}× that rate")
    load = os.getloadavg()
    ratio, cpu = _paired(walls["redacted"], walls["export"]), _paired(cpus["redacted"],
                                                                       cpus["export"])
    print(f"  redacted export x{ratio.median:.2f} [{ratio.low:.2f}–{ratio.high:.2f}] the raw "
          f"export's time, each round's own ratio (limit x1.50){'  OK' if ratio.median <= 1.50 else '  OVER'}"
          f"; CPU time x{cpu.median:.2f} [{cpu.low:.2f}–{cpu.high:.2f}]; load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    if secret:
        seeded_ratio = _paired(walls["redacted-s"], walls["export-s"])
        seeded_cpu = _paired(cpus["redacted-s"], cpus["export-s"])
        print(f"  with one secret in the log (every record masked by value): redacted export "
              f"x{seeded_ratio.median:.2f} [{seeded_ratio.low:.2f}–{seeded_ratio.high:.2f}] "
              f"the raw export's time, CPU time x{seeded_cpu.median:.2f} "
              f"[{seeded_cpu.low:.2f}–{seeded_cpu.high:.2f}]")
        for done in (seeded, root / "export-s.json", root / "export-s-redacted.json"):
            done.unlink()
    print(f"  export size {out.stat().st_size / 1e6:,.0f} MB, redacted "
          f"{red.stat().st_size / 1e6:,.0f} MB")
    log.unlink()
    out.unlink()
    red.unlink()
    return results


def _paired(a: list[float], b: list[float]) -> Stats:
    """The ratio ``a ÷ b`` of each round (run back to back, so the same load hits both)."""
    return Stats.of([x / y for x, y in zip(a, b, strict=True)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per size")
    parser.add_argument("--keep", type=Path, help="work in this folder (default: a temp dir)")
    parser.add_argument("--secret-sizes", default="100000",
                        help="sizes at which a log holding one secret is exported too")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    secret_sizes = {int(s) for s in args.secret_sizes.split(",") if s}
    root = args.keep or Path(tempfile.mkdtemp(prefix="smllm-bench-export-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        runs = {n: bench_size(root, n, args.rounds, n in secret_sizes) for n in sizes}
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    small, large = min(sizes), max(sizes)
    print(f"\npeak memory, {large:,} vs {small:,} records (flat means x1.00, limit x1.10):")
    for name in ("baseline", "export", "redacted", "ledger", "verify"):
        ratio = runs[large][name][1] / runs[small][name][1]
        verdict = "" if name != "export" else ("  OK" if ratio <= 1.10 else "  OVER 10 %")
        print(f"  {name:<8} x{ratio:.3f}{verdict}")
    export_ratio = runs[large]["export"][1] / runs[small]["export"][1]
    return 0 if export_ratio <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
