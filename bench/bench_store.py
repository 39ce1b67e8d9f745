"""The team store and the index at scale, against a real PostgreSQL started for the run.

    .venv/bin/python bench/bench_store.py [--developers 100] [--records 1000000]
                                          [--local-sessions 10000] [--rounds 15]

Prints, each as a measurement and a ratio to its target or baseline of the same run:

* ship: a backlog of ``--records`` records (``--developers`` homes, each its own host
  and user) shipped with ``smllm ship`` (COPY, one transaction per 20,000 rows), in
  records/s (target ≥ 50,000/s); the index each ship reads is built first and timed apart;
* re-ship: the same backlog shipped again (cursors), as a share of the first ship
  (target ≤ 10%); and a full re-send (``--recheck``) for comparison;
* query: "every rm -rf a judge approved, by user" over the whole store, median of
  ``--rounds`` (target ≤ 200 ms), with the documented indexes;
* sessions: ``smllm sessions --all`` over ``--local-sessions`` sessions from the index,
  against the folder scan it replaces (every journal opened for its folder and first
  prompt), both as whole processes, interleaved (target ≤ 0.3 s);
* hooks: SessionEnd and Stop with a team store configured and down, against the same
  hooks with the store up and without a store, interleaved: a store that is down must
  not slow them (the hook only spawns the detached shipper, which never waits on it).

PostgreSQL runs durable (fsync and synchronous commits on) with the WAL room of
docs/team-store.md's "Server settings", on a Unix socket in a temporary folder, as
``nobody`` when run as root, and is stopped by PID at the end.
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
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from measure import PYTHON, baseline_argv, installed_hook_argv, interleaved, median_ms

T0 = 1_767_603_600_000
EFFECTS_PER_SESSION = 330  # 3 records each, plus 4 around them: ~1,000 records a session


def generate(root: Path, developers: int, records: int) -> list[dict[str, str]]:
    """One home per developer, filled with journals written by the journal's encoder."""
    from journalgen import Effect, write_session

    per_dev = records // developers
    sessions_per_dev = max(1, per_dev // (EFFECTS_PER_SESSION * 3 + 4))
    effects = max(1, (per_dev // sessions_per_dev - 4) // 3)
    envs = []
    n = 0
    for d in range(developers):
        env = {"SMLLM_HOME": str(root / f"dev{d:03d}"), "USER": f"dev{d:03d}",
               "LOGNAME": f"dev{d:03d}", "SMLLM_STORE_HOST": f"host-{d:03d}"}
        os.environ.update(env)
        project = root / f"dev{d:03d}" / "project"
        root.mkdir(exist_ok=True)
        project.mkdir(parents=True)
        for s in range(sessions_per_dev):
            batch = []
            for _ in range(effects):
                n += 1
                if n % 97 == 0:  # ~1% of intents: a recursive delete a judge approved
                    batch.append(Effect(f"rm -rf build/{n}", "allow:llm_judge", "fs.delete"))
                elif n % 89 == 0:
                    batch.append(Effect(f"rm -rf /srv/{n}", "deny:llm_judge", "fs.delete",
                                        outcome=None))
                else:
                    batch.append(Effect(f"pytest -q tests/test_{n}.py", "allow:policy",
                                        "default.allow"))
            write_session(f"s{d:03d}-{s:04d}-{n:08d}", cwd=str(project),
                          start_ms=T0 + (d * sessions_per_dev + s) * 10_000,
                          prompt=f"task {s}", effects=batch, padding=120)
        envs.append(env)
    return envs


def _with(env: dict[str, str]) -> None:
    os.environ.update(env)
    from smllm.index import origin

    origin.git_remote.cache_clear()
    origin.host.cache_clear()
    origin.user.cache_clear()


def ship_all(envs: list[dict[str, str]], url: str, *, recheck: bool = False
             ) -> tuple[float, int, int]:
    from smllm.store import shipper

    total, sent, inserted = 0.0, 0, 0
    for env in envs:
        _with(env)
        t = time.perf_counter()
        report = shipper.ship(url, recheck=recheck)
        total += time.perf_counter() - t
        sent += report.sent
        inserted += report.inserted
    return total, sent, inserted


def build_indexes(envs: list[dict[str, str]]) -> tuple[float, int]:
    from smllm import index

    total, records = 0.0, 0
    for env in envs:
        _with(env)
        t = time.perf_counter()
        records += index.refresh().records
        total += time.perf_counter() - t
    return total, records


def query(url: str, rounds: int) -> tuple[float, dict[str, int]]:
    from smllm.index import Filters
    from smllm.store import reader
    from smllm.store.connection import connect

    f = Filters(kind="side_effect_intent", decision="allow", authorizer="llm_judge",
                text="rm -rf")
    times = []
    with connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE smllm.records")
        conn.execute("ANALYZE smllm.sessions")
        for _ in range(rounds):
            t = time.perf_counter()
            hits = reader.search(conn, f)
            by_user = Counter(h.user for h in hits)
            times.append(time.perf_counter() - t)
    return statistics.median(times), dict(by_user)


SCAN = r"""
import os, sys
from smllm import journal
from smllm.base import paths
root = os.path.join(paths.data_root(), "sessions", "by-id")
rows = []
for sid in os.listdir(root):
    log = journal.locate(sid)
    cwd = prompt = ""
    for n, rec in enumerate(journal.iter_records(log)):
        body = journal.body_of(rec)
        if not cwd and rec.get("payload_type") == "session.start":
            cwd = str(body.get("cwd") or "")
        if not prompt and journal.kind_of(rec) == "proposed":
            prompt = " ".join(str(body.get("prompt") or "").split())
        if (cwd and prompt) or n >= 200:
            break
    rows.append((os.stat(log).st_mtime, sid, cwd, prompt))
rows.sort(reverse=True)
sys.stdout.write("".join(f"{r[1]}  {r[2]}  {r[3]}\n" for r in rows))
"""


def local_sessions(root: Path, count: int, rounds: int) -> dict[str, float]:
    from journalgen import Effect, write_session

    env = {**os.environ, "SMLLM_HOME": str(root / "local")}
    os.environ["SMLLM_HOME"] = env["SMLLM_HOME"]
    for i in range(count):
        write_session(f"loc-{i:06d}", cwd=f"/src/project-{i % 7}", start_ms=T0 + i * 1000,
                      prompt=f"work item {i}", effects=[Effect("make test")])
    t = time.perf_counter()
    subprocess.run([PYTHON, "-m", "smllm", "sessions", "--all"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    first = time.perf_counter() - t
    cases = {"index": ([PYTHON, "-m", "smllm", "sessions", "--all"], b""),
             "folder scan": ([PYTHON, "-c", SCAN], b""),
             "bare python -I -S": (baseline_argv(), b"")}
    out = interleaved(cases, rounds, env=env)
    return {"first (builds the index)": first * 1000,
            **{name: median_ms(samples) for name, samples in out.items()}}


def _shippers() -> list[str]:
    """The /proc entries of detached shippers still running (Linux)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if b"from smllm.store.trigger import main" in fh.read():
                        found.append(pid)
            except OSError:
                continue
    return found


def _shipper_idle(home: Path) -> None:
    """Wait until no detached shipper holds the lock, and until it has exited: its
    teardown after the lock (and the server's work for it) would compete for the CPU
    with the next sample."""
    import fcntl

    lock = home / "ship" / "lock"
    if not lock.exists():
        return
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)
    deadline = time.monotonic() + 10
    while _shippers() and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.02)  # the server's backend for it ends too


def hooks_with_store_down(root: Path, url: str, rounds: int) -> dict[str, float]:
    """Median wall time of SessionEnd and Stop with no store, with the store at ``url``
    up, and with a store configured but down, interleaved sample by sample; each sample
    starts once the shipper of the previous one has finished."""
    from measure import run_once

    home = root / "hooks"
    argv = installed_hook_argv  # EVENT -> the argv `smllm install` writes
    sid = "b3e1c2d4-0000-4000-8000-00000000beef"
    common = {"session_id": sid, "transcript_path": str(root / "none.jsonl"), "cwd": str(root)}
    start = json.dumps({**common, "hook_event_name": "SessionStart", "source": "startup"})
    base_env = {**os.environ, "SMLLM_HOME": str(home)}
    base_env.pop("SMLLM_STORE_URL", None)
    subprocess.run(argv("SessionStart"), input=start.encode(), env=base_env, check=True,
                   capture_output=True)
    down = {**base_env, "SMLLM_STORE_URL": f"postgresql://nobody@/x?host={root}/no-server"}
    up = {**base_env, "SMLLM_STORE_URL": url}
    samples: dict[str, list[float]] = {}
    cases = [("no store", base_env), ("store up", up), ("store down", down)]
    for r in range(rounds):
        for event, extra in (("SessionEnd", {"reason": "other"}),
                             ("Stop", {"stop_hook_active": False})):
            payload = json.dumps({**common, "hook_event_name": event, **extra}).encode()
            turn = r % len(cases)  # each case takes each place in the order as often
            for name, env in cases[turn:] + cases[:turn]:
                _shipper_idle(home)
                wall, rc = run_once(argv(event), payload, env=env)
                if rc != 0:
                    raise SystemExit(f"{event} exited {rc}")
                samples.setdefault(f"{event} {name}", []).append(wall)
    return {k: statistics.median(v) * 1000 for k, v in samples.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--developers", type=int, default=100)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--local-sessions", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    import pgserver

    root = Path(tempfile.mkdtemp(prefix="smllm-bench-store-"))
    folder = tempfile.mkdtemp(prefix="smllm-bench-pg-")
    os.chmod(folder, 0o755)
    saved_env = dict(os.environ)
    server = pgserver.start(folder, durable=True)
    try:
        pgserver.wait_ready(folder, server)
        pgpass = root / "pgpass"
        pgpass.write_text(f"*:*:*:postgres:{pgserver.PASSWORD}\n")
        pgpass.chmod(0o600)
        os.environ["PGPASSFILE"] = str(pgpass)
        url = f"postgresql://postgres@/postgres?host={folder}"
        from smllm.store import schema
        from smllm.store.connection import connect

        with connect(url) as conn:
            schema.migrate(conn)

        t = time.perf_counter()
        backlog = generate(root / "backlog", 1, args.records)
        print(f"generated a backlog of {args.records:,} records (one developer) in "
              f"{time.perf_counter() - t:.1f} s")
        built, indexed = build_indexes(backlog)
        print(f"index: {indexed:,} records indexed in {built:.1f} s "
              f"({indexed / built:,.0f} records/s; once, before the first ship)")
        first, sent, inserted = ship_all(backlog, url)
        rate = sent / first
        print(f"ship: {sent:,} records ({inserted:,} new) in {first:.1f} s = {rate:,.0f} "
              f"records/s = {rate / 50_000:.2f}× the 50,000/s target")
        again, sent2, _ = ship_all(backlog, url)
        print(f"re-ship (cursors): {sent2:,} records in {again:.2f} s = "
              f"{again / first:.1%} of the first ship (target ≤ 10%)")
        full, sent3, new3 = ship_all(backlog, url, recheck=True)
        print(f"re-ship (--recheck, everything re-sent): {sent3:,} records, {new3} new, in "
              f"{full:.1f} s = {full / first:.0%} of the first ship")
        team = f"postgresql://postgres@/team?host={folder}"
        with connect(url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE team")
        with connect(team) as conn:
            schema.migrate(conn)
        envs = generate(root / "team", args.developers, args.records)
        build_indexes(envs)
        team_time, team_sent, _ = ship_all(envs, team)
        print(f"team: {team_sent:,} records of {args.developers} developers shipped in "
              f"{args.developers} ships, {team_time:.1f} s = {team_sent / team_time:,.0f} "
              "records/s")
        url = team
        q, by_user = query(url, args.rounds)
        print(f"query 'rm -rf approved by a judge, by user': {sum(by_user.values())} effects "
              f"of {len(by_user)} users, median {q * 1000:.1f} ms = {q / 0.2:.2f}× the 200 ms "
              "budget")
        sessions = local_sessions(root, args.local_sessions, max(5, args.rounds // 3))
        idx, scan = sessions["index"], sessions["folder scan"]
        print(f"sessions over {args.local_sessions:,} local sessions: index {idx:.0f} ms "
              f"(= {idx / 300:.2f}× the 300 ms budget), folder scan {scan:.0f} ms "
              f"(index = {idx / scan:.2f}× the scan), bare python -I -S "
              f"{sessions['bare python -I -S']:.0f} ms; first call building the index "
              f"{sessions['first (builds the index)']:.0f} ms")
        hooks = hooks_with_store_down(root, url, args.rounds)
        for event in ("SessionEnd", "Stop"):
            a, u, b = (hooks[f"{event} {k}"] for k in ("no store", "store up", "store down"))
            print(f"hook {event}: store down {b:.1f} ms = {b / u:.2f}× store up ({u:.1f} ms); "
                  f"no store {a:.1f} ms (a configured store spawns the shipper: "
                  f"{u / a:.2f}×)")
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        pgserver.stop(server)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
