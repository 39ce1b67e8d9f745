"""The team store against a real PostgreSQL: ship, sessions/search/verify --store, roles, RLS,
a store that is down, a ship that is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from helpers import PYTHON, base, hook, smllm
from journalgen import Effect, write_session
from pgserver import Server
from smllm import journal
from smllm.store import audit

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z


def _lines(stdout: str) -> list[dict[str, Any]]:
    """A --json list: JSON Lines, one object a line."""
    return [json.loads(line) for line in stdout.splitlines()]


class Dev:
    """A simulated developer: own home, OS user, machine name and database role."""

    def __init__(self, root: Path, name: str, host: str, server: Server, db: str) -> None:
        self.home = root / name
        self.project = root / name / "project"
        self.project.mkdir(parents=True)
        self.name = name
        self.host = host
        self.url = server.url(db, name)
        self.env = {"SMLLM_HOME": str(self.home / "smllm"), "USER": name, "LOGNAME": name,
                    "SMLLM_STORE_HOST": host}

    def smllm(self, *args: str) -> subprocess.CompletedProcess[str]:
        return smllm(*args, env=self.env, cwd=self.project)

    def write(self, sid: str, **kw: Any) -> str:
        saved = os.environ.get("SMLLM_HOME")
        os.environ["SMLLM_HOME"] = self.env["SMLLM_HOME"]
        try:
            return write_session(sid, cwd=str(self.project), **kw)
        finally:
            os.environ["SMLLM_HOME"] = saved or ""

    def hook(self, event: str, sid: str, **payload: Any) -> subprocess.CompletedProcess[bytes]:
        return hook(event, base(event, sid, cwd=str(self.project), **payload), env=self.env)

    def ship(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.smllm("ship", "--to", self.url, "--all", *args)


@pytest.fixture
def team(postgres: Server, store_db: str, tmp_path: Path) -> dict[str, Any]:
    """An initialised store with writers alice and bob and auditor carol."""
    admin = postgres.url(store_db)
    out = smllm("store", "init", "--url", admin)
    assert 0 == out.returncode, out.stderr
    for role, kind in (("alice", "--writer"), ("bob", "--writer"), ("carol", "--auditor")):
        assert 0 == smllm("store", "grant", role, kind, "--url", admin).returncode
    return {"admin": admin, "server": postgres, "db": store_db,
            "alice": Dev(tmp_path, "alice", "host-a", postgres, store_db),
            "bob": Dev(tmp_path, "bob", "host-b", postgres, store_db),
            "auditor": postgres.url(store_db, "carol")}


def _rows(server: Server, db: str) -> list[tuple[Any, ...]]:
    with server.connect(db) as conn:
        return conn.execute(
            "SELECT host, session_id, stream, sequence, hash, line, db_user FROM smllm.records "
            "ORDER BY 1, 2, 3, 4").fetchall()


def _sql(server: Server, db: str, sql: str, user: str = "postgres") -> None:
    with server.connect(db, user) as conn:
        conn.execute("SET session_replication_role = replica" if user == "postgres" else "")
        conn.execute(sql)


def _crash_and_resume(dev: Dev, sid: str) -> None:
    """A real session through the hooks: a prompt, a call in flight, a crash, a resume."""
    dev.hook("SessionStart", sid, source="startup")
    dev.hook("UserPromptSubmit", sid, prompt="tidy up")
    dev.hook("SubagentStart", sid, agent_id="agent-1", agent_type="general-purpose")
    dev.hook("SubagentStop", sid, agent_id="agent-1", agent_type="general-purpose")
    dev.hook("PreToolUse", sid, tool_name="Bash", tool_input={"command": "ls"},
             tool_use_id="toolu_crash")
    dev.hook("SessionStart", sid, source="resume")  # no SessionEnd: the first run crashed
    dev.hook("SessionEnd", sid, reason="other")


def test_two_developers_ship_and_the_team_is_searchable(team: dict[str, Any]) -> None:
    """Two developers on two hosts ship sessions (one crashed and resumed); the store lists
    them and answers "every rm -rf approved by a judge, by user"; re-shipping changes no row."""
    alice, bob = team["alice"], team["bob"]
    alice.write("a1-judge", start_ms=T0, prompt="clean", effects=[
        Effect("rm -rf build", "allow:llm_judge", "fs.delete"),
        Effect("rm -rf dist", "allow:llm_judge", "fs.delete"),
        Effect("rm -rf /tmp/x", "allow:user", "fs.delete")])
    _crash_and_resume(alice, "a2-crash")
    bob.write("b1-judge", start_ms=T0 + 1000, prompt="reset", effects=[
        Effect("rm -rf node_modules", "allow:llm_judge", "fs.delete"),
        Effect("rm -rf .", "deny:llm_judge", "fs.delete", outcome=None),
        Effect("ls -la", "allow:llm_judge", "default")])
    first = [alice.ship(), bob.ship()]
    assert [0, 0] == [p.returncode for p in first], [p.stderr for p in first]
    before = _rows(team["server"], team["db"])
    sessions = _lines(smllm("sessions", "--store", team["auditor"], "--json").stdout)
    assert {("a1-judge", "alice", "host-a", "clean", 13), ("a2-crash", "alice", "host-a",
                                                             "clean", 9),
            ("b1-judge", "bob", "host-b", "clean", 12)} == {
        (s["session_id"], s["user"], s["host"], s["termination"], s["records"])
        for s in sessions}
    judged = smllm("search", "--store", team["auditor"], "--effects", "--decision", "allow",
                   "--authorizer", "llm_judge", "--text", "rm -rf", "--count-by", "user",
                   "--json")
    assert [{"user": "alice", "count": 2}, {"user": "bob", "count": 1}] == _lines(judged.stdout)
    hits = _lines(smllm("search", "--store", team["auditor"], "--effects", "--authorizer",
                            "llm_judge", "--decision", "allow", "--text", "rm -rf",
                            "--json").stdout)
    assert [("bob", "host-b", "rm -rf node_modules", "succeeded"),
            ("alice", "host-a", "rm -rf dist", "succeeded"),
            ("alice", "host-a", "rm -rf build", "succeeded")] == [
        (h["user"], h["host"], h["text"], h["outcome"]) for h in hits]
    again = [alice.ship("--recheck"), bob.ship("--recheck"), alice.ship(), bob.ship()]
    assert [f"shipped 24 record(s) of 3 journal(s) to {alice.url}: 0 new, 24 already stored, "
            "0 conflict(s)",
            f"shipped 12 record(s) of 1 journal(s) to {bob.url}: 0 new, 12 already stored, "
            "0 conflict(s)",
            f"shipped 0 record(s) of 0 journal(s) to {alice.url}: 0 new, 0 already stored, "
            "0 conflict(s)",
            f"shipped 0 record(s) of 0 journal(s) to {bob.url}: 0 new, 0 already stored, "
            "0 conflict(s)"] == [p.stdout.strip() for p in again]
    assert before == _rows(team["server"], team["db"])
    assert {"alice", "bob"} == {r[6] for r in before}
    assert [("main", 9), ("subagent/agent-1", 2)] == sorted(Counter(
        r[2] for r in before if r[1] == "a2-crash").items())


def test_verify_store_reports_edited_and_deleted_rows_and_a_cut_tail(
        team: dict[str, Any]) -> None:
    """An edited stored row and a deleted one are both reported; so is a local tail cut after
    shipping, with its count."""
    alice = team["alice"]
    path = alice.write("a3-verify", start_ms=T0, effects=[Effect("make"), Effect("make test")])
    assert 0 == alice.ship().returncode
    ok = alice.smllm("verify", "--store", team["auditor"], "a3-verify")
    assert (0, f"ok: a3-verify on host-a in {team['auditor']}: 10 stored rows in 1 stream(s), "
               f"every one shipped by role alice, hash chain intact; compared with {path}\n") == (ok.returncode, ok.stdout)
    _sql(team["server"], team["db"], "UPDATE smllm.records SET line = replace(line, "
         "'make test', 'true') WHERE session_id = 'a3-verify' AND sequence = 7")
    _sql(team["server"], team["db"], "DELETE FROM smllm.records WHERE session_id = 'a3-verify' "
         "AND sequence = 5")
    lines = Path(path).read_bytes().splitlines(keepends=True)
    Path(path).write_bytes(b"".join(lines[:7]))  # the last three records cut locally
    bad = alice.smllm("verify", "--store", team["auditor"], "a3-verify")
    assert (1, [f"FAILED: a3-verify on host-a in {team['auditor']}: 3 problem(s); compared "
                f"with {path}",
                "  main #5: 1 row(s) missing from the store (#5)",
                "  main #7: stored row was edited: its line does not hash to its recorded hash",
                "  main #8: the local journal ends at #7 but the store holds up to #10: 3 "
                "record(s) cut from the local tail after shipping"]) == (
        bad.returncode, bad.stdout.splitlines())


@pytest.mark.parametrize("cut", [1, 3])
def test_plain_verify_counts_a_cut_tail_from_the_store_once_the_head_file_is_gone(
        team: dict[str, Any], cut: int) -> None:
    """With a store configured, plain `smllm verify` asks it for the shipped head: after
    `head -n -K` on the log and the deletion of the head file beside it (the attacker's
    moves), verify still reports the K records cut, from the store's head."""
    alice = team["alice"]
    path = alice.write("a12-anchor", start_ms=T0, effects=[Effect("make"), Effect("make test")])
    assert 0 == alice.ship().returncode
    alice.env["SMLLM_STORE_URL"] = alice.url
    store = f"the team store ({alice.url})"
    ok = alice.smllm("verify", "a12-anchor")
    assert (0, f"ok: {path}: 10 records, hash chain intact, invariants hold\n"
               f"  {store} holds this journal up to sequence 10\n") == (ok.returncode, ok.stdout)
    kept = subprocess.run(["head", "-n", f"-{cut}", path], capture_output=True, check=True)
    Path(path).write_bytes(kept.stdout)
    os.unlink(os.path.join(os.path.dirname(path), journal.HEAD_NAME))
    bad = alice.smllm("verify", "a12-anchor")
    assert (1, f"FAILED: {path}:{11 - cut}: {cut} record(s) missing at the end of the log: it "
               f"ends at sequence {10 - cut}, {store} says sequence 10\n"
               f"  {store} holds this journal up to sequence 10\n") == (
        bad.returncode, bad.stdout)
    report = json.loads(alice.smllm("verify", "a12-anchor", "--json").stdout)
    assert (False, cut, [
        {"kind": "head", "where": "the head recorded beside it (head)", "available": False,
         "sequence": None, "error": "no head file beside the log"},
        {"kind": "store", "where": store, "available": True, "sequence": 10, "error": None},
        ("key", True, 10 - cut, None),  # each record's MAC under the key, checked
    ]) == (report["ok"], report["missing"], [*report["anchors"][:2], tuple(
        report["anchors"][2][k] for k in ("kind", "available", "sequence", "error"))])


