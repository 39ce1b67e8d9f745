"""``smllm sessions``: Claude Code sessions (their journals), newest first, from the index
or the team store.

By default the sessions of this folder (and below) on this machine; ``--all`` for every
folder; ``--store`` asks the team store, where ``--user``, ``--host`` and ``--project``
select across the team. (State-machine sessions, ``sm-…``, are ``smllm session list``.)

On a terminal the rows come under a header naming the columns; piped or redirected, the
rows alone (one session a line, for ``grep``, ``head`` and ``cut``; ``--json`` for
scripts that need the fields).
"""

from __future__ import annotations

import argparse
import sys

from smllm import index
from smllm.commands import _listing, _output
from smllm.index import SessionRow
from smllm.store import reader

DESCRIPTION = (
    "List Claude Code sessions, newest first: one row per session smllm journaled (its "
    "start, its id, how many records its journal holds, how it ended, its folder and "
    "its first prompt). State-machine sessions (sm-…) are `smllm session list`.")
#: the columns, as the header names them
HEADER = ("started (UTC)", "session", "user@host", "records", "termination", "folder",
          "first prompt")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.epilog = ("On a terminal the rows come under a header naming the columns; piped "
                     "or redirected, the rows alone. `termination`: the exit reason of the "
                     "journal's last session.end (clean, crash_inferred, subagent_stop), or "
                     "open (running, or crashed and not resumed yet); `smllm serve` marks "
                     "the sessions that crashed and were resumed.")
    _listing.add_filters(parser)


def _table(rows: list[SessionRow], *, store: bool, header: bool) -> list[str]:
    """The lines: each row's cells, the columns aligned (folders too under a header)."""
    # a session another agent CLI drove names it beside its id (Claude Code's: nothing)
    cells = [[_listing.when(r.started_at),
              r.session_id + (f" ({r.harness})" if r.harness else ""), f"{r.user}@{r.host}",
              str(r.records), r.termination, r.folder or "-",
              _listing.short(r.first_prompt, 60)] for r in rows]
    if header:
        cells.insert(0, list(HEADER))
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    widths[3], widths[4] = max(widths[3], 6), max(widths[4], 14)
    if not header:
        widths[5] = 0  # piped: a folder is not padded
    out = []
    for c in cells:
        parts = [c[0].ljust(widths[0]), c[1].ljust(widths[1])]
        parts += [c[2].ljust(widths[2])] if store else []
        parts += [c[3].rjust(widths[3]), c[4].ljust(widths[4]), c[5].ljust(widths[5]), c[6]]
        out.append("  ".join(parts).rstrip())
    return out


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
    for line in _table(rows, store=url is not None, header=sys.stdout.isatty()):
        sys.stdout.write(line + "\n")
    return 0
