"""Options shared by ``smllm sessions`` and ``smllm search``: the filters and the store,
and asking the index or the store they name."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from smllm.base import clock
from smllm.base.errors import UsageError
from smllm.commands import _output
from smllm.index.model import Filters, parse_time
from smllm.store import address, redaction, schema
from smllm.store.connection import connect

Row = TypeVar("Row")


def add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", metavar="URL", nargs="?", const="",
                        help="ask the team store (PostgreSQL) instead of this machine's index; "
                             "without URL: SMLLM_STORE_URL or [store] url")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--all", action="store_true",
                       help="every folder (default: this folder and below, on this machine)")
    where.add_argument("--project", "--folder", metavar="DIR", dest="project",
                       help="sessions that ran in DIR or below it")
    parser.add_argument("--journal", "--session", dest="session", metavar="ID",
                        help="one Claude Code session: its id or a unique prefix (--session "
                             "is accepted as another name)")
    parser.add_argument("--user", metavar="NAME", help="sessions of this OS user")
    parser.add_argument("--host", metavar="NAME", help="sessions of this machine")
    parser.add_argument("--since", metavar="WHEN",
                        help="from this time: 2026-01-05, 2026-01-05T09:00 (UTC), or an age: "
                             "30m, 12h, 7d, 2w")
    parser.add_argument("--until", metavar="WHEN", help="before this time (same forms)")
    parser.add_argument("--limit", metavar="N", type=int, help="at most N rows")

    _output.add_json_flag(parser, "the rows", lines=True)


def _when(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    try:
        return parse_time(text, clock.now_ms())
    except ValueError:
        raise UsageError(f"{option}: not a time: {text!r}",
                         "use 2026-01-05, 2026-01-05T09:00 (UTC) or an age like 12h, 7d") from None


def filters(args: argparse.Namespace, **record: Any) -> Filters:
    """The :class:`Filters` the options name (``record``: the search-only fields)."""
    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more", "0 means no limit")
    project = args.project
    if project is not None:
        project = os.path.abspath(os.path.expanduser(project))
    elif not args.all and args.store is None and args.session is None:
        project = os.getcwd()
    return Filters(session=args.session, project=project, user=args.user, host=args.host,
                   since_ms=_when(args.since, "--since"), until_ms=_when(args.until, "--until"),
                   limit=args.limit or None, **record)


def store_url(args: argparse.Namespace) -> str | None:
    """The store to ask, or None for the local index."""
    if args.store is None:
        return None
    return address.resolve(args.store or None, "--store")


def query(url: str | None, f: Filters, local: Callable[[Filters], list[Row]],
          store: Callable[[Any, Filters], list[Row]]) -> list[Row]:
    """The rows ``f`` selects: from the local index (``url`` None), else from the team
    store at ``url`` (its schema checked first; a raw store says so on stderr)."""
    if url is None:
        return local(f)
    with connect(url) as conn:
        schema.check(conn)
        if schema.shipping(conn) == "raw":  # on stderr: --json's lines stay JSON
            sys.stderr.write(f"smllm: {redaction.RAW_NOTE}\n")
        return store(conn, f)


def when(at: str | None) -> str:
    return (at or "")[:16].replace("T", " ") or "-" * 16


def short(text: str | None, width: int) -> str:
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