def test_plain_verify_with_both_heads_counts_the_cut_once(team: dict[str, Any]) -> None:
    """The head file and the store both see the cut: two problems, one count of missing
    records; a journal not shipped yet is said to be so."""
    alice = team["alice"]
    path = alice.write("a13-both", start_ms=T0, effects=[Effect("make")])
    alice.env["SMLLM_STORE_URL"] = alice.url
    store = f"the team store ({alice.url})"
    unshipped = alice.smllm("verify", "a13-both")
    assert (0, f"ok: {path}: 7 records, hash chain intact, invariants hold\n"
               f"  {store} holds no record of this journal yet (not shipped)\n") == (
        unshipped.returncode, unshipped.stdout)
    assert 0 == alice.ship().returncode
    lines = Path(path).read_bytes().splitlines(keepends=True)
    Path(path).write_bytes(b"".join(lines[:-2]))
    report = json.loads(alice.smllm("verify", "a13-both", "--json").stdout)
    assert (2, [f"2 record(s) missing at the end of the log: it ends at sequence 5, {where} "
                "says sequence 7" for where in ("the head recorded beside it (head)", store)]
            ) == (report["missing"], [p["what"] for p in report["problems"]])


def test_plain_verify_with_the_store_down_says_it_is_unavailable(tmp_path: Path) -> None:
    """An unreachable store is an unavailable anchor: a line and a JSON entry saying why,
    never a crash; the cut is still found through the head file when it is there, and
    without it verify says that nothing vouches for the end of the log (which has no
    orderly end: the cut left an effect open)."""
    path = write_session("v1-down", cwd=str(tmp_path), start_ms=T0, effects=[Effect("make")])
    folder = tmp_path / "no-server"
    down = f"postgresql://alice@/db?host={folder}"
    env = {"SMLLM_STORE_URL": down}
    error = (f"cannot reach the team store {down}: connection is bad: connection to server on "
             f'socket "{folder}/.s.PGSQL.5432" failed: No such file or directory (check that '
             "the server runs, the URL, and the password in ~/.pgpass or PGPASSWORD)")
    lines = Path(path).read_bytes().splitlines(keepends=True)
    Path(path).write_bytes(b"".join(lines[:-2]))
    cut = smllm("verify", "v1-down", env=env)
    os.unlink(os.path.join(os.path.dirname(path), journal.HEAD_NAME))
    blind = smllm("verify", "v1-down", env=env)
    report = json.loads(smllm("verify", "v1-down", "--json", env=env).stdout)
    assert [
        (1, f"FAILED: {path}:6: 2 record(s) missing at the end of the log: it ends at sequence "
            f"5, the head recorded beside it (head) says sequence 7\n"
            f"  the team store is unavailable: {error}; the end of the log was checked "
            "against its head file only\n", ""),
        (0, f"unfinished: {path}: 5 records, hash chain intact, invariants hold; no orderly "
            "end: 1 effect(s) started and never finished: toolu_v1-down_0 (sequence 5, line "
            "5); no session end after the last session start or resume\n"
            "  the session crashed or is still running: after a crash, `smllm resume` "
            "continues it and `smllm reconcile SEQ` records what an unknown effect did\n"
            f"  the team store is unavailable: {error}; nothing outside the log vouches for "
            "its end, so records cut from it cannot be seen\n", ""),
        {"kind": "store", "where": f"the team store ({down})", "available": False,
         "sequence": None, "error": error},
    ] == [(cut.returncode, cut.stdout, cut.stderr), (blind.returncode, blind.stdout,
                                                     blind.stderr), report["anchors"][1]]


