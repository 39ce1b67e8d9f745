"""``smllm ledger EXPORT [--plain] [--html FILE]``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from smllm.audit import export, ledger
from smllm.base.errors import ExportError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("export", metavar="EXPORT", type=Path,
                        help="a document written by `smllm export`")
    parser.add_argument("--plain", action="store_true",
                        help="no colour, even on a terminal (the form to pipe into tools)")
    parser.add_argument("--html", metavar="FILE", type=Path,
                        help="also write a self-contained HTML page to FILE")


def _colour(plain: bool) -> bool:
    return not plain and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def run(args: argparse.Namespace) -> int:
    if args.html is not None:
        doc = export.read(args.export)
        try:
            fd = os.open(args.html, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "w", encoding="utf-8") as fh:  # private, like the journal
                for chunk in ledger.render_html(doc):
                    fh.write(chunk + "\n")
        except OSError as exc:
            raise ExportError(f"could not write {args.html}: {exc.strerror}",
                              "choose a writable path for --html") from None
        sys.stdout.write(f"{args.html.absolute()}\n")
        return 0
    doc = export.read(args.export)
    out = sys.stdout
    for line in ledger.render_text(doc, colour=_colour(args.plain)):
        out.write(line + "\n")
    return 0
