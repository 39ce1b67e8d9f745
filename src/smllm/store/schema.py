"""The team store's schema: versioned migrations, the roles, row-level security.

``smllm store init --url URL`` applies every migration the store lacks, in order, each
in its own transaction, under an advisory lock (two inits at once are safe). The
applied versions are rows of ``smllm.schema_migrations``. Commands that use the store
refuse a store whose schema is older (run init) or newer (upgrade smllm) than theirs.

Roles (group roles: grant them to the developers' and auditors' login roles):

* ``smllm_writer``: INSERT on ``records`` and ``sessions`` (not on the columns that
  say who shipped: those default to ``current_user``), SELECT to find conflicts; no
  UPDATE, DELETE or TRUNCATE, and a trigger refuses those to everyone, owner included.
* ``smllm_auditor``: SELECT on everything.

Shipping (``smllm.meta`` row ``shipping``): ``redacted`` by default, ``raw`` only for a
store made with ``smllm store init --raw`` (:mod:`smllm.store.redaction`).

A session belongs to the database role that first shipped it (its ``smllm.sessions``
row's ``db_user``): a trigger refuses any row of ``records`` or ``heads`` that another
role adds to it, whatever the row-level security (:data:`ENFORCED`). Rows another role
added before that rule existed (a store older than version 3) stay, and ``verify --store``
names them with their role.

Row-level security (``smllm store rls on``): a writer then reads and writes only the
rows it shipped (``db_user = current_user``); an auditor still reads everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from smllm.base.errors import StoreError
from smllm.store.redaction import Shipping, mode_of

if TYPE_CHECKING:
    import psycopg

WRITER = "smllm_writer"
AUDITOR = "smllm_auditor"
LOCK_KEY = 0x736D6C6C6D  # "smllm": the advisory lock of migrations
TABLES = ("records", "sessions", "heads")

_V1 = """
CREATE SCHEMA IF NOT EXISTS smllm;
CREATE TABLE smllm.meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO smllm.meta VALUES ('store_id', md5(random()::text || clock_timestamp()::text));

CREATE TABLE smllm.sessions (
  host          text NOT NULL,
  session_id    text NOT NULL,
  os_user       text NOT NULL,
  project       text,
  git_remote    text,
  smllm_version text,
  started_at    timestamptz,
  db_user       name NOT NULL DEFAULT current_user,
  shipped_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host, session_id)
);
CREATE INDEX sessions_started ON smllm.sessions (started_at);
CREATE INDEX sessions_user ON smllm.sessions (os_user, started_at);
CREATE INDEX sessions_project ON smllm.sessions (project);

CREATE TABLE smllm.records (
  host        text NOT NULL,
  session_id  text NOT NULL,
  stream      text NOT NULL,
  sequence    bigint NOT NULL,
  hash        text NOT NULL,
  recorded_at timestamptz,
  kind        text,
  tool        text,
  target      text,
  decision    text,
  rule        text,
  outcome     text,
  tool_use_id text,
  line        text,
  line_bytes  bytea,
  db_user     name NOT NULL DEFAULT current_user,
  shipped_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host, session_id, stream, sequence),
  CHECK ((line IS NULL) <> (line_bytes IS NULL))
);
CREATE INDEX records_decision ON smllm.records (decision, recorded_at)
  WHERE decision IS NOT NULL;
CREATE INDEX records_terminal ON smllm.records (host, session_id, stream, tool_use_id)
  WHERE kind = 'tool_batch.effect.terminal';

CREATE FUNCTION smllm.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'smllm: % on %.% refused: the team store is append-only',
    TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON smllm.records
  FOR EACH ROW EXECUTE FUNCTION smllm.refuse_change();
CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON smllm.records
  FOR EACH STATEMENT EXECUTE FUNCTION smllm.refuse_change();
CREATE TRIGGER sessions_append_only BEFORE UPDATE OR DELETE ON smllm.sessions
  FOR EACH ROW EXECUTE FUNCTION smllm.refuse_change();
