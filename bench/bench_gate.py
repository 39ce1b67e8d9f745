"""Benchmark the approval gate: hook latency against bare Python, analyser throughput.

Prints ratios measured in this run (no absolute targets are asserted):

* PreToolUse on Bash with the full analysis vs ``python -I -S -c pass``, the no-op with
  the hooks' own interpreter flags (target <= 2x)
* PreToolUse on a non-Bash tool (Read) vs the same baseline (target <= 1.5x)
* the analyser over the whole shell corpus (the bypass corpus, the families corpus and
  the everyday commands): commands per second, the worst single case, and the corpus
  counts (dangerous commands allowed, everyday commands escalated)

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
sys.path.insert(0, str(REPO / "bench"))
from measure import Stats, baseline_argv, installed_hook_argv


def _run_ms(argv: list[str], data: bytes, env: dict[str, str], cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, input=data, env=env, cwd=cwd, capture_output=True, check=True)
    return (time.perf_counter() - t0) * 1000


def _payload(
    sid: str, cwd: str, i: int, tool: str, tool_input: dict[str, object], event: str = "PreToolUse"
) -> bytes:
    body: dict[str, object] = {
        "session_id": sid,
        "transcript_path": f"{cwd}/none.jsonl",
        "cwd": cwd,
        "hook_event_name": event,
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{event}_{tool}_{i}",
    }
    if event == "PostToolUse":
        body["tool_response"] = {}
    return json.dumps(body).encode() + b"\n"


def hooks(runs: int) -> None:
    """Interleave the four measurements so that machine load hits them alike."""
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        proj = Path(scratch) / "proj"
        (proj / ".git").mkdir(parents=True)
        (proj / "check_costs.py").write_text("print(round(1000 * 0.0417, 2))\n")
        env = {**os.environ, "SMLLM_HOME": str(home)}
        env.pop("SMLLM_FAULT", None)
        # measure the installed steady state: bytecode cached (a developer shell may set
        # PYTHONDONTWRITEBYTECODE, which would recompile every edited module on each run)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        py = sys.executable
        hook = installed_hook_argv  # exactly as `smllm install` writes the hooks
        command = "git status && ls -la src | grep -v '^d' > /dev/null; python3 check_costs.py"
        cases = {
            "bare": (baseline_argv(), lambda i: b""),
            "site": ([py, "-c", "pass"], lambda i: b""),
            "post": (
                hook("PostToolUse"),
                lambda i: _payload(
                    "bench", str(proj), i, "Read", {"file_path": "x"}, "PostToolUse"
                ),
            ),
            "bash": (
                hook("PreToolUse"),
                lambda i: _payload("bench", str(proj), i, "Bash", {"command": command}),
            ),
            "read": (
                hook("PreToolUse"),
                lambda i: _payload(
                    "bench", str(proj), i, "Read", {"file_path": str(proj / "README.md")}
                ),
            ),
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        for i in range(-2, runs):  # two warm-up rounds: policy cache and bytecode
            for name, (argv, data) in cases.items():
                ms = _run_ms(argv, data(i), env, str(proj))
                if i >= 0:
                    times[name].append(ms)
    med = {k: statistics.median(v) for k, v in times.items()}
    rng = {k: Stats.of(v) for k, v in times.items()}
    bare = med["bare"]
    print(
        f"{' '.join(['python', *baseline_argv()[1:]]):<26} median {bare:7.1f} ms "
        f"[{rng['bare'].low:.1f}–{rng['bare'].high:.1f}]  (baseline, {runs} runs, interleaved)"
    )
    print(
        f"python -c pass (site)      median {med['site']:7.1f} ms  ratio "
        f"{med['site'] / bare:4.2f}x  (the old baseline, for reference)"
    )
    print(
        f"PostToolUse (no gate)      median {med['post']:7.1f} ms "
        f"[{rng['post'].low:.1f}–{rng['post'].high:.1f}]  ratio "
        f"{med['post'] / bare:4.2f}x  (hook machinery and journal fsync alone, reference)"
    )
    print(
        f"PreToolUse Bash (analysis) median {med['bash']:7.1f} ms "
        f"[{rng['bash'].low:.1f}–{rng['bash'].high:.1f}]  ratio "
        f"{med['bash'] / bare:4.2f}x  (target <= 2.0x)"
    )
    print(
        f"PreToolUse Read            median {med['read']:7.1f} ms "
        f"[{rng['read'].low:.1f}–{rng['read'].high:.1f}]  ratio "
        f"{med['read'] / bare:4.2f}x  (target <= 1.5x)"
    )


_MARGINAL = r"""
import json, sys, time
from smllm import hooks, journal
from smllm.journal import sidecar, transcript
from smllm.hooks import _context, _features, pre_tool_use
payload = json.loads(sys.argv[1])
ctx = _context.HookContext.create("PreToolUse", payload)
call = ctx.call
t0 = time.perf_counter()
from smllm import gate
from smllm.gate import policy
world = gate.World(policy.load(call.project))
verdict = gate.decide(call, world)  # the whole decision: self-protection and the policy
print((time.perf_counter() - t0) * 1000)
"""


def gate_marginal(runs: int) -> None:
    """The gate's own share: importing it and deciding, in a fresh interpreter each time."""
    with tempfile.TemporaryDirectory() as scratch:
        proj = Path(scratch) / "proj"
        (proj / ".git").mkdir(parents=True)
        (proj / "check_costs.py").write_text("print(round(1000 * 0.0417, 2))\n")
        env = {**os.environ, "SMLLM_HOME": str(Path(scratch) / "home")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        command = "git status && ls -la src | grep -v '^d' > /dev/null; python3 check_costs.py"
        out: dict[str, list[float]] = {"Bash": [], "Read": []}
        for i in range(-1, runs):
            for tool, tool_input in (("Bash", {"command": command}),
                                     ("Read", {"file_path": "README.md"})):
                payload = _payload("m", str(proj), i, tool, tool_input).decode()
                proc = subprocess.run([sys.executable, "-c", _MARGINAL, payload], env=env,
                                      cwd=str(proj), capture_output=True, text=True, check=True)
                if i >= 0:
                    out[tool].append(float(proc.stdout.strip()))
    for tool, values in out.items():
        print(f"gate import+decide {tool:<5}   median {statistics.median(values):7.1f} ms  "
              "(fresh interpreter; the hook machinery and the seams before the gate already ran)")


def _workspace(scratch: str) -> str:
    import families

    root = os.path.join(scratch, "proj")
    for rel, text in families.WORKSPACE.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    for name, target in families.LINKS.items():
        os.symlink(target, os.path.join(root, name))
    for rel in ("evil.sh", "hook.py", "manage.py", "scripts/test.sh", "scripts/deploy.sh",
                "bin/tool", "noshebang.sh"):
        os.chmod(os.path.join(root, rel), 0o755)
    return root


def analyser(rounds: int) -> None:
    import families
    from cases import CASES

    from smllm.gate.shell import analyse

    with tempfile.TemporaryDirectory() as scratch:
        root = _workspace(scratch)
        commands = ([c[2] for c in CASES] + [c[2] for c in families.DANGEROUS]
                    + [c[1] for c in families.EVERYDAY])
        worst = (0.0, "")
        t0 = time.perf_counter()
        for _ in range(rounds):
            for cmd in commands:
                s = time.perf_counter()
                analyse(cmd, cwd=root, home=families.HOME)
                dt = time.perf_counter() - s
                if dt > worst[0]:
                    worst = (dt, cmd)
        total = time.perf_counter() - t0
        allowed = sum(analyse(c, cwd=root, home=families.HOME).decision == "allow"
                      for _, _, c in families.DANGEROUS)
        escalated = sum(analyse(c, cwd=root, home=families.HOME).decision != "allow"
                        for _, c in families.EVERYDAY)
    n = len(commands) * rounds
    kinds = len({f for f, _, _ in families.DANGEROUS})
    print(
        f"analyser over the corpus   {n / total:9.0f} commands/s  ({len(commands)} commands "
        f"x {rounds} rounds, mean {total / n * 1e6:.0f} us)"
    )
    print(f"analyser worst single case {worst[0] * 1000:7.2f} ms  {worst[1][:70]!r}")
    print(f"families corpus            {len(families.DANGEROUS)} dangerous in {kinds} families: "
          f"{allowed} allowed; {len(families.EVERYDAY)} everyday: {escalated} escalated "
          f"({100 * escalated / len(families.EVERYDAY):.1f}%, target <= 2%)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30, help="hook runs per measurement")
    ap.add_argument("--rounds", type=int, default=20, help="passes over the corpus")
    a = ap.parse_args()
    hooks(a.runs)
    gate_marginal(max(5, a.runs // 2))
    analyser(a.rounds)


if __name__ == "__main__":
    main()
