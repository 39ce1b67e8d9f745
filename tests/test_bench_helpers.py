"""The benchmarks' measuring helpers (bench/measure.py): memory per child, the baseline."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import measure  # noqa: E402 - bench/ is not a package

MIB = 1024

#: a child that holds (and touches) N MiB, then exits
HOLD = "import sys; b = bytearray(int(sys.argv[1]) * 1048576); b[::4096] = b'x' * len(b[::4096])"


def _wait4_peak(argv: list[str]) -> int:
    """The old way: ``os.wait4`` of a child this process forked."""
    proc = subprocess.Popen(argv)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_maxrss


@pytest.fixture(params=["gnu-time", "fresh-parent"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "gnu-time" and not os.path.exists(measure.GNU_TIME):
        pytest.skip("GNU time is not installed (tests/system-packages.txt: time)")
    if request.param == "fresh-parent":
        monkeypatch.setattr(measure, "GNU_TIME", "/nonexistent/time")
    return str(request.param)


def test_peak_follows_the_childs_memory(way: str) -> None:
    small = measure.peak_rss_kib([sys.executable, "-c", HOLD, "10"])
    large = measure.peak_rss_kib([sys.executable, "-c", HOLD, "110"])
    assert large - small >= 90 * MIB, (way, small, large)
    assert large < 160 * MIB, (way, large)


def test_peak_leaves_out_the_parents_memory(way: str) -> None:
    ballast = bytearray(300 * 1048576)
    ballast[::4096] = b"x" * len(ballast[::4096])  # resident, not just reserved
    try:
        inherited = _wait4_peak([sys.executable, "-c", "pass"])
        measured = measure.peak_rss_kib([sys.executable, "-c", "pass"])
    finally:
        del ballast
    # the situation is real: os.wait4 counts this process's 300 MiB for a no-op child
    assert inherited >= 250 * MIB, inherited
    assert measured < 60 * MIB, (way, measured)


def test_peak_of_a_failing_child_is_an_error() -> None:
    with pytest.raises(SystemExit, match="exit 3"):
        measure.peak_rss_kib([sys.executable, "-c", "raise SystemExit(3)"])


#: a child that spends CPU until its own clock reads 50 ms
SPIN = "import time\nwhile time.process_time() < 0.05:\n    pass\n"


def test_cpu_seconds_are_the_childs_own() -> None:
    """The child's CPU time: at least the 50 ms its own clock counted, and not this
    process's (which has spent at least half a second before starting it)."""
    while time.process_time() < 0.5:
        pass
    counted = measure.cpu_seconds([sys.executable, "-c", SPIN])
    assert 0.05 <= counted < time.process_time(), counted


def test_cpu_seconds_of_a_failing_child_is_an_error() -> None:
    with pytest.raises(SystemExit, match="exit 3"):
        measure.cpu_seconds([sys.executable, "-c", "raise SystemExit(3)"])


def test_baseline_runs_with_the_installed_hooks_flags() -> None:
    from smllm.setup import install

    python, flags = install.interpreter()
    base = measure.baseline_argv()
    assert base == [python, *flags, "-c", "pass"]
    script = install.hook_script(python, flags)
    if script is None:  # the inline form: the command line names the interpreter
        hook = shlex.split(install.hook_command("Stop", python, flags))
        assert hook[: 1 + len(flags)] == base[: 1 + len(flags)]
    else:  # the hook executable: its #! line does
        assert script.splitlines()[0] == f"#!{python} -" + "".join(f[1:] for f in flags)
    assert "-S" in base  # this venv installs with -I -S: a site-loading baseline flatters


def test_fsync_floor_is_a_rate_and_leaves_nothing(tmp_path: Path) -> None:
    rate = measure.fsync_floor(str(tmp_path), count=20, line_bytes=400)
    assert rate > 0
    assert list(tmp_path.iterdir()) == []


def test_stats_median_and_range() -> None:
    s = measure.Stats.of([0.003, 0.001, 0.002, 0.010])
    assert (s.median, s.low, s.high, s.n) == (0.0025, 0.001, 0.010, 4)
    assert s.ms() == "    2.5 ms [1.0–10.0]"


@pytest.mark.skipif(shutil.which(measure.VALGRIND) is None,
                    reason="valgrind is not installed (tests/system-packages.txt)")
def test_instructions_count_the_childs_work_the_same_each_time() -> None:
    """callgrind's count: a loop of a million steps shows as millions more instructions than
    the no-op, and the no-op counts (nearly) the same twice, whatever the machine does."""
    noop = [sys.executable, "-I", "-S", "-c", "pass"]
    busy = [sys.executable, "-I", "-S", "-c", "for _ in range(1_000_000): pass"]
    first, again = measure.instructions(noop), measure.instructions(noop)
    assert abs(first - again) < first * 0.01, (first, again)
    assert measure.instructions(busy) - first > 5_000_000


