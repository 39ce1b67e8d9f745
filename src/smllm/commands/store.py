"""``smllm store init|status|rls|grant``: set up and inspect the team store."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from smllm.commands import _output
from smllm.store import address, redaction, schema
from smllm.store.connection import connect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    url_help = ("the store (default: SMLLM_STORE_URL or [store] url); a role that may create "
                "schemas and roles; no password in it")
    init = sub.add_parser("init", help="create or migrate the schema and the roles")
    init.add_argument("--url", metavar="URL", help=url_help)
    init.add_argument("--rls", action="store_true",
                      help="turn row-level security on: a writer reads only its own sessions")
    init.add_argument("--raw", action="store_true",
                      help="ship journal lines in clear, secrets included (default: every "
                           "secret is masked before it leaves the machine); chosen before "
                           "the first ship, said wherever the store is read")
    _output.add_json_flag(init, "the result")
    status = sub.add_parser("status", help="the schema version, row-level security, counts")
    status.add_argument("--url", metavar="URL", help=url_help)
    _output.add_json_flag(status, "the store's state")
    rls = sub.add_parser("rls", help="turn row-level security on or off")
    rls.add_argument("state", choices=("on", "off"))
    rls.add_argument("--url", metavar="URL", help=url_help)
    _output.add_json_flag(rls, "the result")
    grant = sub.add_parser("grant", help="let a login role ship (writer) or read all (auditor)")
    grant.add_argument("role", metavar="ROLE", help="a PostgreSQL login role (created if missing, "
                       "without a password: set one with psql's \\password)")
    kind = grant.add_mutually_exclusive_group(required=True)
    kind.add_argument("--writer", action="store_true", help="insert-only shipping")
    kind.add_argument("--auditor", action="store_true", help="read-only, every session")
    grant.add_argument("--url", metavar="URL", help=url_help)
    _output.add_json_flag(grant, "the result")


def _say(args: argparse.Namespace, report: dict[str, Any], text: str) -> None:
    if args.json:
        _output.write(report)
    else:
        sys.stdout.write(text)


def _init(conn: Any, args: argparse.Namespace, shown: str) -> None:
    done = schema.migrate(conn)
    if args.raw:
        schema.set_shipping(conn, "raw")
    if args.rls:
        schema.set_rls(conn, True)
    rls_on = schema.rls_enabled(conn)
    shipping = schema.shipping(conn)
    verb = "created" if done and done[0][0] == 1 else (
        "migrated" if done else "already up to date")
    text = "".join(f"applied migration {v}: {n}\n" for v, n in done)
    text += "".join(f"enforced: {rule}\n" for rule in schema.ENFORCED)
    text += (f"team store {shown}: schema version {schema.LATEST} {verb}; roles "
             f"{schema.WRITER}, {schema.AUDITOR}; row-level security "
             f"{'on' if rls_on else 'off'}; shipping {shipping}\n")
    if shipping == "raw":
        text += f"{redaction.RAW_NOTE}\n"
    _say(args, {"store": shown, "schema_version": schema.LATEST,
                "applied": [{"version": v, "name": n} for v, n in done],
                "row_level_security": rls_on, "shipping": shipping,
                "enforced": list(schema.ENFORCED)}, text)


def _status(conn: Any, args: argparse.Namespace, shown: str) -> None:
    with conn.cursor() as cur:
        cur.execute("SELECT (SELECT count(*) FROM smllm.sessions), "
                    "(SELECT count(*) FROM smllm.records), "
                    "pg_size_pretty(pg_total_relation_size('smllm.records'))")
        row = cur.fetchone()
    sessions, records, size = row if row else (0, 0, "0")
    info = {"store": shown, "schema_version": schema.applied(conn),
            "row_level_security": schema.rls_enabled(conn), "sessions": sessions,
            "records": records, "records_size": size, "store_id": schema.store_id(conn),
            "shipping": schema.shipping(conn)}
    text = "".join(f"{key}: {value}\n" for key, value in info.items())
    if info["shipping"] == "raw":
        text += f"{redaction.RAW_NOTE}\n"
    _say(args, info, text)


def run(args: argparse.Namespace) -> int:
    url = address.resolve(args.url, "--url")
    shown = address.shown(url)
    with connect(url) as conn:
        if args.action == "init":
            _init(conn, args, shown)
            return 0
        schema.check(conn)
        if args.action == "rls":
            on = args.state == "on"
            schema.set_rls(conn, on)
            _say(args, {"store": shown, "row_level_security": on},
                 f"row-level security {args.state} in {shown}\n")
        elif args.action == "grant":
            group = schema.WRITER if args.writer else schema.AUDITOR
            created = schema.grant(conn, args.role, group)
            made = "created login role" if created else "login role"
            _say(args, {"role": args.role, "group": group, "created": created},
                 f"{made} {args.role} is now a member of {group}\n")
        else:
            _status(conn, args, shown)
    return 0
