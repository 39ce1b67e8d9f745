"""``smllm sessions``: journal sessions, newest first, from the index or the team store.

By default the sessions of this folder (and below) on this machine; ``--all`` for every
folder; ``--store`` asks the team store, where ``--user``, ``--host`` and ``--project``
select across the team.
"""

from __future__ import annotations

import argparse
import sys

from smllm.commands import _listing, _output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _listing.add_filters(parser)


def run(args: argparse.Namespace) -> int:
    f = _listing.filters(args)
    url = _listing.store_url(args)
    if url is None:
        from smllm import index  # noqa: PLC0415

        rows = index.sessions(f)
    else:
        from smllm.store import queries  # noqa: PLC0415
        from smllm.store.connection import connect  # noqa: PLC0415

        with connect(url) as conn:
            from smllm.store import schema  # noqa: PLC0415

            schema.check(conn)
            rows = queries.sessions(conn, f)
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
