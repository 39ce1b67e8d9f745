"""``smllm sessions``: journal sessions, newest first, from the index or the team store.

By default the sessions of this folder (and below) on this machine; ``--all`` for every
folder; ``--store`` asks the team store, where ``--user``, ``--host`` and ``--project``
select across the team.
"""

from __future__ import annotations

import argparse
import sys

from smllm import index
from smllm.commands import _listing, _output
from smllm.store import reader


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _listing.add_filters(parser)


def run(args: argparse.Namespace) -> int:
    f = _listing.filters(args)
    url = _listing.store_url(args)
    rows = _listing.query(url, f, index.sessions, reader.sessions)
    if args.json:
        _output.write_lines(r.as_json() for r in rows)
        return 0
    if not rows:
        where = "" if f.project is None else f" in {f.project}"
        hint = " (--all lists every folder)" if url is None and not args.all else ""
        sys.stderr.write(f"no journal sessions{where}{hint}\n")
        return 0
    for r in rows:
        who = f"  {r.user}@{r.host}" if url is not None else ""
        sys.stdout.write(
            f"{_listing.when(r.started_at)}  {r.session_id}{who}  {r.records:>6}  "
            f"{r.termination:<14}  {r.folder or '-'}  {_listing.short(r.first_prompt, 60)}"
            .rstrip() + "\n")
    return 0
