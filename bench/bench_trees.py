"""The hooks' CPU time against a bare interpreter, for one or more checkouts side by side.

    .venv/bin/python bench/bench_trees.py [--tree NAME=PATH[,VAR=VALUE...] ...] [--rounds N]

Each ``--tree`` is a checkout with its own ``.venv`` (``python -m pip install -e .``); without
one, this checkout alone. ``VAR=VALUE`` after the path sets a variable for that tree's
hooks (e.g. ``here-inproc=.,SMLLM_WORKER=0``: a revision with a resident worker, with it
off). The project has a ``.claude/settings.json`` and, in a tree that has the tripwire, is
armed as ``smllm install`` arms it. Every tree runs its hooks exactly as its own ``smllm install``
writes them (the ``smllm-hook`` executable, or the inline ``python -I -S -c`` form of
older versions), with its own scratch ``HOME`` (smllm's folders in it, no ``SMLLM_HOME``:
as a user's hooks run) and project, over one
realistic turn per round: ``UserPromptSubmit``, ``PreToolUse`` Bash (a compound command:
the shell analysis), ``PostToolUse`` Bash (with its output), ``PreToolUse`` Read,
``PostToolUse`` Read, ``Stop``. Before each round the transcript gains the assistant line
that chose the round's tools, as Claude Code writes it before ``PreToolUse`` (so no hook
waits for it, and each ingests one new model call).

The measure is the child's CPU time (user + system, from ``os.wait4``), not wall time: on
a shared machine the CPU a process needs varies far less than how long it waits for a
core (:func:`measure.cpu_seconds`). Where a tree's hooks hand their calls to a resident
worker (smllm.worker, where install built the native client; or the prototype of commit
167a9d1: ARCHITECTURE.md, "The resident worker"), the CPU the worker spent on each call
(its master's and the child's that served it) is added to the hook's: the worker counts
both in its stats file (``worker-*.json`` in the key folder), read before and after each
hook, once the child has tallied the call.
Each hook's sample is divided by the no-op with the same interpreter and flags (``python
-I -S -c pass``, as :func:`measure.baseline_argv` gives it for this checkout) measured in
the same round, so that a change of the machine's load hits both.

``--instructions`` counts the user-space instructions of each run instead
(:func:`measure.instructions`, valgrind's callgrind, about 50 times slower): the same on
a busy machine as on an idle one, so a few rounds give the ratio exactly, but without the
kernel's share of the CPU time (system calls, page faults) that the default measure
includes. The steps are interleaved: at each step every tree runs in
turn (in an order that rotates per round), so load hits all of them alike. Printed: the
median of those ratios and, in brackets, their 25th and 75th percentiles (the noise).
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "bench"))
from measure import cpu_seconds, instructions

from smllm import worker

SID = "5d1e2c3b-0000-4000-8000-0000000b3e18"
COMMAND = ("git status && ls -la src | grep -v '^d' > /dev/null; "
           "python3 check_costs.py --rate 0.0417 | tee costs.txt")
OUTPUT = "On branch main\nnothing to commit, working tree clean\n" + "41.7\n" * 40
#: the measured steps of a round, in order: (label, event, tool or None)
STEPS = (
    ("UserPromptSubmit", "UserPromptSubmit", None),
    ("PreToolUse Bash", "PreToolUse", "Bash"),
    ("PostToolUse Bash", "PostToolUse", "Bash"),
    ("PreToolUse Read", "PreToolUse", "Read"),
    ("PostToolUse Read", "PostToolUse", "Read"),
    ("Stop", "Stop", None),
)

#: run by each tree's own interpreter: the hook argv its ``smllm install`` writes
_ARGV = r"""
import json, shlex
from smllm.setup import install
python, flags = install.interpreter()
plan = getattr(install, "executable_plan", None)
if plan is not None:
    exe = plan(python, flags)
    if exe is not None:
        install.write_executable(*exe)
print(json.dumps([shlex.split(install.hook_command("EVENT", python, flags)), python, flags]))
"""

#: run by each tree's own interpreter: arm the tripwire on the project, as `smllm install`
#: does (a tree without one skips it), so its hooks pay for watching the protected files
_ARM = r"""
import sys
try:
    from smllm.tripwire import keeper
except ImportError:
    sys.exit(0)