def test_writer_cannot_update_or_delete_and_rls_separates_developers(
        team: dict[str, Any]) -> None:
    """The writer role's UPDATE and DELETE fail (grants), the owner's too (trigger); with
    row-level security on, each developer reads only their own sessions, the auditor all."""
    import psycopg

    alice, bob, server, db = team["alice"], team["bob"], team["server"], team["db"]
    alice.write("a4-rls", start_ms=T0)
    bob.write("b4-rls", start_ms=T0 + 5)
    assert [0, 0] == [alice.ship().returncode, bob.ship().returncode]
    for sql in ("UPDATE smllm.records SET outcome = 'x'", "DELETE FROM smllm.records",
                "DELETE FROM smllm.sessions", "TRUNCATE smllm.records"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
            _sql(server, db, sql, user="alice")
        table = "sessions" if "sessions" in sql else "records"
        assert f"permission denied for table {table}" == str(err.value).strip()
    with server.connect(db) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege) as err:
        conn.execute("UPDATE smllm.records SET outcome = 'x'")
    assert ("smllm: UPDATE on smllm.records refused: the team store is append-only"
            == str(err.value).splitlines()[0])
    with server.connect(db, "alice") as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("INSERT INTO smllm.records (host, session_id, stream, sequence, hash, line,"
                     " db_user) VALUES ('h', 's', 'main', 1, 'x', '{}', 'bob')")

    def visible(url: str) -> list[str]:
        out = smllm("sessions", "--store", url, "--json")
        return sorted(s["session_id"] for s in _lines(out.stdout))

    assert ["a4-rls", "b4-rls"] == visible(alice.url)  # RLS off: a writer reads all
    assert 0 == smllm("store", "rls", "on", "--url", team["admin"]).returncode
    assert (["a4-rls"], ["b4-rls"], ["a4-rls", "b4-rls"]) == (
        visible(alice.url), visible(bob.url), visible(team["auditor"]))
    hits = smllm("search", "--store", bob.url, "--kind", "session.start", "--json")
    assert ["b4-rls"] == [h["session_id"] for h in _lines(hits.stdout)]


