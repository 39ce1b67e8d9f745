"""``smllm export [--last | --journal ID|PATH] [--out FILE] [--redacted]`` and
``smllm export --schema``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smllm.audit import export
from smllm.commands import _select


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _select.add_journal_choice(parser, session_alias=True)
    parser.add_argument("--out", metavar="FILE", type=Path,
                        help="where to write (default: trajectory-<timestamp>.json here): a "
                             "file is replaced whole; a FIFO, a device or /dev/stdout is "
                             "written into (its path then goes to stderr); a symbolic link "
                             "to a file is refused")
    parser.add_argument("--redacted", action="store_true",
                        help="remove secrets from payload strings (share-safe)")
    parser.add_argument("--schema", action="store_true",
                        help="print the JSON Schema of the export document and exit")


def run(args: argparse.Namespace) -> int:
    if args.schema:
        from smllm.audit import export_schema  # noqa: PLC0415 - pydantic: --schema only

        sys.stdout.write(export_schema.schema_text())
        return 0

    default = "latest" if args.out is not None else "picker-or-latest"
    log = _select.journal_of(args, default=default, purpose="export")
    written = export.export(log, args.out, redacted=args.redacted)
    if written.streamed:  # stdout may be where the document went: say where on stderr
        sys.stderr.write(f"smllm: wrote the export to {written.path}\n")
    else:
        sys.stdout.write(f"{written.path}\n")
    return 0