keeper.arm(sys.argv[1])
"""


@dataclass
class Tree:
    name: str
    root: Path
    scratch: Path
    hook: list[str] = field(default_factory=list)
    baseline: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)

    @property
    def project(self) -> Path:
        return self.scratch / "project"

    @property
    def transcript(self) -> Path:
        return self.scratch / "transcript.jsonl"


def _prepare(name: str, root: Path, scratch: Path, extra: dict[str, str]) -> Tree:
    python = root / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{root}: no .venv/bin/python (python3 -m venv .venv && "
                         f".venv/bin/python -m pip install -e '.[dev]')")
    tree = Tree(name, root, scratch)
    for sub in ("home", "project/src", "project/.git"):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    (tree.project / "check_costs.py").write_text("print(round(1000 * 0.0417, 2))\n")
    (tree.project / "src" / "app.py").write_text("def main() -> None:\n    print('hi')\n")
    tree.transcript.write_text("")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SMLLM_", "PYTHON", "CLAUDE", "XDG_"))}
    # Claude Code runs every hook with the project folder in CLAUDE_PROJECT_DIR; smllm's
    # folders are the scratch HOME's (~/.local/share/smllm, ...), as for a user's hooks: no
    # SMLLM_HOME, which would make each hook look for it in the project's settings too
    env.update(HOME=str(scratch / "home"), CLAUDE_PROJECT_DIR=str(tree.project), **extra)
    tree.env = env
    out = subprocess.run([str(python), "-c", _ARGV], env=env, cwd=root, check=True,
                         capture_output=True, text=True).stdout
    tree.hook, interp, flags = json.loads(out.strip().splitlines()[-1])
    (tree.project / ".claude").mkdir(exist_ok=True)
    (tree.project / ".claude" / "settings.json").write_text("{}\n")
    subprocess.run([str(python), "-c", _ARM, str(tree.project)], env=env, cwd=root,
                   check=True)
    tree.baseline = [interp, *flags, "-c", "pass"]
    tree.samples = {"baseline": [], **{label: [] for label, _, _ in STEPS}}
    return tree


def _tool(tool: str, i: int, project: Path) -> tuple[str, dict[str, object]]:
    if tool == "Bash":
        return f"toolu_bash_{i:05d}", {"command": COMMAND, "description": "Check costs"}
    return f"toolu_read_{i:05d}", {"file_path": str(project / "src" / "app.py")}


def _assistant_line(i: int, project: Path) -> str:
    uses = [{"type": "tool_use", "id": tid, "name": tool, "input": body}
            for tool in ("Bash", "Read") for tid, body in [_tool(tool, i, project)]]
    return json.dumps({
        "type": "assistant", "uuid": f"u-{i}", "sessionId": SID,
        "message": {"id": f"msg_{i:05d}", "model": "claude-opus-4-1", "role": "assistant",
                    "stop_reason": "tool_use",
                    "content": [{"type": "text", "text": "Checking the costs."}, *uses],
                    "usage": {"input_tokens": 1200, "output_tokens": 90,
                              "cache_read_input_tokens": 30000}}}) + "\n"


def _payload(tree: Tree, event: str, tool: str | None, i: int) -> bytes:
    body: dict[str, object] = {"session_id": SID, "transcript_path": str(tree.transcript),
                               "cwd": str(tree.project), "hook_event_name": event,
                               "permission_mode": "default"}
    if event == "UserPromptSubmit":
        body["prompt"] = "run check_costs.py and tell me the rate"
    elif event == "Stop":
        body["stop_hook_active"] = False
    else:
        assert tool is not None
        body["tool_name"] = tool
        body["tool_use_id"], body["tool_input"] = _tool(tool, i, tree.project)
        if event == "PostToolUse":
            body["tool_response"] = (
                {"stdout": OUTPUT, "stderr": "", "interrupted": False, "isImage": False}
                if tool == "Bash" else
                {"type": "text", "file": {"filePath": body["tool_input"], "numLines": 2}})
    return json.dumps(body).encode()


def run_round(trees: list[Tree], i: int, keep: bool, counted: bool = False) -> None:
    for tree in trees:
        with tree.transcript.open("a") as fh:
            fh.write(_assistant_line(i, tree.project))
    order = trees[i % len(trees):] + trees[:i % len(trees)]
    measure = instructions if counted else cpu_seconds
    for tree in order:
        t = measure(tree.baseline, b"", tree.env, str(tree.project))
        if keep:
            tree.samples["baseline"].append(t)
    for label, event, tool in STEPS:
        for tree in order:
            argv = [event if w == "EVENT" else w for w in tree.hook]  # as installed
            before = _worker_stats(tree)
            t = measure(argv, _payload(tree, event, tool, i), tree.env,
                        str(tree.project))
            if not counted:
                t += _worker_cpu(tree, before)
            if keep:
                tree.samples[label].append(t)


def _key_folder(tree: Tree) -> Path:
    """smllm's key folder under the tree's scratch HOME (where a worker keeps its stats)."""
    return tree.scratch / "home" / ".local" / "state" / "smllm" / "key"


def _worker_stats(tree: Tree) -> tuple[int, float] | None:
    """(calls served, CPU seconds) of the tree's resident worker; None when none runs."""
    for data in worker.workers(str(_key_folder(tree))):
        return int(data["calls"]), float(data["cpu"]) + float(data["children_cpu"])
    return None