def test_store_down_loses_nothing_and_the_next_ship_catches_up(
        team: dict[str, Any], tmp_path: Path) -> None:
    """With the configured store unreachable, hooks answer as usual and the journal keeps
    everything; the detached shipper logs the failure; the next ship sends it all."""
    alice = team["alice"]
    down = f"postgresql://alice@/{team['db']}?host={tmp_path}/no-server"
    alice.env["SMLLM_STORE_URL"] = down
    sid = "a5-down"
    _crash_and_resume(alice, sid)
    pre = alice.hook("PreToolUse", sid, tool_name="Read", tool_input={"file_path": "/etc/hosts"},
                     tool_use_id="toolu_read")
    assert (0, b"") == (pre.returncode, pre.stdout)
    log = Path(alice.env["SMLLM_HOME"]) / "logs" / "ship.log"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "ship failed" not in (
            log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    text = log.read_text()
    assert "ship failed: cannot reach the team store" in text
    assert "smllm-test-secret" not in text
    local = [r for r in journal.iter_records(_log(alice, sid))]
    alice.env["SMLLM_STORE_URL"] = alice.url
    assert 0 == alice.smllm("ship", "--all").returncode
    stored = [r for r in _rows(team["server"], team["db"]) if r[1] == sid and r[2] == "main"]
    assert [r["sequence"] for r in local] == [r[3] for r in stored]


def _log(dev: Dev, sid: str) -> Path:
    rows = _lines(dev.smllm("sessions", "--all", "--json").stdout)
    return Path(next(s["journal"] for s in rows if s["session_id"] == sid))


def test_the_detached_shipper_ships_after_session_end(team: dict[str, Any]) -> None:
    """With a store configured, SessionEnd starts a shipper that sends the session by itself."""
    alice = team["alice"]
    alice.env["SMLLM_STORE_URL"] = alice.url
    sid = "a6-auto"
    alice.hook("SessionStart", sid, source="startup")
    end = alice.hook("SessionEnd", sid, reason="other")
    assert (0, b"") == (end.returncode, end.stdout)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if len([r for r in _rows(team["server"], team["db"]) if r[1] == sid]) == 2:
            break
        time.sleep(0.2)
    assert [1, 2] == [r[3] for r in _rows(team["server"], team["db"]) if r[1] == sid]


@pytest.mark.parametrize("point", ["ship-copied", "ship-committed"])
def test_a_kill_during_ship_leaves_no_partial_or_duplicate_rows(
        team: dict[str, Any], point: str) -> None:
    """A ship killed after its COPY stores nothing; one killed after its commit (before its
    cursor moved) stores the batch; the next ship completes without a duplicate."""
    alice = team["alice"]
    alice.write("a7-kill", start_ms=T0, effects=[Effect(f"echo {n}") for n in range(20)])
    killed = smllm("ship", "--to", alice.url, "--all", env={**alice.env, "SMLLM_FAULT": point},
                   cwd=alice.project)
    assert -signal.SIGKILL == killed.returncode
    stored = len(_rows(team["server"], team["db"]))
    assert (0 if point == "ship-copied" else 64) == stored
    again = alice.ship()
    new = 64 if point == "ship-copied" else 0
    assert (f"shipped 64 record(s) of 1 journal(s) to {alice.url}: {new} new, {64 - new} already"
            " stored, 0 conflict(s)\n") == again.stdout
    rows = _rows(team["server"], team["db"])
    assert list(range(1, 65)) == [r[3] for r in rows]


def test_a_forked_journal_is_reported_as_a_conflict_and_the_stored_row_kept(
        team: dict[str, Any]) -> None:
    """A local record that differs from the stored one is a conflict: reported, not written."""
    alice = team["alice"]
    path = alice.write("a8-fork", start_ms=T0, prompt="original")
    assert 0 == alice.ship().returncode
    before = _rows(team["server"], team["db"])
    os.unlink(path)
    alice.write("a8-fork", start_ms=T0, prompt="rewritten")
    out = alice.ship()
    assert 1 == out.returncode
    assert [f"shipped 4 record(s) of 1 journal(s) to {alice.url}: 0 new, 0 already stored, "
            "4 conflict(s)"] == out.stdout.splitlines()[:1]
    assert out.stdout.splitlines()[1].startswith("conflict: a8-fork main #1: the store holds "
                                                 "sha256:")
    assert before == _rows(team["server"], team["db"])


def test_credentials_never_ride_in_argv(team: dict[str, Any]) -> None:
    """A URL with a password on the command line is refused with the way to do it."""
    url = team["alice"].url.replace("alice@", "alice:hunter2@")
    out = smllm("ship", "--to", url, "--all")
    assert (2, "smllm: error: the --to URL holds a password, which any user can read in the "
               "process list (remove it and use ~/.pgpass or PGPASSWORD, or put the URL in "
               "SMLLM_STORE_URL or [store] url in "
               f"{Path(os.environ['SMLLM_HOME']) / 'config.toml'} (mode 0600))\n") == (
        out.returncode, out.stderr)


def test_a_missing_psycopg_says_how_to_install_it() -> None:
    """Without psycopg, a store command says how to install the team extra."""
    code = ("import sys; sys.modules['psycopg'] = None; from smllm.cli import main; "
            "sys.exit(main(['store', 'status', '--url', 'postgresql:///x']))")
    out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, check=False)
    assert (1, "smllm: error: the team store needs psycopg 3, which is not installed (install "
               f"smllm's team extra: {PYTHON} -m pip install 'smllm[team]')\n") == (
        out.returncode, out.stderr)


