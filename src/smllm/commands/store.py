"""``smllm store init|status|rls|grant``: set up and inspect the team store."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    url_help = ("the store (default: SMLLM_STORE_URL or [store] url); a role that may create "
                "schemas and roles; no password in it")
    init = sub.add_parser("init", help="create or migrate the schema and the roles")
    init.add_argument("--url", metavar="URL", help=url_help)
    init.add_argument("--rls", action="store_true",
                      help="turn row-level security on: a writer reads only its own sessions")
    status = sub.add_parser("status", help="the schema version, row-level security, counts")
    status.add_argument("--url", metavar="URL", help=url_help)
    status.add_argument("--json", action="store_true", help="print JSON")
    rls = sub.add_parser("rls", help="turn row-level security on or off")
    rls.add_argument("state", choices=("on", "off"))
    rls.add_argument("--url", metavar="URL", help=url_help)
    grant = sub.add_parser("grant", help="let a login role ship (writer) or read all (auditor)")
    grant.add_argument("role", metavar="ROLE", help="a PostgreSQL login role (created if missing, "
                       "without a password: set one with psql's \\password)")
    kind = grant.add_mutually_exclusive_group(required=True)
    kind.add_argument("--writer", action="store_true", help="insert-only shipping")
    kind.add_argument("--auditor", action="store_true", help="read-only, every session")
    grant.add_argument("--url", metavar="URL", help=url_help)


def run(args: argparse.Namespace) -> int:
    from smllm.store import schema, settings  # noqa: PLC0415
    from smllm.store.connection import connect  # noqa: PLC0415

    url = settings.resolve(args.url, "--url")
    shown = settings.shown(url)
    with connect(url) as conn:
        if args.action == "init":
            done = schema.migrate(conn)
            if args.rls:
                schema.set_rls(conn, True)
            for version, name in done:
                sys.stdout.write(f"applied migration {version}: {name}\n")
            state = "on" if schema.rls_enabled(conn) else "off"
            verb = "created" if done and done[0][0] == 1 else (
                "migrated" if done else "already up to date")
            sys.stdout.write(f"team store {shown}: schema version {schema.LATEST} {verb}; "
                             f"roles {schema.WRITER}, {schema.AUDITOR}; row-level security "
                             f"{state}\n")
            return 0
        schema.check(conn)
        if args.action == "rls":
            schema.set_rls(conn, args.state == "on")
            sys.stdout.write(f"row-level security {args.state} in {shown}\n")
            return 0
        if args.action == "grant":
            group = schema.WRITER if args.writer else schema.AUDITOR
            created = schema.grant(conn, args.role, group)
            made = "created login role" if created else "login role"
            sys.stdout.write(f"{made} {args.role} is now a member of {group}\n")
            return 0
        with conn.cursor() as cur:
            cur.execute("SELECT (SELECT count(*) FROM smllm.sessions), "
                        "(SELECT count(*) FROM smllm.records), "
                        "pg_size_pretty(pg_total_relation_size('smllm.records'))")
            row = cur.fetchone()
        sessions, records, size = row if row else (0, 0, "0")
        info = {"store": shown, "schema_version": schema.applied(conn),
                "row_level_security": schema.rls_enabled(conn), "sessions": sessions,
                "records": records, "records_size": size, "store_id": schema.store_id(conn)}
        if args.json:
            sys.stdout.write(json.dumps(info) + "\n")
        else:
            for key, value in info.items():
                sys.stdout.write(f"{key}: {value}\n")
    return 0
