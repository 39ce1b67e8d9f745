"""Benchmark: the readers' memory and the index's cold build, against the log's length.

    .venv/bin/python bench/bench_readers.py [--sizes 1000,100000,1000000] [--keep DIR]

For each size, one session of that many records is written with the journal's own
encoder (``bench_export.write_log``'s realistic mix) into a fresh ``SMLLM_HOME``, and
exported once. Then each reader runs in its own process under ``/usr/bin/time -v``
(a fresh, small parent: ``ru_maxrss`` of a child read by ``os.wait4`` includes the
memory its parent had when it forked, so a large benchmark process would inflate it):

* ``verify``   ``smllm verify PATH``
* ``ledger``   ``smllm ledger --plain EXPORT``
* ``ledger-j`` ``smllm ledger --plain --journal PATH`` (straight from the journal)
* ``index``    the cold build: ``smllm sessions`` with no index file yet, ``--index-rounds``
  times, each round after a baseline run (the median and range of both are printed)

The baseline of the same run is the least any reader must do: ``python -I -S`` reading
every line and ``json.loads``-ing it (the interpreter flags the hooks run with). Printed:
wall time, CPU time (user + system: on a machine shared with other work the wall time
mostly measures the wait for a core), peak RSS, the load average, and the ratios the
acceptance of issue 25 names: peak RSS at the largest size over the smallest (limit 1.5x)
and the cold index build at the largest size (limit 12 s; linear means time ratio ~ size
ratio from 100k).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_export import write_log

PYTHON = sys.executable
TIME = "/usr/bin/time"
BASELINE = ("import json,sys\nn=0\nfor line in open(sys.argv[1],'rb'):\n"
            "    json.loads(line); n+=1\nprint(n)\n")
RSS_LIMIT = 1.5
INDEX_LIMIT_S = 12.0
SID = "0bench00-0000-4000-8000-000000000000"



def measure(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, float]:
    """(wall seconds, peak RSS KiB, CPU seconds) of one process under ``/usr/bin/time -v``
    (CPU: user + system, which a machine shared with other work inflates less than the
    wall time)."""
    t0 = time.perf_counter()
    proc = subprocess.run([TIME, "-v", *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if proc.returncode not in (0, 3) or found is None:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-2000:]}")
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)",
                                           proc.stderr))
    return wall, int(found.group(1)), cpu


def bench_size(root: Path, records: int, index_rounds: int = 1
               ) -> dict[str, tuple[float, int, float]]:
    home = root / f"home-{records}"
    env = {**os.environ, "SMLLM_HOME": str(home)}
    env.pop("SMLLM_STORE_URL", None)
    log = _place(home, records)
    out = root / f"export-{records}.json"
    smllm = [PYTHON, "-m", "smllm"]
    subprocess.run([*smllm, "export", "--journal", str(log), "--out", str(out)], env=env,
                   cwd=root, check=True, stdout=subprocess.DEVNULL)
    baseline = [PYTHON, "-I", "-S", "-c", BASELINE, str(log)]
    results = {
        "baseline": measure(baseline, env, root),
        "verify": measure([*smllm, "verify", str(log)], env, root),
        "ledger": measure([*smllm, "ledger", "--plain", str(out)], env, root),
        "ledger-j": measure([*smllm, "ledger", "--plain", "--journal", str(log)], env, root),
    }
    builds, bases = [], []
    for _ in range(index_rounds):  # interleaved with the baseline: the same load on both
        index = home / "index.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{index}{suffix}").unlink(missing_ok=True)
        bases.append(measure(baseline, env, root))
        builds.append(measure([*smllm, "sessions", "--all"], env, root))
    results["index"] = _median(builds)
    results["baseline"] = _median([results["baseline"], *bases])
    load = os.getloadavg()[0]  # a busy machine stretches every wall time below
    base = results["baseline"][0]
    print(f"\n{records:,} records ({log.stat().st_size / 1e6:,.0f} MB), load average "
          f"{load:.1f} on {os.cpu_count()} cores after the readers ran:")
    for name, (wall, rss, cpu) in results.items():
        print(f"  {name:<9} {wall:7.2f}s wall {cpu:7.2f}s cpu  peak {rss / 1024:6.1f} MiB  "
              f"time x{wall / base:5.2f} baseline", flush=True)
    walls, cpus = sorted(b[0] for b in builds), sorted(b[2] for b in builds)
    print(f"  index: median of {len(builds)} cold builds, each after a baseline run (wall "
          f"{walls[0]:.2f}–{walls[-1]:.2f}s, cpu {cpus[0]:.2f}–{cpus[-1]:.2f}s)")
    out.unlink()
    shutil.rmtree(home, ignore_errors=True)
    return results


def _median(runs: list[tuple[float, int, float]]) -> tuple[float, int, float]:
    """Median wall, largest peak RSS, median CPU of several runs of one command."""
    return (statistics.median(r[0] for r in runs), max(r[1] for r in runs),
            statistics.median(r[2] for r in runs))


def _place(home: Path, records: int) -> Path:
    """A session folder as the hooks lay it out (sessions/by-id/<id> -> its dated folder)."""
    folder = home / "sessions" / "2026" / "08" / "02" / SID
    by_id = home / "sessions" / "by-id"
    by_id.mkdir(parents=True, mode=0o700)
    os.chmod(home, 0o700)
    os.chmod(home / "sessions", 0o700)
    (by_id / SID).write_text("2026/08/02\n")
    log = folder / "session.jsonl"
    write_log(log, records)
    for p in (folder, folder.parent, folder.parent.parent, folder.parent.parent.parent):
        os.chmod(p, 0o700)
    return log


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--keep", type=Path, help="work in this folder (default: a temp dir)")
    parser.add_argument("--index-rounds", type=int, default=3,
                        help="cold index builds per size (interleaved with the baseline)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    root = args.keep or Path(tempfile.mkdtemp(prefix="smllm-bench-readers-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        runs = {n: bench_size(root, n, args.index_rounds) for n in sizes}
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    small, large = sizes[0], sizes[-1]
    ok = True
    print(f"\npeak RSS, {large:,} vs {small:,} records (limit x{RSS_LIMIT}):")
    for name in ("baseline", "verify", "ledger", "ledger-j", "index"):
        ratio = runs[large][name][1] / runs[small][name][1]
        bounded = name in ("verify", "ledger", "ledger-j")
        verdict = ("  OK" if ratio <= RSS_LIMIT else "  OVER") if bounded else ""
        ok = ok and (not bounded or ratio <= RSS_LIMIT)
        print(f"  {name:<9} x{ratio:.2f}{verdict}")
    wall, _, cpu = runs[large]["index"]
    print(f"\ncold index build at {large:,} records: {wall:.1f}s wall, {cpu:.1f}s cpu "
          f"(limit {INDEX_LIMIT_S:.0f} s){'  OK' if wall <= INDEX_LIMIT_S else '  OVER'}")
    ok = ok and wall <= INDEX_LIMIT_S
    mids = [n for n in sizes if n >= 100_000]
    if len(mids) >= 2:
        a, b = mids[0], mids[-1]
        ta, tb = runs[a]["index"], runs[b]["index"]
        print(f"  {b:,} vs {a:,}: wall x{tb[0] / ta[0]:.1f}, cpu x{tb[2] / ta[2]:.1f} for "
              f"x{b / a:.0f} the records (baseline wall "
              f"x{runs[b]['baseline'][0] / runs[a]['baseline'][0]:.1f})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
