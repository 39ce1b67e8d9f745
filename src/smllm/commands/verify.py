"""``smllm verify [SESSION|PATH]``: hash chain and invariants of one journal."""

from __future__ import annotations

import argparse
import sys

from smllm.commands import _output
from smllm.journal import lookup
from smllm.journal.verify import verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "session", nargs="?", metavar="SESSION|PATH",
        help="host session id (or unique prefix) or a path to session.jsonl; default: the latest",
    )
    _output.add_json_flag(parser, "the report")


def run(args: argparse.Namespace) -> int:
    path = lookup.resolve(args.session) if args.session else lookup.latest().path
    report = verify(path)
    if args.json:
        _output.write({
            "path": str(path), "ok": report.ok, "records": report.records, "lines": report.lines,
            "torn": report.torn, "repaired": report.repaired,
            "problems": [{"line": p.line, "what": p.what} for p in report.problems],
        })
        return 0 if report.ok else 1
    notes = []
    if report.torn:
        notes.append(f"{report.torn} torn line(s) at the end (a crash mid-write; nothing lost)")
    if report.repaired:
        notes.append(f"{report.repaired} torn line(s) repaired by the next writer")
    first = report.first()
    if first is None:
        extra = f"; {'; '.join(notes)}" if notes else ""
        sys.stdout.write(f"ok: {path}: {report.records} records, hash chain intact, "
                         f"invariants hold{extra}\n")
        return 0
    sys.stdout.write(f"FAILED: {path}:{first.line}: {first.what}\n")
    for p in report.problems[1:6]:
        sys.stdout.write(f"  also {path}:{p.line}: {p.what}\n")
    if len(report.problems) > 6:
        sys.stdout.write(f"  … and {len(report.problems) - 6} more\n")
    return 1
