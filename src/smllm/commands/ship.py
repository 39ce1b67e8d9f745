"""``smllm ship [--to URL] [--session ID | --all] [--follow]``: journals to the team store.

Idempotent: records already stored are recognised and skipped; a stored record whose
hash differs from the local one is reported as a conflict and kept as stored. Without
``--session`` or ``--all``, the sessions of this folder (and below) are shipped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from smllm import index
from smllm.base.errors import SessionNotFound, UsageError
from smllm.commands import _output
from smllm.store import address, redaction, shipper
from smllm.store.address import shown
from smllm.store.shipper import Report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--to", metavar="URL",
                        help="the store (default: SMLLM_STORE_URL or [store] url); no password "
                             "in it: use ~/.pgpass or PGPASSWORD")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--journal", "--session", dest="session", metavar="ID",
                       help="one Claude Code session: its id or a unique prefix (--session is "
                            "accepted as another name)")
    which.add_argument("--all", action="store_true", help="every session on this machine")
    parser.add_argument("--follow", action="store_true",
                        help="keep shipping what the journals gain until interrupted")
    parser.add_argument("--interval", metavar="SECONDS", type=float, default=2.0,
                        help="with --follow: the pause between two passes (default 2)")
    parser.add_argument("--recheck", action="store_true",
                        help="ignore the cursors: send every record again (the store keeps "
                             "what it has and reports every conflict)")
    _output.add_json_flag(parser, "the report (with --follow: one a pass)")


def _selection(args: argparse.Namespace) -> set[str] | None:
    if args.all:
        return None
    if args.session:
        row = index.session(args.session)
        if row is None:
            raise SessionNotFound(f"no session {args.session!r} on this machine",
                                  "list them with `smllm sessions --all`")
        return {row.session_id}
    return {r.session_id for r in index.sessions(index.Filters(project=os.getcwd()))}


def _print(report: object, url: str, as_json: bool) -> None:
    assert isinstance(report, Report)
    if as_json:
        _output.write({"store": shown(url), **report.as_json()})
        return
    sys.stdout.write(
        f"shipped {report.sent} record(s) of {report.read} journal(s) to {shown(url)}: "
        f"{report.inserted} new, {report.duplicates} already stored, "
        f"{report.conflict_count} conflict(s)\n")
    if report.shipping == "raw":
        sys.stdout.write(f"{redaction.RAW_NOTE}\n")
    for c in report.conflicts:
        sys.stdout.write(c.text() + "\n")
    if report.conflict_count > len(report.conflicts):
        sys.stdout.write(f"… and {report.conflict_count - len(report.conflicts)} more\n")
    for sid, why in report.failed.items():
        sys.stdout.write(f"not shipped: {sid}: the store refused it: {why} (the other "
                         "sessions shipped; this one is tried again at the next ship)\n")


def run(args: argparse.Namespace) -> int:
    if args.interval <= 0:
        raise UsageError("--interval must be more than 0")
    url = address.resolve(args.to, "--to")
    failed = False
    while True:
        report = shipper.ship(url, sessions=_selection(args), recheck=args.recheck)
        if not args.follow or report.sent or report.conflict_count or report.failed:
            _print(report, url, args.json)
        failed = failed or bool(report.conflict_count or report.failed)
        if not args.follow:
            break
        sys.stdout.flush()
        time.sleep(args.interval)
    return 1 if failed else 0
