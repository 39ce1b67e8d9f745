"""``smllm verify [SESSION|PATH]``: hash chain and invariants of one journal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smllm.base.errors import UsageError
from smllm.commands import _output, _select
from smllm.journal.verify import Anchor, Report, verify
from smllm.store import address, audit, schema
from smllm.store.connection import connect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _select.add_journal_choice(parser, positional=True)
    _output.add_json_flag(parser, "the report")
    parser.add_argument("--store", metavar="URL", nargs="?", const="",
                        help="re-check the session's chain from the team store's rows and "
                             "compare them with the local journal (without URL: "
                             "SMLLM_STORE_URL or [store] url)")
    parser.add_argument("--host", metavar="NAME",
                        help="with --store: the machine the session ran on, when its id is "
                             "not enough")


def _run_store(args: argparse.Namespace) -> int:
    if args.last:
        raise UsageError("--last applies to a local journal, not to --store",
                         "name the stored session: smllm verify --store [URL] SESSION")
    if (args.journal is None and args.store and "://" not in args.store
            and "=" not in args.store):
        args.journal, args.store = args.store, ""  # `verify --store SESSION`: the configured one
    if not args.journal:
        raise UsageError("verify --store needs a SESSION id",
                         "list the stored ones with `smllm sessions --store`")
    url = address.resolve(args.store or None, "--store")
    with connect(url) as conn:
        schema.check(conn)
        report = audit.verify(conn, args.journal, args.host)
    if args.json:
        _output.write({"store": address.shown(url), **report.as_json()})
        return 0 if report.ok else 1
    where = f"{report.session_id} on {report.host} in {address.shown(url)}"
    local = f"; compared with {report.local}" if report.local else ""
    if report.ok:
        sys.stdout.write(f"ok: {where}: {report.rows} stored rows in {report.streams} "
                         f"stream(s), hash chain intact{local}\n")
        return 0
    sys.stdout.write(f"FAILED: {where}: {len(report.findings)} problem(s){local}\n")
    for finding in report.findings:
        sys.stdout.write(f"  {finding.text()}\n")
    return 1


def _store_line(anchor: Anchor, report: Report) -> str:
    """What the team store said of the journal's head, as one line."""
    if not anchor.available:
        head = any(a.kind == "head" and a.available for a in report.anchors)
        then = ("the end of the log was checked against its head file only" if head else
                "nothing outside the log vouches for its end, so records cut from it "
                "cannot be seen")
        return f"  the team store is unavailable: {anchor.error}; {then}"
    if not anchor.sequence:
        return f"  {anchor.where} holds no record of this journal yet (not shipped)"
    return f"  {anchor.where} holds this journal up to sequence {anchor.sequence}"


def run(args: argparse.Namespace) -> int:
    if args.store is not None:
        return _run_store(args)
    if args.host is not None:
        raise UsageError("--host applies to --store only")
    path = _select.journal_of(args, default="latest", purpose="verify")
    stored = audit.head_anchor(path)  # a second head outside the machine, when configured
    report = verify(path, [stored] if stored is not None else [])
    if args.json:
        _output.write({
            "path": str(path), "ok": report.ok, "records": report.records, "lines": report.lines,
            "torn": report.torn, "repaired": report.repaired, "missing": report.missing,
            "problems": [{"line": p.line, "what": p.what} for p in report.problems],
            "anchors": [a.as_json() for a in report.anchors],
        })
        return 0 if report.ok else 1
    code = _print(path, report)
    if stored is not None:
        sys.stdout.write(_store_line(stored, report) + "\n")
    return code


def _print(path: Path, report: Report) -> int:
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
