"""``smllm export [--last | --session ID|PATH] [--out FILE] [--redacted]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smllm.audit import export, picker
from smllm.journal import lookup


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--last", action="store_true",
                       help="the most recent session of this folder (else of the store)")
    which.add_argument("--session", metavar="ID|PATH",
                       help="a host session id (or unique prefix) or a path to session.jsonl")
    parser.add_argument("--out", metavar="FILE", type=Path,
                        help="where to write (default: trajectory-<timestamp>.json here)")
    parser.add_argument("--redacted", action="store_true",
                        help="remove secrets from payload strings (share-safe)")


def run(args: argparse.Namespace) -> int:
    if args.session:
        log = lookup.resolve(args.session)
    elif args.last or args.out is not None or not picker.interactive():
        log = picker.latest()
    else:
        log = picker.pick("export")
    written = export.export(log, args.out, redacted=args.redacted)
    sys.stdout.write(f"{written}\n")
    return 0
