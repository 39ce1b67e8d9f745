"""Benchmark: Stop hook and `smllm fire` wall time against `python -I -S -c pass` (the hooks' flags).

Everything is measured in this run, interleaved round by round so that machine load
affects all commands alike; the script prints medians and ratios to the baseline.
The target (issue 5) is a ratio of at most 1.5 for both, with machines compiled and
cached (the first call compiles; the measured calls hit the cache). The ``import re``
line shows the floor of any pip console script (its first line imports ``re``).

Issue 19: a fire whose guard runs a command (``true``) in smllm's bubblewrap sandbox, the
same fire with the sandbox opted out (``[guards] sandbox = false``), and ``bwrap`` alone
running ``true`` show what the sandbox adds to a guarded fire.

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

#: a machine whose one event runs a command guard and stays in its state
GUARDED = """id: g
initial: A
meta:
  events:
    check: { description: Run the check. }
    done: { description: Finish. }
states:
  A:
    on:
      check: { target: A, guard: { type: command, params: { run: "true" } } }
      done: B
  B: { type: final }
"""


def _guarded_session(tmp: Path, name: str, env: dict[str, str], config: str) -> tuple[
        Path, dict[str, str], str]:
    """A project with the guarded machine, its own smllm home (``config`` as the user's
    config.toml) and a session entered in it: (project, env, session key)."""
    project = tmp / name
    (project / ".smllm").mkdir(parents=True)
    (project / ".smllm" / "config.toml").write_text('[machines]\nfiles = ["g.smllm.yaml"]\n')
    (project / ".smllm" / "g.smllm.yaml").write_text(GUARDED)
    home = tmp / f"{name}-home"
    home.mkdir()
    (home / "config.toml").write_text(config)
    env = {**env, "SMLLM_HOME": str(home)}
    out = subprocess.run([sys.executable, "-m", "smllm", "fire", "enter", "--param",
                          "stateMachine=g", "--json"], env=env, cwd=project,
                         capture_output=True, check=False)
    if out.returncode:
        raise SystemExit(f"fire enter failed: {out.stdout.decode()}{out.stderr.decode()}")
    return project, env, json.loads(out.stdout)["session"]


def _time(cmd: list[str], env: dict[str, str], cwd: Path, stdin: bytes | None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
    return took


def _in_process(guarded: dict[str, tuple[Path, dict[str, str]]], rounds: int) -> None:
    """The guard alone (``guards.evaluate`` of ``true``), in this process, each way in
    turn: what the sandbox adds to a check, without the interpreter's start-up."""
    from smllm.machine import guards

    guard = {"type": "command", "params": {"run": "true"}}
    times: dict[str, list[float]] = {name: [] for name in guarded}
    for i in range(rounds + 1):
        for name, (folder, genv) in guarded.items():
            os.environ["SMLLM_HOME"] = genv["SMLLM_HOME"]
            start = time.perf_counter()
            result = guards.evaluate(guard, {}, genv, str(folder))
            if not result.ok:
                raise SystemExit(f"{name}: {result.reason}")
            if i:  # the first round warms the imports and the policy cache
                times[name].append(time.perf_counter() - start)
    meds = {name: statistics.median(xs) for name, xs in times.items()}
    for name, xs in times.items():
        print(f"guards.evaluate, {name:<27} median {Stats.of(xs).ms()}")
    sandboxed, bare = meds["guard sandboxed (bwrap)"], meds["guard opted out (bare)"]
    print(f"the sandbox adds {1000 * (sandboxed - bare):.1f} ms to a check (median)")


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
        where = {name: (env, project) for name in cases}
        guarded: dict[str, tuple[Path, dict[str, str]]] = {}
        for name, config in (("guard sandboxed (bwrap)", ""),
                             ("guard opted out (bare)", "[guards]\nsandbox = false\n")):
            folder, genv, gkey = _guarded_session(tmp, name.split()[1], env, config)
            label = f"smllm fire, {name}"
            cases[label] = ([script, "fire", "--session", gkey, "check"], None)
            where[label] = (genv, folder)
            guarded[name] = (folder, genv)
        bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
        cases["bwrap alone, true (no mounts of a project)"] = (
            [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"], None)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for name, (cmd, stdin) in cases.items():  # warm up: .pyc, the machine cache
            _time(cmd, *where.get(name, (env, project)), stdin)
        for _ in range(args.rounds):
            for name, (cmd, stdin) in cases.items():
                times[name].append(_time(cmd, *where.get(name, (env, project)), stdin))
        base = statistics.median(times["python -I -S -c pass (baseline)"])
        print(f"python: {py}  rounds: {args.rounds}  load: {os.getloadavg()[0]:.2f}")
        for name, xs in times.items():
            med = statistics.median(xs)
            print(f"{name:<40} median {Stats.of(xs).ms()}   ratio {med / base:5.2f}")
        _in_process(guarded, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