def _worker_cpu(tree: Tree, before: tuple[int, float] | None) -> float:
    """The CPU the worker spent on the hook just run: waits (up to a second) for the child
    that served it to end and be counted; 0 when no worker runs or the hook ran
    in-process."""
    if before is None:
        return 0.0
    deadline = time.monotonic() + 1.0
    after = before
    while time.monotonic() < deadline:
        after = _worker_stats(tree) or before
        if after[0] > before[0]:
            return after[1] - before[1]
        time.sleep(0.002)
    return 0.0


def _quantile(samples: Sequence[float], q: float) -> float:
    return statistics.quantiles(samples, n=4, method="inclusive")[q] if len(samples) > 1 \
        else samples[0]


def report(trees: list[Tree], rounds: int, counted: bool = False) -> None:
    """Each sample is divided by its own round's baseline (the load of that moment hits
    both), then the median and quartiles of those ratios are printed."""
    what = "instructions (callgrind)" if counted else "CPU time"
    print(f"\n{what} per hook / {what} of `python -I -S -c pass` in the same round, "
          f"{rounds} rounds interleaved: median ratio [25th–75th percentile]")
    print(f"  {'case':<18}" + "".join(f"{t.name:>22}" for t in trees))
    cells = []
    for t in trees:
        b = t.samples["baseline"]
        cells.append(f"{statistics.median(b) / 1e6:.2f} M [{_quantile(b, 0) / 1e6:.1f}–"
                     f"{_quantile(b, 2) / 1e6:.1f}]" if counted else
                     f"{statistics.median(b) * 1e3:.2f} ms [{_quantile(b, 0) * 1e3:.1f}–"
                     f"{_quantile(b, 2) * 1e3:.1f}]")
    print(f"  {'baseline':<18}" + "".join(f"{c:>22}" for c in cells))
    for label, _, _ in STEPS:
        cells = []
        for t in trees:
            ratios = [h / b for h, b in zip(t.samples[label], t.samples["baseline"], strict=True)]
            cells.append(f"{statistics.median(ratios):.2f}× [{_quantile(ratios, 0):.2f}–"
                         f"{_quantile(ratios, 2):.2f}]")
        print(f"  {label:<18}" + "".join(f"{c:>22}" for c in cells))
    if len(trees) < 2:
        return
    first = trees[0]
    print(f"\neach tree's ratio minus {first.name}'s in the same round and step: median "
          "[25th–75th percentile]")
    print(f"  {'case':<18}" + "".join(f"{t.name:>22}" for t in trees[1:]))
    for label, _, _ in STEPS:
        cells = []
        for t in trees[1:]:
            deltas = [h / b - h0 / b0 for h, b, h0, b0 in zip(
                t.samples[label], t.samples["baseline"], first.samples[label],
                first.samples["baseline"], strict=True)]
            cells.append(f"{statistics.median(deltas):+.2f} [{_quantile(deltas, 0):+.2f}–"
                         f"{_quantile(deltas, 2):+.2f}]")
        print(f"  {label:<18}" + "".join(f"{c:>22}" for c in cells))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                    help="a checkout with its own .venv (repeatable; default: this one)")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--instructions", action="store_true",
                    help="count user-space instructions (valgrind's callgrind) instead of "
                         "CPU time: the same whatever the machine's load, without the "
                         "kernel's share (system calls, page faults); in-process hooks only")
    args = ap.parse_args()
    specs = [t.split("=", 1) if "=" in t.split(",")[0] else [Path(t).name, t]
             for t in args.tree] or [["here", str(HERE)]]
    scratch = Path(tempfile.mkdtemp(prefix="smllm-bench-trees-"))
    trees: list[Tree] = []
    try:
        for n, (name, spec) in enumerate(specs):
            path, *sets = spec.split(",")
            extra = dict(item.split("=", 1) for item in sets)
            if args.instructions:  # callgrind counts the hook process alone: no worker
                extra.setdefault("SMLLM_WORKER", "0")
            trees.append(_prepare(name, Path(path).resolve(), scratch / f"t{n}", extra))
        for t in trees:
            print(f"{t.name}: {t.root} (git {_head(t.root)}): {' '.join(t.hook)}")
        for i in range(args.warmup):  # bytecode, the compiled policy cache, the journal
            run_round(trees, i, keep=False)
        for i in range(args.warmup, args.warmup + args.rounds):
            run_round(trees, i, keep=True, counted=args.instructions)
        report(trees, args.rounds, counted=args.instructions)
    finally:
        for tree in trees:
            _stop_worker(tree)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def _stop_worker(tree: Tree) -> None:
    """End the tree's resident worker (the pid its stats file names), if one runs."""
    worker.stop(str(_key_folder(tree)))


def _head(root: Path) -> str:
    out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-uno"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return out.stdout.strip() + ("+dirty" if dirty else "")


if __name__ == "__main__":
    sys.exit(main())