CREATE TRIGGER sessions_no_truncate BEFORE TRUNCATE ON smllm.sessions
  FOR EACH STATEMENT EXECUTE FUNCTION smllm.refuse_change();

CREATE VIEW smllm.effects {view_options} AS
SELECT i.host, i.session_id, i.stream,
       s.os_user, s.project, s.git_remote,
       i.sequence AS intent_sequence, i.recorded_at, i.tool_use_id,
       i.tool, i.target, i.rule,
       i.decision AS stamp,
       CASE WHEN (i.decision LIKE 'defer:%' OR i.decision LIKE 'ask:%')
                 AND t.decision IS NOT NULL
            THEN t.decision ELSE i.decision END AS authorization,
       t.outcome, t.sequence AS terminal_sequence, t.recorded_at AS ended_at
FROM smllm.records i
JOIN smllm.sessions s ON s.host = i.host AND s.session_id = i.session_id
LEFT JOIN smllm.records t
  ON t.host = i.host AND t.session_id = i.session_id AND t.stream = i.stream
 AND t.kind = 'tool_batch.effect.terminal' AND t.tool_use_id = i.tool_use_id
WHERE i.kind = 'side_effect_intent';
COMMENT ON VIEW smllm.effects IS
  'One row per side effect: its intent joined with its terminal record (docs/team-store.md)';

DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'smllm_writer') THEN
    CREATE ROLE smllm_writer NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'smllm_auditor') THEN
    CREATE ROLE smllm_auditor NOLOGIN;
  END IF;
END $$;
GRANT USAGE ON SCHEMA smllm TO smllm_writer, smllm_auditor;
GRANT SELECT ON smllm.meta, smllm.schema_migrations TO smllm_writer, smllm_auditor;
GRANT SELECT ON smllm.records, smllm.sessions, smllm.effects TO smllm_writer, smllm_auditor;
GRANT INSERT (host, session_id, os_user, project, git_remote, smllm_version, started_at)
  ON smllm.sessions TO smllm_writer;
GRANT INSERT (host, session_id, stream, sequence, hash, recorded_at, kind, tool, target,
              decision, rule, outcome, tool_use_id, line, line_bytes)
  ON smllm.records TO smllm_writer;

CREATE POLICY writer_own ON smllm.records FOR ALL TO smllm_writer
  USING (db_user = current_user) WITH CHECK (db_user = current_user);
CREATE POLICY auditor_all ON smllm.records FOR SELECT TO smllm_auditor USING (true);
CREATE POLICY writer_own ON smllm.sessions FOR ALL TO smllm_writer
  USING (db_user = current_user) WITH CHECK (db_user = current_user);
CREATE POLICY auditor_all ON smllm.sessions FOR SELECT TO smllm_auditor USING (true);
"""

_V2 = """
ALTER TABLE smllm.records ADD COLUMN redacted boolean NOT NULL DEFAULT false,
                          ADD COLUMN chain text;
COMMENT ON COLUMN smllm.records.redacted IS
  'the line is the journal line with its secrets masked (it no longer hashes to hash)';
COMMENT ON COLUMN smllm.records.chain IS
  'the stored-row chain: sha256 of the previous row''s chain, hash, redacted and line';
GRANT INSERT (redacted, chain) ON smllm.records TO smllm_writer;

CREATE TABLE smllm.heads (
  host        text NOT NULL,
  session_id  text NOT NULL,
  stream      text NOT NULL,
  sequence    bigint NOT NULL,
  chain       text,
  db_user     name NOT NULL DEFAULT current_user,
  shipped_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (host, session_id, stream, sequence)
);
COMMENT ON TABLE smllm.heads IS
  'the last row of a journal each ship stored: rows cut from the end of records show';
CREATE TRIGGER heads_append_only BEFORE UPDATE OR DELETE ON smllm.heads
  FOR EACH ROW EXECUTE FUNCTION smllm.refuse_change();
