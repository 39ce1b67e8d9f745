"""bench/bench_session.py --quick: the session benchmark runs in the real client and prints
its report (a smoke test: no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def test_session_benchmark_quick_completes_and_reports(claude_bin: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "bench_session.py"), "--quick",
                           "--keep", str(tmp_path / "work")], capture_output=True, text=True,
                          env=env, timeout=900, check=False, stdin=subprocess.DEVNULL)
    assert 0 == proc.returncode, proc.stderr[-3000:]
    out = proc.stdout
    for line in ("N = 1 tool call(s)", "nothing installed", "smllm install --project P",
                 "hooks only", "sandbox only", "MCP server only", "no-op hooks: /bin/true",
                 "no-op hooks: python -I -S -c pass", "overhead over bare, per session and per call",
                 "targets (issue 25", "x bare",
                 # each hook process timed in the client: the pair and PreToolUse's wait
                 "each hook process, timed in the client", "the pair: smllm",
                 "no-op Python pair", "PreToolUse's wall time beyond its CPU time"):
        assert line in out, out
    assert "round 1/1 done" in proc.stderr
