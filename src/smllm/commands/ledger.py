"""``smllm ledger [EXPORT | --last | --session ID|PATH] [--effects] [--plain] [--html FILE]
[--json]``: from an export, or straight from a journal (chosen as ``smllm export`` chooses
it), without exporting first."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from smllm.audit import export, ledger, outfile
from smllm.base.errors import ExportError, UsageError
from smllm.commands import _output, _select


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("export", metavar="EXPORT", type=Path, nargs="?",
                        help="a document written by `smllm export` (or choose a journal "
                             "with --last or --session)")
    _select.add_journal_choice(
        parser, session_alias=True,
        last_help="the most recent journal of this folder (else the most recent of all), "
                  "read straight from the journal")
    parser.add_argument("--effects", action="store_true",
                        help="only the side effects: approvals and the calls that may change "
                             "something (no model calls, no reads), in the compact form "
                             "(without the what-ran column)")
    parser.add_argument("--plain", action="store_true",
                        help="no colour, even on a terminal (the form to pipe into tools)")
    parser.add_argument("--html", metavar="FILE", type=Path,
                        help="also write a self-contained HTML page to FILE (its path goes "
                             "to stderr): a file is replaced whole; a FIFO, a device or "
                             "/dev/stdout is written into; a symbolic link to a file is "
                             "refused")
    _output.add_json_flag(parser, "one object per row", lines=True)


def _colour(plain: bool) -> bool:
    return not plain and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _source(args: argparse.Namespace) -> Callable[[], export.Document]:
    if args.export is not None:
        if args.journal or args.last:
            raise UsageError("give an export or a journal (--last, --session), not both")
        export.read(args.export)  # refuses what is not an export before anything is printed
        return ledger.from_export(args.export)
    if not (args.journal or args.last):
        raise UsageError("smllm ledger needs an export or a journal",
                         "smllm ledger EXPORT, smllm ledger --last, or smllm ledger "
                         "--session ID|PATH")
    return ledger.from_journal(_select.journal_of(args, default="latest", purpose="ledger"))


def _write_html(args: argparse.Namespace, source: Callable[[], export.Document]) -> None:
    try:
        # private, like the journal; a file is replaced whole, a FIFO or device written into
        with outfile.open_text(args.html) as (fh, written):
            for chunk in ledger.render_html(source, effects=args.effects):
                fh.write(chunk + "\n")
    except OSError as exc:
        raise ExportError(f"could not write {args.html}: {exc.strerror or exc}",
                          "choose a writable path for --html") from None
    sys.stderr.write(f"smllm: wrote the HTML ledger to {written.path}\n")


def run(args: argparse.Namespace) -> int:
    if args.json and args.plain:
        raise UsageError("--json and --plain are two forms of the output", "give one of them")
    source = _source(args)
    if args.json:
        _output.write_lines(r.data() for r in ledger.iter_rows(source, effects=args.effects))
    else:
        out = sys.stdout
        for line in ledger.render_text(source, colour=_colour(args.plain),
                                       effects=args.effects):
            out.write(line + "\n")
    if args.html is not None:
        sys.stdout.flush()
        _write_html(args, source)
    return 0
