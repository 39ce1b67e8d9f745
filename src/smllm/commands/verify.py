"""``smllm verify [SESSION|PATH]`` / ``--export FILE``: hash chain and invariants of one
journal, or of the envelopes of an export.

The first word says what was found: ``ok`` (chain and invariants hold, the session ended
in order), ``unfinished`` (they hold, but the log has no orderly end: an effect started
and never finished, or no session end: a crash, or a session still running; exit 0, the
evidence is intact), ``FAILED`` (exit 1: a broken chain or invariant, or a file that is
not a journal, said what it is instead)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smllm.base.errors import UsageError
from smllm.commands import _output, _select
from smllm.journal.verify import Anchor, Report, verify
from smllm.store import address, audit, redaction, schema
from smllm.store.connection import connect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _select.add_journal_choice(parser, positional=True)
    _output.add_json_flag(parser, "the report")
    parser.add_argument("--store", metavar="URL", nargs="?", const="",
                        help="re-check the session's chain from the team store's rows and "
                             "compare them with the local journal (without URL: "
                             "SMLLM_STORE_URL or [store] url)")
    parser.add_argument("--export", metavar="FILE", type=Path,
                        help="re-check the hash chain of the envelopes in FILE, a raw "
                             "document written by `smllm export`")
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
    masked = f", {report.redacted} of them redacted" if report.redacted else ""
    raw = (f"  {redaction.RAW_NOTE}\n" if report.shipping == "raw" else "")
    if report.ok:
        sys.stdout.write(f"ok: {where}: {report.rows} stored rows in {report.streams} "
                         f"stream(s){masked}, every one shipped by role {report.owner}, "
                         f"hash chain intact{local}\n{raw}")
        return 0
    sys.stdout.write(f"FAILED: {where}: {len(report.findings)} problem(s){local}\n")
    for finding in report.findings:
        sys.stdout.write(f"  {finding.text()}\n")
    sys.stdout.write(raw)
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
    if args.export is not None:
        return _run_export(args)
    if args.store is not None:
        return _run_store(args)
    if args.host is not None:
        raise UsageError("--host applies to --store only")
    path = _select.journal_of(args, default="latest", purpose="verify")
    stored = audit.head_anchor(path)  # a second head outside the machine, when configured
    report = verify(path, [stored] if stored is not None else [])
    if args.json:
        _output.write({"path": str(path), **_report_json(report),
                       "anchors": [a.as_json() for a in report.anchors]})
        return 0 if report.ok else 1
    code = _print(str(path), report)
    if stored is not None and report.not_journal is None:
        sys.stdout.write(_store_line(stored, report) + "\n")
    return code


def _report_json(report: Report) -> dict[str, object]:
    return {
        "ok": report.ok, "records": report.records, "lines": report.lines,
        "torn": report.torn, "repaired": report.repaired, "missing": report.missing,
        "problems": [{"line": p.line, "what": p.what} for p in report.problems],
        "more_problems": report.more, "not_journal": report.not_journal,
        "orderly_end": report.ok and not report.unfinished, "unfinished": report.unfinished,
        "open_effects": [{"tool_use_id": e.tool_use_id, "sequence": e.sequence, "line": e.line}
                         for e in report.open_effects],
    }


def _run_export(args: argparse.Namespace) -> int:
    if args.journal or args.last or args.store is not None or args.host is not None:
        raise UsageError("--export verifies an export file on its own",
                         "give either --export FILE or a journal, not both")
    from smllm.audit.exportverify import verify_export  # noqa: PLC0415 - --export only

    result = verify_export(args.export)
    if args.json:
        _output.write({"export": str(args.export), "ok": result.ok, "refused": result.refused,
                       "records": result.records, "streams": [
                           {"stream": s.stream, **_report_json(s.report),
                            "header_problems": s.header_problems, "sha256": s.sha256,
                            "exact": s.exact} for s in result.streams]})
        return 0 if result.ok else 1
    if result.refused is not None:
        sys.stdout.write(f"FAILED: {args.export}: {result.refused}\n")
        return 1
    code = 0
    for s in result.streams:
        where = f"{args.export} (stream {s.stream})"
        code = max(code, _print(where, s.report, extra=s.header_problems))
    if code == 0:
        exact = all(s.exact for s in result.streams)
        sys.stdout.write("  the events are the logs' exact bytes: their sha256 is the one "
                         "the export's header records\n" if exact else
                         "  some lines are not records, so the events' bytes are not "
                         "compared with the header's sha256\n")
    return code


def _print(where: str, report: Report, extra: list[str] | None = None) -> int:
    notes = []
    if report.torn:
        notes.append(f"{report.torn} torn line(s) at the end (a crash mid-write; nothing lost)")
    if report.repaired:
        notes.append(f"{report.repaired} torn line(s) repaired by the next writer")
    first = report.first()
    if first is None and not extra:
        note = f"; {'; '.join(notes)}" if notes else ""
        facts = f"{report.records} records, hash chain intact, invariants hold{note}"
        unfinished = report.unfinished
        if not unfinished:
            sys.stdout.write(f"ok: {where}: {facts}\n")
            return 0
        sys.stdout.write(f"unfinished: {where}: {facts}; no orderly end: "
                         f"{'; '.join(unfinished)}\n")
        sys.stdout.write("  the session crashed or is still running: after a crash, "
                         "`smllm resume` continues it and `smllm reconcile SEQ` records what "
                         "an unknown effect did\n")
        return 0
    if first is None:
        sys.stdout.write(f"FAILED: {where}: {extra[0] if extra else ''}\n")
        for text in (extra or [])[1:]:
            sys.stdout.write(f"  also {where}: {text}\n")
        return 1
    sys.stdout.write(f"FAILED: {where}:{first.line}: {first.what}\n")
    for p in report.problems[1:6]:
        sys.stdout.write(f"  also {where}:{p.line}: {p.what}\n")
    left = len(report.problems) - 6 + report.more
    if left > 0:
        sys.stdout.write(f"  … and {left} more\n")
    for text in extra or []:
        sys.stdout.write(f"  also {where}: {text}\n")
    return 1
