"""Launcher overhead per hook call in plugin mode, as a ratio to calling the interpreter directly.

    .venv/bin/python bench/bench_launcher.py [N]

Three ways to run the same hook (UserPromptSubmit, one new session per call), interleaved
so that machine load hits them alike, N calls each (default 40):

* direct: ``PY -I hooks/smllm_entry.py hook UserPromptSubmit`` (the baseline)
* launcher, private environment ready: ``hooks/launcher hook UserPromptSubmit`` with
  ``$CLAUDE_PLUGIN_DATA/venv`` (a venv made from PY) stamped ready; its baseline is that
  venv's python run directly
* launcher, before the bootstrap: ``SMLLM_PYTHON=PY`` and a bootstrap already running (its
  pid file names this process), the state of the first minute after installing the plugin

Prints the median and mean wall time of each and their ratio to the baseline (target:
<= 1.1x). Everything stays in a temporary folder; no network.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from smllm.setup import bootstrap

REPO = Path(__file__).resolve().parent.parent

PY = sys.executable


def payload(cwd: Path) -> bytes:
    sid = str(uuid.uuid4())
    return json.dumps({"session_id": sid, "transcript_path": str(cwd / f"{sid}.jsonl"),
                       "cwd": str(cwd), "hook_event_name": "UserPromptSubmit",
                       "permission_mode": "default", "prompt": "bench"}).encode()


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, input=payload(cwd), env=env, cwd=cwd, capture_output=True,
                          check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or proc.stderr.strip():
        raise SystemExit(f"{argv} failed: {proc.returncode} {proc.stderr.decode()[-500:]}")
    return elapsed


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 40
    with tempfile.TemporaryDirectory(prefix="smllm-bench-launcher-") as tmp:
        root = Path(tmp)
        base = {"PATH": "/usr/bin:/bin", "HOME": str(root), "SMLLM_HOME": str(root / "home")}
        plugin = {"CLAUDE_PLUGIN_ROOT": str(REPO)}  # Claude Code sets it for plugin hooks
        ready = root / "ready"
        # a real (empty) venv, as the bootstrap builds: the hook's hot path needs no deps
        subprocess.run([PY, "-m", "venv", "--without-pip", str(ready / "venv")], check=True)
        key = bootstrap.deps_key(bootstrap.dependencies(str(REPO)))
        (ready / "venv" / f".smllm-ready-{key}").write_text("")
        pending = root / "pending"
        pending.mkdir()
        (pending / "bootstrap.pid").write_text(str(os.getpid()))
        entry, launcher = str(REPO / "hooks" / "smllm_entry.py"), str(REPO / "hooks" / "launcher")
        fake = str(ready / "venv" / "bin" / "python")
        hook = ["hook", "UserPromptSubmit"]
        # pairs of (baseline, launcher) that end up running the very same interpreter path
        pairs = {
            "private env ready": (
                ([fake, "-I", entry, *hook], base),
                ([launcher, *hook], {**base, **plugin, "CLAUDE_PLUGIN_DATA": str(ready)})),
            "before bootstrap": (
                ([PY, "-I", entry, *hook], base),
                ([launcher, *hook], {**base, **plugin, "CLAUDE_PLUGIN_DATA": str(pending),
                                     "SMLLM_PYTHON": PY})),
        }
        ways = {f"{pair}: {side}": runs[i] for pair, runs in pairs.items()
                for i, side in enumerate(("direct", "launcher"))}
        times: dict[str, list[float]] = {name: [] for name in ways}
        for cmd, env in ways.values():  # warm-up
            timed(cmd, env, root)
        for _ in range(n):
            for name, (cmd, env) in ways.items():
                times[name].append(timed(cmd, env, root))
    print(f"launcher overhead per hook call: UserPromptSubmit, {n} calls each, interleaved")
    print(f"  interpreter: {PY}")
    worst = 0.0
    for pair in pairs:
        baseline = statistics.median(times[f"{pair}: direct"])
        for side in ("direct", "launcher"):
            values = times[f"{pair}: {side}"]
            med, mean = statistics.median(values), statistics.fmean(values)
            worst = max(worst, med / baseline)
            print(f"  {pair + ': ' + side:<30} median {med * 1000:7.1f} ms  "
                  f"mean {mean * 1000:7.1f} ms  ratio {med / baseline:5.3f}x")
    print(f"worst ratio {worst:.3f}x (target <= 1.1x): {'ok' if worst <= 1.1 else 'OVER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