def test_store_commands_refuse_an_uninitialised_store(postgres: Server, store_db: str) -> None:
    """Shipping to a database without the schema says to run `smllm store init`."""
    out = smllm("ship", "--to", postgres.url(store_db), "--all")
    assert (1, "smllm: error: the team store has no smllm schema (create it with "
               "`smllm store init --url URL`)\n") == (out.returncode, out.stderr)


def test_libpq_parameters_pass_through(team: dict[str, Any]) -> None:
    """The URL's libpq parameters (sslmode included) reach libpq as given."""
    alice = team["alice"]
    out = alice.smllm("ship", "--to", alice.url + "&sslmode=bogus", "--all")
    assert (1, f"smllm: error: cannot reach the team store {alice.url}&sslmode=bogus: "
               'connection is bad: invalid sslmode value: "bogus" (check that the server runs, '
               "the URL, and the password "
               "in ~/.pgpass or PGPASSWORD)\n") == (out.returncode, out.stderr)


def test_a_config_file_with_a_password_must_be_private(tmp_path: Path, smllm_home: Path) -> None:
    """[store] url with a password in a config file others can read is refused, with the fix."""
    smllm_home.mkdir(parents=True, exist_ok=True)
    config = smllm_home / "config.toml"
    config.write_text('[store]\nurl = "postgresql://alice:pw@db.example/smllm"\n')
    config.chmod(0o644)
    out = smllm("sessions", "--store", "--json")
    assert (1, f"smllm: error: {config}: [store] url holds a password but the file is "
               f"readable by others (chmod 600 {config}, or move the password to "
               "~/.pgpass)\n") == (out.returncode, out.stderr)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ship_follow_ships_what_the_journals_gain(team: dict[str, Any]) -> None:
    """`smllm ship --follow` keeps shipping: a session written after it started arrives."""
    alice = team["alice"]
    alice.write("a9-first", start_ms=T0)
    # SIGINT as a terminal gives it: a suite started as a background job (`cmd &` in a
    # script) passes SIGINT on ignored, and Python then leaves it ignored
    proc = subprocess.Popen([PYTHON, "-m", "smllm", "ship", "--to", alice.url, "--all",
                             "--follow", "--interval", "0.2"], env={**os.environ, **alice.env},
                            cwd=alice.project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_sigint)  # noqa: PLW1509 - one signal call
    try:
        deadline = time.monotonic() + 30
        wrote = False
        while time.monotonic() < deadline:
            ids = {r[1] for r in _rows(team["server"], team["db"])}
            if "a9-first" in ids and not wrote:
                alice.write("a9-later", start_ms=T0 + 1000)
                wrote = True
            if "a9-later" in ids:
                break
            time.sleep(0.2)
    finally:
        os.kill(proc.pid, signal.SIGINT)
        proc.wait(20)
    assert {"a9-first", "a9-later"} == {r[1] for r in _rows(team["server"], team["db"])}
    assert 130 == proc.returncode


