"""Benchmark: `smllm serve` as a person meets it, measured in Debian's headless Chromium.

    .venv/bin/python bench/bench_serve.py [--rounds 5] [--records 100000] [--sessions 10000]

One SMLLM_HOME holds a session of ``--records`` records (bench_export's realistic mix,
written with the journal's own encoder) and ``--sessions`` small sessions, and the
embedded index built over them (``smllm sessions``, as on any machine in use). Each round
starts a fresh `smllm serve` (nothing read or cached yet), opens the printed URL, then
measures in the browser (Navigation Timing, from the navigation's start):

* the sessions page over all the sessions: until the page is shown (DOMContentLoaded);
* the first view of the large session: until its page is shown (DOMContentLoaded) with
  its facts, side effects and first timeline page; and, for information, until the
  whole log has been read and the page has filled in its totals by itself;
* the same two pages once more (warm).

The baseline, measured in the same rounds, is the same bytes (each page's HTML as the
viewer sent it, with its stylesheet and script) served as static files by Python's
``http.server``: what the browser alone costs. Printed: medians, the ratio to the
baseline, and the targets (first view of the large session <= 1 s, sessions page
<= 0.5 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_export import write_log  # the realistic record mix

from smllm import journal
from smllm.base import clock

PYTHON = sys.executable
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
BIG = "bench-big-session"
T0 = 1785665700000
NAV = "JSON.stringify(performance.getEntriesByType('navigation')[0])"


def _index(home: Path, sid: str, day: str) -> Path:
    folder = home / "sessions" / day / sid
    folder.mkdir(parents=True, exist_ok=True)
    by_id = home / "sessions" / "by-id"
    by_id.mkdir(parents=True, exist_ok=True)
    (by_id / sid).write_text(day + "\n")
    return folder / journal.LOG_NAME


def build(home: Path, records: int, sessions: int) -> None:
    t = time.perf_counter()
    write_log(_index(home, BIG, "2026/08/02"), records)
    for n in range(sessions):
        sid = f"bench-{n:06d}"
        at = T0 + n * 60_000
        entries = [
            journal.fact("session.start", {"session_id": sid, "source": "startup",
                                           "cwd": f"/work/project-{n % 37}", "model": "m"}),
            journal.event("proposed", turn=1, prompt=f"task {n}: fix the flaky test"),
            journal.event("accepted", turn=1, prompt=None),
            journal.event("completed", turn=1),
            journal.fact("session.end", {"exit_reason": "clean" if n % 9 else "crash_inferred",
                                         "uptime_ms": 1000}),
        ]
        prev = journal.GENESIS
        lines = []
        for seq, entry in enumerate(entries, 1):
            line, _, prev = journal.encode_record(entry, sequence=seq, prev=prev,
                                                  recorded_at=clock.iso_utc(at + seq),
                                                  skipped=0)
            lines.append(line)
        _index(home, sid, clock.iso_utc(at)[:10].replace("-", "/")).write_bytes(b"".join(lines))
    print(f"built {records:,}-record session and {sessions:,} sessions in "
          f"{time.perf_counter() - t:.1f}s", flush=True)
    t = time.perf_counter()
    subprocess.run([PYTHON, "-m", "smllm", "sessions", "--all"], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "SMLLM_HOME": str(home)})
    print(f"embedded index built (smllm sessions) in {time.perf_counter() - t:.1f}s",
          flush=True)


def start_viewer(home: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "SMLLM_HOME": str(home)}
    proc = subprocess.Popen([PYTHON, "-m", "smllm", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().split()[2]


def stop(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)


def shown_ms(page: object, url: str) -> float:
    """Milliseconds from the navigation's start to DOMContentLoaded, as the browser saw it."""
    page.goto(url, wait_until="domcontentloaded")  # type: ignore[attr-defined]
    nav = json.loads(page.evaluate(NAV))  # type: ignore[attr-defined]
    return float(nav["domContentLoadedEventEnd"])


def static_copy(base: str, token: str, paths: list[str], root: Path) -> None:
    """Save each page as the viewer sends it, plus its assets, for the static baseline."""
    for path in ["/static/app.css", "/static/app.js", "/static/favicon.svg", *paths]:
        req = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read()
        target = root / (path.strip("/").replace("/", "_") + ".html"
                         if not path.startswith("/static/") else path.strip("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    home = tmp / "home"
    build(home, args.records, args.sessions)
    static_root = tmp / "static-site"
    pages = {"sessions": "/sessions", "session": f"/sessions/{BIG}"}
    results: dict[str, list[float]] = {k: [] for k in (
        "sessions cold", "session cold", "session complete", "sessions warm", "session warm",
        "sessions baseline", "session baseline")}
    static = None
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            for r in range(args.rounds):
                proc, url = start_viewer(home)
                base, token = url.split("/?token=")
                context = browser.new_context()
                page = context.new_page()
                try:
                    page.goto(f"{base}/static/favicon.svg?token={token}")  # the cookie only
                    results["sessions cold"].append(shown_ms(page, base + pages["sessions"]))
                    results["session cold"].append(shown_ms(page, base + pages["session"]))
                    page.wait_for_selector("#scanning", state="detached", timeout=60_000)
                    nav = json.loads(page.evaluate(NAV))
                    done = page.evaluate("performance.now()")
                    results["session complete"].append(done - nav["startTime"])
                    results["sessions warm"].append(shown_ms(page, base + pages["sessions"]))
                    results["session warm"].append(shown_ms(page, base + pages["session"]))
                    if r == 0:
                        static_copy(base, token, list(pages.values()), static_root)
                        static = subprocess.Popen(
                            [PYTHON, "-m", "http.server", "0", "--bind", "127.0.0.1",
                             "--directory", str(static_root)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
                        assert static.stdout is not None
                        port = static.stdout.readline().split("port ")[1].split(" ")[0]
                    sbase = f"http://127.0.0.1:{port}"
                    results["sessions baseline"].append(shown_ms(page, f"{sbase}/sessions.html"))
                    results["session baseline"].append(
                        shown_ms(page, f"{sbase}/sessions_{BIG}.html"))
                finally:
                    context.close()
                    stop(proc)
                print(f"round {r + 1}/{args.rounds}: " + ", ".join(
                    f"{k} {v[-1]:.0f} ms" for k, v in results.items()), flush=True)
            browser.close()
    finally:
        if static is not None:
            os.kill(static.pid, signal.SIGTERM)
            static.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"\nmedians over {args.rounds} rounds (ms, navigation start -> page shown):")
    for k, v in med.items():
        print(f"  {k:<18} {v:8.0f}")
    print("\nratios to the static baseline (same HTML, same browser):")
    for name in ("sessions", "session"):
        for when in ("cold", "warm"):
            print(f"  {name} {when}: {med[f'{name} {when}'] / med[f'{name} baseline']:.2f}x")
    checks = [("first view of the large session (cold)", med["session cold"], 1000),
              (f"sessions page over {args.sessions:,} sessions (cold)", med["sessions cold"], 500)]
    print()
    for label, value, limit in checks:
        verdict = "ok" if value <= limit else "OVER"
        print(f"  {label}: {value:.0f} ms (target <= {limit} ms) {verdict}")
    print(f"  (the large session's log fully read and its page filled in: "
          f"{med['session complete']:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