CREATE TRIGGER heads_no_truncate BEFORE TRUNCATE ON smllm.heads
  FOR EACH STATEMENT EXECUTE FUNCTION smllm.refuse_change();
GRANT SELECT ON smllm.heads TO smllm_writer, smllm_auditor;
GRANT INSERT (host, session_id, stream, sequence, chain) ON smllm.heads TO smllm_writer;
CREATE POLICY writer_own ON smllm.heads FOR ALL TO smllm_writer
  USING (db_user = current_user) WITH CHECK (db_user = current_user);
CREATE POLICY auditor_all ON smllm.heads FOR SELECT TO smllm_auditor USING (true);
DO $$ BEGIN
  IF (SELECT relrowsecurity FROM pg_class WHERE oid = 'smllm.records'::regclass) THEN
    ALTER TABLE smllm.heads ENABLE ROW LEVEL SECURITY;
  END IF;
END $$;

-- a store that already holds rows holds them raw: it stays a raw store
INSERT INTO smllm.meta SELECT 'shipping',
  CASE WHEN EXISTS (SELECT FROM smllm.records) THEN 'raw' ELSE 'redacted' END;
"""

# A session's rows come from its owner only: one check per statement over the rows it
# inserted (a transition table; a foreign key checked each row and doubled the time of a
# COPY on this machine, the statement trigger added about a fifth). Invoker's rights: under
# row-level security a writer sees only its own sessions, so another's is refused too.
_V3 = """
CREATE FUNCTION smllm.session_owner_only() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  bad record;
BEGIN
  SELECT n.host, n.session_id, n.db_user, s.db_user AS owner INTO bad
  FROM (SELECT DISTINCT host, session_id, db_user FROM new_rows) n
  LEFT JOIN smllm.sessions s ON s.host = n.host AND s.session_id = n.session_id
  WHERE s.db_user IS DISTINCT FROM n.db_user LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'smllm: session % of host % belongs to %: role % may not add rows to it',
      bad.session_id, bad.host,
      CASE WHEN bad.owner IS NULL THEN 'another role (or has no session row)'
           ELSE 'role ' || bad.owner || ', which first shipped it' END,
      bad.db_user USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION smllm.session_owner_only() IS
  'a session''s rows are added only by the role that first shipped it (its sessions row)';
CREATE TRIGGER records_session_owner AFTER INSERT ON smllm.records
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION smllm.session_owner_only();
CREATE TRIGGER heads_session_owner AFTER INSERT ON smllm.heads
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION smllm.session_owner_only();
"""

#: (version, name, SQL): append only; never edit a released migration
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "records, sessions, effects view, roles, policies", _V1),
    (2, "redacted shipping, the stored-row chain, heads", _V2),
    (3, "a session's rows come only from the role that first shipped it", _V3),
)
#: what the store's database enforces on every role (``store init`` says it)
ENFORCED = (
    "append-only: no row is updated, deleted or truncated, by any role, the owner included",
    "a session's rows are added only by the database role that first shipped it",
)
LATEST = MIGRATIONS[-1][0]


def applied(conn: psycopg.Connection[Any]) -> int:
    """The store's schema version (0: not initialised)."""
    with conn.cursor() as cur:
        cur.execute("SELECT to_regclass('smllm.schema_migrations') IS NOT NULL")
        row = cur.fetchone()
        if not row or not row[0]:
            return 0
        cur.execute("SELECT coalesce(max(version), 0) FROM smllm.schema_migrations")
        found = cur.fetchone()
    return int(found[0]) if found else 0