@pytest.mark.skipif(shutil.which(measure.VALGRIND) is None,
                    reason="valgrind is not installed (tests/system-packages.txt)")
def test_instructions_of_a_failing_child_is_an_error() -> None:
    with pytest.raises(SystemExit, match="exit 3"):
        measure.instructions([sys.executable, "-c", "raise SystemExit(3)"])


# ------------------------------------------------------------------ bench/hook_timer.py

TIMER = REPO / "bench" / "hook_timer.py"


def _timed(tmp_path: Path, code: str, stdin: bytes = b""
           ) -> tuple[subprocess.CompletedProcess[bytes], list[dict[str, object]]]:
    log = tmp_path / "times.jsonl"
    proc = subprocess.run([sys.executable, "-I", "-S", str(TIMER), str(log), "PreToolUse",
                           sys.executable, "-c", code], input=stdin, capture_output=True,
                          check=False, timeout=60)
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, lines


def test_hook_timer_is_transparent_and_records_the_hooks_own_times(tmp_path: Path) -> None:
    """The hook reads the client's stdin and answers on stdout and stderr through the timer,
    whose exit status is the hook's; the line holds the hook's own CPU (a child that spins
    50 ms of CPU) and wall time."""
    code = ("import sys, time\ndata = sys.stdin.read()\n"
            "while time.process_time() < 0.05:\n    pass\n"
            "sys.stdout.write(data.upper()); sys.stderr.write('err'); sys.exit(3)")
    proc, lines = _timed(tmp_path, code, b'{"hook": "x"}')
    assert (3, b'{"HOOK": "X"}', b"err") == (proc.returncode, proc.stdout, proc.stderr)
    [line] = lines
    cpu = float(line["user"]) + float(line["system"])  # type: ignore[arg-type]
    assert ("PreToolUse", 3 << 8) == (line["event"], line["status"])
    assert 0.05 <= cpu < 0.5, line
    assert float(line["wall"]) >= cpu * 0.9, line  # type: ignore[arg-type]


def test_hook_timer_passes_on_a_signal_as_the_shell_would(tmp_path: Path) -> None:
    proc, lines = _timed(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert 128 + 9 == proc.returncode
    assert [9] == [line["status"] for line in lines]


def test_session_benchmark_times_every_hook_command_it_wraps(tmp_path: Path) -> None:
    """A timed set-up runs each hook command of the settings it times under the timer, with
    the event it was installed for, and keeps every other key."""
    import bench_session  # bench/ is on the path (above); it puts tests/e2e there itself

    settings = {"permissions": {"allow": ["Bash"]}, "hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "/venv/bin/smllm-hook PreToolUse --home 'a b'",
             "timeout": 300, "onFailure": "block"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "/bin/true"}]}]}}
    log = tmp_path / "times.jsonl"
    timed = bench_session._timed_hooks(settings, log)
    assert settings["permissions"] == timed["permissions"]
    pre = timed["hooks"]["PreToolUse"][0]
    assert ("*", 300, "block") == (pre["matcher"], pre["hooks"][0]["timeout"],
                                   pre["hooks"][0]["onFailure"])
    words = shlex.split(pre["hooks"][0]["command"])
    assert [str(TIMER), str(log), "PreToolUse", "/venv/bin/smllm-hook", "PreToolUse",
            "--home", "a b"] == words[-7:]
    assert ["-I", "-S"] == words[1:3]
    assert shlex.split(timed["hooks"]["Stop"][0]["hooks"][0]["command"])[-3:] == [
        str(log), "Stop", "/bin/true"]


def test_session_benchmark_counts_the_timed_hooks_of_complete_rounds_only(tmp_path: Path) -> None:
    """The hooks timed after the last complete round (a round cut short, a session run again)
    are left out; a timed hook that failed stops the report."""
    import bench_session

    log = tmp_path / "times.jsonl"
    first = json.dumps({"event": "PreToolUse", "wall": 0.05, "user": 0.01, "system": 0.002,
                        "status": 0}) + "\n"
    later = json.dumps({"event": "PostToolUse", "wall": 0.02, "user": 0.01, "system": 0.0,
                        "status": 0}) + "\n"
    log.write_text(first + later)
    assert {"PreToolUse": [(0.05, 0.012)]} == bench_session.hook_times(log, len(first))
    assert ["PreToolUse", "PostToolUse"] == list(bench_session.hook_times(log, log.stat().st_size))
    log.write_text(first.replace('"status": 0', '"status": 256'))
    with pytest.raises(bench_session.SessionFailed, match="exited with status 256"):
        bench_session.hook_times(log, log.stat().st_size)
