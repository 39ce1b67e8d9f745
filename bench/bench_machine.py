"""Benchmark: Stop hook and `smllm fire` wall time against `python -I -S -c pass` (the hooks' flags).

Everything is measured in this run, interleaved round by round so that machine load
affects all commands alike; the script prints medians and ratios to the baseline.
The target (issue 5) is a ratio of at most 1.5 for both, with machines compiled and
cached (the first call compiles; the measured calls hit the cache). The ``import re``
line shows the floor of any pip console script (its first line imports ``re``).

    .venv/bin/python bench/bench_machine.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "tests" / "golden" / "seed001"
#: what `smllm install` writes into Claude Code's settings (no runpy)
sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import Stats, baseline_argv, installed_hook_argv


def _time(cmd: list[str], env: dict[str, str], cwd: Path, stdin: bytes | None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="smllm-bench-"))
    try:
        project = tmp / "project"
        (project / ".smllm").mkdir(parents=True)
        for name in ("config.toml", "fix.smllm.yaml"):
            shutil.copy(SEED / name, project / ".smllm" / name)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SMLLM_", "CLAUDE"))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # users have .pyc files; so do we
        env["SMLLM_HOME"] = str(tmp / "home")
        py = sys.executable
        script = str(Path(py).with_name("smllm"))
        start = {"session_id": "bench-1", "cwd": str(project), "hook_event_name": "SessionStart",
                 "source": "startup"}
        subprocess.run([py, "-m", "smllm", "hook", "SessionStart"], env=env, cwd=project,
                       input=json.dumps(start).encode(), capture_output=True, check=True)
        key = (tmp / "home" / "bindings" / "claude" / "bench-1.key").read_text().strip()
        subprocess.run([py, "-m", "smllm", "fire", "--session", key, "enter", "--param",
                        "stateMachine=fix"], env=env, cwd=project, capture_output=True,
                       check=True)
        stop = json.dumps({"session_id": "bench-1", "cwd": str(project),
                           "hook_event_name": "Stop", "stop_hook_active": False,
                           "transcript_path": str(tmp / "none.jsonl")}).encode()
        unbound = json.dumps({"session_id": "bench-2", "cwd": str(tmp),
                              "hook_event_name": "Stop", "stop_hook_active": False,
                              "transcript_path": str(tmp / "none.jsonl")}).encode()
        cases: dict[str, tuple[list[str], bytes | None]] = {
            "python -I -S -c pass (baseline)": (baseline_argv(), None),
            "python -c pass (site loaded)": ([py, "-c", "pass"], None),
            "smllm fire (the installed command)": ([script, "fire", "--session", key, "yield"],
                                                   None),
            "python -m smllm fire": ([py, "-m", "smllm", "fire", "--session", key, "yield"],
                                     None),
            # the same without the script's shebang indirection
            "python -c main() fire": ([py, "-c", "from smllm.cli import main; main()", "fire",
                                       "--session", key, "yield"], None),
            "Stop hook (as installed)": (installed_hook_argv("Stop"), stop),
            # the same hook outside any project with machines: the journal's share of the time
            "Stop hook, no machines (journal only)": (installed_hook_argv("Stop"), unbound),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for cmd, stdin in cases.values():  # warm up: compile .pyc, fill the machine cache
            _time(cmd, env, project, stdin)
        for _ in range(args.rounds):
            for name, (cmd, stdin) in cases.items():
                times[name].append(_time(cmd, env, project, stdin))
        base = statistics.median(times["python -I -S -c pass (baseline)"])
        print(f"python: {py}  rounds: {args.rounds}")
        for name, xs in times.items():
            med = statistics.median(xs)
            print(f"{name:<40} median {Stats.of(xs).ms()}   ratio {med / base:5.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