def migrate(conn: psycopg.Connection[Any]) -> list[tuple[int, str]]:
    """Apply the missing migrations; return those applied."""
    done: list[tuple[int, str]] = []
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        cur.execute("CREATE SCHEMA IF NOT EXISTS smllm")
        cur.execute("CREATE TABLE IF NOT EXISTS smllm.schema_migrations (version integer "
                    "PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL "
                    "DEFAULT now())")
        cur.execute("SELECT coalesce(max(version), 0) FROM smllm.schema_migrations")
        row = cur.fetchone()
        current = int(row[0]) if row else 0
        if current > LATEST:
            raise StoreError(f"the store's schema is version {current}, newer than this smllm "
                             f"knows ({LATEST})", "upgrade smllm")
        cur.execute("SHOW server_version_num")
        version_row = cur.fetchone()
        invoker = int(version_row[0]) >= 150000 if version_row else False
        for version, name, sql in MIGRATIONS:
            if version <= current:
                continue
            text = sql.replace("{view_options}",
                               "WITH (security_invoker = true)" if invoker else "")
            cur.execute(text.encode())
            cur.execute("INSERT INTO smllm.schema_migrations (version, name) VALUES (%s, %s)",
                        (version, name))
            done.append((version, name))
    return done


def check(conn: psycopg.Connection[Any]) -> None:
    """Refuse a store whose schema is not the one this smllm writes."""
    found = applied(conn)
    if found == LATEST:
        return
    if found == 0:
        raise StoreError("the team store has no smllm schema",
                         "create it with `smllm store init --url URL`")
    if found < LATEST:
        raise StoreError(f"the team store's schema is version {found}, older than {LATEST}",
                         "migrate it with `smllm store init --url URL`")
    raise StoreError(f"the team store's schema is version {found}, newer than this smllm "
                     f"knows ({LATEST})", "upgrade smllm")


def set_rls(conn: psycopg.Connection[Any], on: bool) -> None:
    """Turn row-level security on (a writer reads only its own rows) or off."""
    verb = "ENABLE" if on else "DISABLE"
    with conn.transaction(), conn.cursor() as cur:
        for table in TABLES:
            cur.execute(f"ALTER TABLE smllm.{table} {verb} ROW LEVEL SECURITY".encode())


def rls_enabled(conn: psycopg.Connection[Any]) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT bool_and(relrowsecurity) FROM pg_class WHERE oid IN "
                    "('smllm.records'::regclass, 'smllm.sessions'::regclass)")
        row = cur.fetchone()
    return bool(row and row[0])


def grant(conn: psycopg.Connection[Any], role: str, group: str) -> bool:
    """Make login role ``role`` a member of ``group``; create it (LOGIN, no password)
    when missing. Returns whether it was created."""
    from psycopg import sql  # noqa: PLC0415 - the team extra, to migrate only

    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
        created = cur.fetchone() is None
        if created:
            cur.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        cur.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group), sql.Identifier(role)))
    return created


def shipping(conn: psycopg.Connection[Any]) -> Shipping:
    """How the store is shipped to: ``redacted`` (secrets masked before they leave the
    machine) or ``raw`` (lines in clear, made with ``store init --raw``)."""
    with conn.cursor() as cur:
        cur.execute("SELECT value FROM smllm.meta WHERE key = 'shipping'")
        row = cur.fetchone()
    return mode_of(row[0] if row else None)


def set_shipping(conn: psycopg.Connection[Any], mode: Shipping) -> None:
    """Make the store raw or redacted; refused once it holds rows shipped the other way
    (a raw store's rows stay in clear; a redacted one's raw turn would mix them)."""
    current = shipping(conn)
    if current == mode:
        return
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT EXISTS (SELECT FROM smllm.records)")
        row = cur.fetchone()
        if row and row[0]:
            raise StoreError(f"the team store already holds rows shipped {current}; its "
                             "shipping is chosen when it is created",
                             "create another store (another database) for "
                             f"{mode} shipping")
        cur.execute("UPDATE smllm.meta SET value = %s WHERE key = 'shipping'", (mode,))


def store_id(conn: psycopg.Connection[Any]) -> str:
    """The store's identity (ship cursors are kept per store)."""
    with conn.cursor() as cur:
        cur.execute("SELECT value FROM smllm.meta WHERE key = 'store_id'")
        row = cur.fetchone()
    if not row:
        raise StoreError("the team store has no identity row", "re-run `smllm store init`")
    return str(row[0])