def test_verify_store_with_the_configured_store(team: dict[str, Any]) -> None:
    """`smllm verify --store SESSION` uses SMLLM_STORE_URL when no URL is given."""
    alice = team["alice"]
    alice.write("a10-conf", start_ms=T0)
    assert 0 == alice.ship().returncode
    alice.env["SMLLM_STORE_URL"] = team["auditor"]
    out = alice.smllm("verify", "--store", "a10-conf")
    assert (0, f"ok: a10-conf on host-a in {team['auditor']}: 4 stored rows in 1 stream(s), "
               f"every one shipped by role alice, hash chain intact; compared with {_log(alice, 'a10-conf')}\n") == (
        out.returncode, out.stdout)


def test_store_json_outputs_are_valid(team: dict[str, Any]) -> None:
    """The store commands' --json: one compact object each, valid against its schema in
    tests/schemas/store/ (the rest are checked by test_cli_json.py without a server)."""
    import jsonschema

    alice = team["alice"]
    alice.write("a11-json", start_ms=T0)
    admin = team["admin"]
    cases = {
        "store-init": ["store", "init", "--url", admin, "--json"],
        "store-grant": ["store", "grant", "dave", "--auditor", "--url", admin, "--json"],
        "store-rls": ["store", "rls", "off", "--url", admin, "--json"],
        "ship": ["ship", "--to", alice.url, "--all", "--json"],
        "store-status": ["store", "status", "--url", admin, "--json"],
        "verify-store": ["verify", "--store", team["auditor"], "a11-json", "--json"],
    }
    folder = Path(__file__).parent / "schemas" / "store"
    assert sorted(cases) == sorted(p.name.removesuffix(".schema.json")
                                   for p in folder.glob("*.schema.json"))
    for name, argv in cases.items():
        out = alice.smllm(*argv)
        schema = json.loads((folder / f"{name}.schema.json").read_text())
        lines = out.stdout.splitlines()
        value = json.loads(lines[0])
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(value)]
        compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        assert (name, 0, 1, [], compact) == (name, out.returncode, len(lines), errors, lines[0])


