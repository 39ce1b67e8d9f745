"""The team store without secrets in clear (issue 23, acceptance 3): a session full of
planted secrets ships redacted by default, and no secret is in any column of any table;
every row stays verifiable (edited, deleted and cut rows are found); a store made with
``--raw`` says so wherever it is read."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import smllm
from journalgen import append
from pgserver import Server
from smllm import journal
from test_redact import PLACES, SECRETS, SURVIVORS, _forms, _pieces, _plant, _quoted

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z
SID = "s23-planted"


class Dev:
    """A developer with their own smllm home, OS user and host name."""

    def __init__(self, root: Path, name: str, url: str) -> None:
        self.project = root / name / "project"
        self.project.mkdir(parents=True)
        self.url = url
        self.env = {"SMLLM_HOME": str(root / name / "smllm"), "USER": name, "LOGNAME": name,
                    "SMLLM_STORE_HOST": f"host-{name}"}

    def smllm(self, *args: str) -> Any:
        return smllm(*args, env=self.env, cwd=self.project)

    def planted(self, sid: str = SID) -> str:
        """A session carrying every corpus secret in every place, and the look-alikes."""
        saved = os.environ.get("SMLLM_HOME")
        os.environ["SMLLM_HOME"] = self.env["SMLLM_HOME"]
        try:
            folder = journal.session_folder(sid, create=True, now_ms=T0)
            path = os.path.join(folder, journal.LOG_NAME)
            entries = [journal.fact("session.start", {
                "session_id": sid, "source": "startup", "cwd": str(self.project),
                "transcript_path": None, "model": "m", "host": "claude-code",
                "build": {"smllm": "0.1.0"}})]
            n = 0
            for entry in SECRETS:
                for place in PLACES:
                    n += 1
                    entries.append(_plant(entry, place, n))
            for s in SURVIVORS:
                entries.append(journal.fact("tool_batch.effect.terminal", {
                    "tool_use_id": "s", "outcome": "succeeded",
                    "output": {"stdout": s["text"]}}))
            entries.append(journal.fact("session.end", {"exit_reason": "clean",
                                                        "host_reason": None, "uptime_ms": 1}))
            append(path, entries, T0)
            return path
        finally:
            os.environ["SMLLM_HOME"] = saved or ""


def _everything(server: Server, db: str) -> str:
    """Every value of every column of every table (and view) of the store, as text."""
    with server.connect(db) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'smllm' ORDER BY 1, 2").fetchall()
        assert {"records", "sessions", "heads", "meta", "schema_migrations", "effects"} == {
            t for t, _, _ in columns}
        parts = []
        for table, column, kind in columns:
            value = f"encode(\"{column}\", 'escape')" if kind == "bytea" else f'"{column}"::text'
            rows = conn.execute(f'SELECT {value} FROM smllm."{table}"').fetchall()
            parts.extend(v for (v,) in rows if v is not None)
    return "\n".join(parts)


@pytest.fixture
def store(postgres: Server, store_db: str, tmp_path: Path) -> dict[str, Any]:
    admin = postgres.url(store_db)
    out = smllm("store", "init", "--url", admin)
    assert (0, "") == (out.returncode, out.stderr)
    assert 0 == smllm("store", "grant", "alice", "--writer", "--url", admin).returncode
    assert 0 == smllm("store", "grant", "carol", "--auditor", "--url", admin).returncode
    return {"admin": admin, "server": postgres, "db": store_db, "init": out.stdout,
            "alice": Dev(tmp_path, "alice", postgres.url(store_db, "alice")),
            "auditor": postgres.url(store_db, "carol")}


def test_no_planted_secret_is_in_any_column_of_any_table(store: dict[str, Any]) -> None:
    """After shipping a session holding the whole redaction corpus (every secret in a
    prompt, a tool input, a tool output, a derived reason, a nested JSON value and a JSON
    key), no secret, and no 8-character piece of what a reason quotes of one, is in any
    column of any table of the store; the look-alikes are there, kept."""
    alice = store["alice"]
    path = alice.planted()
    raw = Path(path).read_text()
    assert [] == [s["kind"] for s in SECRETS if not any(f in raw for f in _forms(s["secret"]))]
    out = alice.smllm("ship", "--to", alice.url, "--all")
    records = len(raw.splitlines())
    assert (0, f"shipped {records} record(s) of 1 journal(s) to {alice.url}: {records} new, 0 "
               "already stored, 0 conflict(s)\n") == (out.returncode, out.stdout)
    text = _everything(store["server"], store["db"])
    survived = [(s["kind"], s["text"][:50]) for s in SECRETS
                if any(f in text for f in _forms(s["secret"]))]
    unmarked = re.sub(r"\[REDACTED:[a-z_]+\]", "[]", text)
    # smllm's own digests and ids (hashes, chains, keys, UUIDs) are long runs of random hex:
    # an 8-character piece of a hex secret turns up in one now and then by chance (about once
    # in a hundred runs); no quoted piece of a secret is ever one of them
    unmarked = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"
                      r"[0-9a-f]{32,}", "#", unmarked)
    pieces = [(s["kind"], piece) for s in SECRETS for piece in _pieces(_quoted(s))
              if piece in unmarked or json.dumps(piece)[1:-1] in unmarked]
    lost = [s["kind"] for s in SURVIVORS if json.dumps(s["text"])[1:-1] not in text]
    assert ([], [], []) == (survived, pieces, lost)
    with store["server"].connect(store["db"]) as conn:
        counts = conn.execute("SELECT count(*) FILTER (WHERE redacted), count(*), "
                              "count(*) FILTER (WHERE target LIKE '%[REDACTED:%') "
                              "FROM smllm.records").fetchone()
        shipping = conn.execute("SELECT value FROM smllm.meta WHERE key = 'shipping'").fetchone()
    assert counts is not None
    assert shipping is not None
    assert ("redacted", len(SECRETS) * len(PLACES), records) == (shipping[0], counts[0], counts[1])
    assert counts[2] >= len(SECRETS)  # the target column is masked too, not left out
    ok = alice.smllm("verify", "--store", store["auditor"], SID)
    assert (0, f"ok: {SID} on host-alice in {store['auditor']}: {records} stored rows in 1 "
               f"stream(s), {counts[0]} of them redacted, every one shipped by role alice, hash "
               f"chain intact; compared with "
               f"{path}\n") == (ok.returncode, ok.stdout)


def _sql(server: Server, db: str, sql: str) -> None:
    with server.connect(db) as conn:
        conn.execute("SET session_replication_role = replica")  # past the append-only trigger
        conn.execute(sql)


def test_verify_store_finds_an_edited_a_deleted_and_a_cut_row(store: dict[str, Any]) -> None:
    """Redacted rows no longer hash to their journal hash, yet an edit of one (its marker
    swapped for other text), a row deleted inside the stream and rows cut from the end
    of the store are each reported, from the stored rows alone; the edit is also found
    against the local journal."""
    alice, server, db = store["alice"], store["server"], store["db"]
    path = alice.planted()
    assert 0 == alice.smllm("ship", "--to", alice.url, "--all").returncode
    records = len(Path(path).read_text().splitlines())
    with server.connect(db) as conn:
        row = conn.execute("SELECT sequence FROM smllm.records WHERE redacted AND "
                           "session_id = %s ORDER BY sequence LIMIT 1 OFFSET 20",
                           (SID,)).fetchone()
    assert row is not None
    edited = int(row[0])
    _sql(server, db, "UPDATE smllm.records SET line = regexp_replace(line, "
         f"'\\[REDACTED:[a-z_]+\\]', 'hunter2') WHERE session_id = '{SID}' "
         f"AND sequence = {edited}")
    _sql(server, db, f"DELETE FROM smllm.records WHERE session_id = '{SID}' AND sequence = 9")
    _sql(server, db, f"DELETE FROM smllm.records WHERE session_id = '{SID}' "
         f"AND sequence > {records - 2}")
    bad = alice.smllm("verify", "--store", store["auditor"], SID)
    assert (1, [f"FAILED: {SID} on host-alice in {store['auditor']}: 4 problem(s); compared "
                f"with {path}",
                "  main #9: 1 row(s) missing from the store (#9)",
                f"  main #{edited}: stored row was edited: it does not match its link of the "
                "stored-row chain",
                f"  main #{records - 1}: the store's rows end at #{records - 2} but a ship "
                f"stored up to #{records}: 2 row(s) cut from the end of the store",
                f"  main #{edited}: the stored row is not the local record with exactly its "
                "secrets removed"]) == (bad.returncode, bad.stdout.splitlines())


def test_a_raw_store_says_so(postgres: Server, store_db: str, tmp_path: Path) -> None:
    """`store init --raw` makes a store shipped in clear: init, status, ship, verify
    --store, sessions and search all say so, its metadata holds it, and its lines hold the secrets; a redacted
    store that holds rows cannot be turned raw."""
    admin = postgres.url(store_db)
    note = ("raw store: its lines hold every secret in clear (made with `smllm store init "
            "--raw`)")
    init = smllm("store", "init", "--url", admin, "--raw")
    assert (0, note) == (init.returncode, init.stdout.splitlines()[-1])
    assert "; shipping raw" in init.stdout.splitlines()[-2]
    assert 0 == smllm("store", "grant", "alice", "--writer", "--url", admin).returncode
    alice = Dev(tmp_path, "alice", postgres.url(store_db, "alice"))
    path = alice.planted()
    ship = alice.smllm("ship", "--to", alice.url, "--all")
    assert (0, note) == (ship.returncode, ship.stdout.splitlines()[1])
    status = smllm("store", "status", "--url", admin)
    assert ["shipping: raw", note] == status.stdout.splitlines()[-2:]
    assert "raw" == json.loads(smllm("store", "status", "--url", admin, "--json").stdout)[
        "shipping"]
    verify = alice.smllm("verify", "--store", admin, SID)
    assert (0, f"  {note}") == (verify.returncode, verify.stdout.splitlines()[1])
    assert "hash chain intact; compared with " + path in verify.stdout
    listed = [smllm(*argv, "--store", admin, "--json") for argv in (
        ("sessions",), ("search", "--kind", "session.start"))]
    assert [(0, f"smllm: {note}\n", SID)] * 2 == [
        (p.returncode, p.stderr, json.loads(p.stdout.splitlines()[0])["session_id"])
        for p in listed]
    text = _everything(postgres, store_db)
    assert all(any(f in text for f in _forms(s["secret"])) for s in SECRETS[:20])


def test_a_redacted_store_with_rows_is_not_turned_raw(store: dict[str, Any]) -> None:
    """The shipping is chosen before the first ship: `init --raw` on a redacted store that
    already holds rows is refused with the way out, and changes nothing."""
    alice = store["alice"]
    assert "; shipping redacted\n" in store["init"]
    alice.planted()
    assert 0 == alice.smllm("ship", "--to", alice.url, "--all").returncode
    out = smllm("store", "init", "--url", store["admin"], "--raw")
    assert (1, "smllm: error: the team store already holds rows shipped redacted; its "
               "shipping is chosen when it is created (create another store (another "
               "database) for raw shipping)\n") == (out.returncode, out.stderr)
    status = json.loads(smllm("store", "status", "--url", store["admin"], "--json").stdout)
    assert "redacted" == status["shipping"]


def test_a_session_shipped_in_two_parts_chains_on(store: dict[str, Any]) -> None:
    """A session shipped, extended, then shipped again: the second part's rows chain onto
    the first part's stored links, so verify --store finds the whole stream intact."""
    alice = store["alice"]
    path = alice.planted()
    assert 0 == alice.smllm("ship", "--to", alice.url, "--all").returncode
    saved = os.environ.get("SMLLM_HOME")
    os.environ["SMLLM_HOME"] = alice.env["SMLLM_HOME"]
    try:
        append(path, [journal.event("proposed", turn=2, prompt=f"again {SECRETS[0]['text']}")],
               T0 + 60_000)
    finally:
        os.environ["SMLLM_HOME"] = saved or ""
    again = alice.smllm("ship", "--to", alice.url, "--all")
    assert (0, "1 new") == (again.returncode, again.stdout.split(": ")[1].split(",")[0])
    ok = alice.smllm("verify", "--store", store["auditor"], SID)
    assert (0, "ok: ") == (ok.returncode, ok.stdout[:4]), ok.stdout
    assert not any(f in _everything(store["server"], store["db"])
                   for f in _forms(SECRETS[0]["secret"]))
