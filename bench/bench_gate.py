"""Benchmark the approval gate: hook latency against bare Python, analyser throughput.

Prints ratios measured in this run (no absolute targets are asserted):

* PreToolUse on Bash with the full analysis vs ``python -c pass`` (target <= 2x)
* PreToolUse on a non-Bash tool (Read) vs ``python -c pass`` (target <= 1.5x)
* the analyser over the bypass corpus: commands per second and the worst single case

Run: ``.venv/bin/python bench/bench_gate.py [--runs N]``. It uses a scratch SMLLM_HOME
and project, talks to nothing, and starts only its own short-lived subprocesses.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "fixtures" / "corpus"))


def _median_ms(argv: list[str], stdin: list[bytes], env: dict[str, str], cwd: str) -> float:
    times = []
    for data in stdin:
        t0 = time.perf_counter()
        subprocess.run(argv, input=data, env=env, cwd=cwd, capture_output=True, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _payload(sid: str, cwd: str, i: int, tool: str, tool_input: dict[str, object]) -> bytes:
    return json.dumps({"session_id": sid, "transcript_path": f"{cwd}/none.jsonl", "cwd": cwd,
                       "hook_event_name": "PreToolUse", "permission_mode": "default",
                       "tool_name": tool, "tool_input": tool_input,
                       "tool_use_id": f"toolu_{tool}_{i}"}).encode() + b"\n"


def hooks(runs: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        proj = Path(scratch) / "proj"
        (proj / ".git").mkdir(parents=True)
        env = {**os.environ, "SMLLM_HOME": str(home)}
        env.pop("SMLLM_FAULT", None)
        # measure the installed steady state: bytecode cached (a developer shell may set
        # PYTHONDONTWRITEBYTECODE, which would recompile every edited module on each run)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        py = sys.executable
        bare = _median_ms([py, "-c", "pass"], [b""] * runs, env, str(proj))
        hook = [py, "-m", "smllm", "hook", "PreToolUse"]
        command = "git status && ls -la src | grep -v '^d' > /dev/null; python3 check_costs.py"
        warm = [_payload("bench", str(proj), -1, "Bash", {"command": command})]
        _median_ms(hook, warm * 2, env, str(proj))  # policy cache and bytecode, once
        _median_ms(hook, [_payload("bench", str(proj), -2, "Read", {"file_path": "x"})], env,
                   str(proj))
        bash = _median_ms(hook, [_payload("bench", str(proj), i, "Bash", {"command": command})
                                 for i in range(runs)], env, str(proj))
        read = _median_ms(hook, [_payload("bench", str(proj), i, "Read",
                                          {"file_path": str(proj / "README.md")})
                                 for i in range(runs)], env, str(proj))
        post = _median_ms([py, "-m", "smllm", "hook", "PostToolUse"],
                          [_payload("bench", str(proj), i, "Read", {"file_path": "x"})
                           .replace(b'"PreToolUse"', b'"PostToolUse"')
                           .replace(b'"tool_use_id"', b'"tool_response": {}, "tool_use_id"')
                           for i in range(runs)], env, str(proj))
    print(f"python -c pass             median {bare:7.1f} ms  (baseline, {runs} runs)")
    print(f"PostToolUse (no gate)      median {post:7.1f} ms  ratio {post / bare:4.2f}x"
          "  (the hook machinery and journal fsync alone, for reference)")
    print(f"PreToolUse Bash (analysis) median {bash:7.1f} ms  ratio {bash / bare:4.2f}x"
          "  (target <= 2.0x)")
    print(f"PreToolUse Read            median {read:7.1f} ms  ratio {read / bare:4.2f}x"
          "  (target <= 1.5x)")


def analyser(rounds: int) -> None:
    from cases import CASES  # noqa: PLC0415

    from smllm.shell import analyse  # noqa: PLC0415

    commands = [c[2] for c in CASES]
    worst = (0.0, "")
    t0 = time.perf_counter()
    for _ in range(rounds):
        for cmd in commands:
            s = time.perf_counter()
            analyse(cmd, cwd="/work/proj", home="/home/me")
            dt = time.perf_counter() - s
            if dt > worst[0]:
                worst = (dt, cmd)
    total = time.perf_counter() - t0
    n = len(commands) * rounds
    print(f"analyser over the corpus   {n / total:9.0f} commands/s  ({len(commands)} commands "
          f"x {rounds} rounds, mean {total / n * 1e6:.0f} us)")
    print(f"analyser worst single case {worst[0] * 1000:7.2f} ms  {worst[1]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="hook runs per measurement")
    ap.add_argument("--rounds", type=int, default=20, help="passes over the corpus")
    a = ap.parse_args()
    hooks(a.runs)
    analyser(a.rounds)


if __name__ == "__main__":
    main()