def test_a_stored_stream_name_names_only_its_own_sessions_log(tmp_path: Path) -> None:
    """verify --store compares a stored stream with this session's own log only: a stream
    name that climbs out of the session's folder (any writer can store one) names none."""
    main = write_session("a5-main", cwd=str(tmp_path), start_ms=T0)
    other = write_session("a5-other", cwd=str(tmp_path), start_ms=T0)
    agent = journal.locate("a5-main", agent_id="agent-1", create=True)
    Path(agent).write_bytes(b"")
    cases = {"main": main, "subagent/agent-1": agent, "subagent/../../a5-other": None,
             "../a5-other": None, "subagent/agent-2": None}
    assert os.path.dirname(os.path.dirname(main)) == os.path.dirname(os.path.dirname(other))
    assert cases == {stream: audit._local_journal("a5-main", stream) for stream in cases}


def _rewrite(path: str, edit: Any) -> list[str]:
    """Rewrite each line of the journal at ``path`` through ``edit(number, line)``."""
    lines = Path(path).read_text().splitlines()
    new = [edit(n, line) for n, line in enumerate(lines, 1)]
    Path(path).write_text("".join(line + "\n" for line in new))
    return new


def test_a_journal_line_with_any_json_whitespace_ships(team: dict[str, Any]) -> None:
    """Raw tabs, carriage returns and spaces between JSON tokens are valid JSON: such a
    journal ships, and the store holds each line exactly as written."""
    alice = team["alice"]
    path = alice.write("a20-tabs", start_ms=T0, prompt="tab\there")
    spaced = _rewrite(path, lambda n, line: json.dumps(
        json.loads(line), separators=(",\t", ":\r \t") if n % 2 else (" ,\t", "\t:")))
    assert all("\t" in line for line in spaced)
    out = alice.ship()
    assert (0, "") == (out.returncode, out.stderr)
    assert out.stdout.startswith("shipped 4 record(s) of 1 journal(s)")
    stored = [row[4:6] for row in _rows(team["server"], team["db"]) if row[1] == "a20-tabs"]
    assert [(json.loads(line)["hash"], line) for line in spaced] == stored
    again = alice.ship()
    assert (0, f"shipped 0 record(s) of 0 journal(s) to {alice.url}: 0 new, 0 already "
               "stored, 0 conflict(s)\n") == (again.returncode, again.stdout)


def test_a_session_the_store_refuses_does_not_stop_the_others(team: dict[str, Any]) -> None:
    """A session with a line the store refuses (a timestamp PostgreSQL cannot read) is
    reported and not shipped; the sessions before and after it ship; the next ship tries
    it again, and ships it once the line can be stored."""
    alice = team["alice"]
    alice.write("a21-first", start_ms=T0, prompt="one")
    bad = alice.write("a21-bad", start_ms=T0 + 1000, prompt="two")
    alice.write("a21-last", start_ms=T0 + 2000, prompt="three")
    original = Path(bad).read_text()
    _rewrite(bad, lambda n, line: line.replace('"recorded_at":"2026-01-05T09:00:01.002Z"',
                                               '"recorded_at":"2026-13-45T99:00:01.002Z"'))
    assert original != Path(bad).read_text()
    first = alice.ship()
    refused = ("not shipped: a21-bad: the store refused it: date/time field value out of "
               "range: \"2026-13-45T99:00:01.002Z\" (the other sessions shipped; this one is "
               "tried again at the next ship)")

    def sessions() -> Counter[str]:
        return Counter(row[1] for row in _rows(team["server"], team["db"]))

    assert (1, [f"shipped 8 record(s) of 3 journal(s) to {alice.url}: 8 new, 0 already "
                "stored, 0 conflict(s)", refused]) == (first.returncode,
                                                      first.stdout.splitlines())
    assert Counter({"a21-first": 4, "a21-last": 4}) == sessions()
    again = alice.ship()
    assert (1, refused) == (again.returncode, again.stdout.splitlines()[-1])
    as_json = alice.ship("--json")
    report = json.loads(as_json.stdout)
    jsonschema.validate(report, json.loads(
        (Path(__file__).parent / "schemas" / "store" / "ship.schema.json").read_text()))
    assert (1, [{"session_id": "a21-bad", "error": "date/time field value out of range: "
                 "\"2026-13-45T99:00:01.002Z\""}]) == (as_json.returncode, report["failed"])
    Path(bad).write_text(original)
    fixed = alice.ship()
    assert (0, [f"shipped 4 record(s) of 1 journal(s) to {alice.url}: 4 new, 0 already "
                "stored, 0 conflict(s)"]) == (fixed.returncode, fixed.stdout.splitlines())
    assert Counter({"a21-first": 4, "a21-bad": 4, "a21-last": 4}) == sessions()


def test_a_refused_session_keeps_its_later_batches_back(team: dict[str, Any],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of two rows: the refused session's later rows are not shipped in the same
    run (its cursor would jump past the refused line, which would then never ship); once
    the line can be stored the next ship sends the whole session."""
    from smllm.store import shipper

    alice = team["alice"]
    alice.write("a22-first", start_ms=T0, prompt="one")
    bad = alice.write("a22-bad", start_ms=T0 + 1000, prompt="two")
    alice.write("a22-last", start_ms=T0 + 2000, prompt="three")
    original = Path(bad).read_text()
    _rewrite(bad, lambda n, line: line.replace('"recorded_at":"2026-01-05T09:00:01.001Z"',
                                               '"recorded_at":"2026-13-45T99:00:01.001Z"'))
    for name, value in alice.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(shipper, "BATCH_ROWS", 2)
    first = shipper.ship(alice.url)
    stored = Counter(row[1] for row in _rows(team["server"], team["db"]))
    assert (["a22-bad"], 8, Counter({"a22-first": 4, "a22-last": 4})) == (
        list(first.failed), first.inserted, stored)
    Path(bad).write_text(original)
    second = shipper.ship(alice.url)
    stored = Counter(row[1] for row in _rows(team["server"], team["db"]))
    assert ({}, 4, Counter({"a22-first": 4, "a22-bad": 4, "a22-last": 4})) == (
        second.failed, second.inserted, stored)
