"""``smllm resume [--last | SESSION] [--check]``.

Prints the reconciliation (committed versus unknown effects) and, without
``--check``, re-opens the session in Claude Code: ``claude --resume <host id>`` in the
folder it ran in. The SessionStart hook then records the crash and the resume.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from smllm.audit import picker
from smllm.base.errors import SmllmError, UsageError
from smllm.journal import lookup, recovery

NOT_INTERACTIVE = ("smllm resume requires an interactive terminal; pass --last or a session "
                   "uuid for non-interactive resume")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("session", nargs="?", metavar="SESSION",
                       help="a host session id (or unique prefix) or a path to session.jsonl")
    which.add_argument("--last", action="store_true",
                       help="the most recent session of this folder (else of the store)")
    parser.add_argument("--check", action="store_true",
                        help="only print the reconciliation; do not start Claude Code")


def run(args: argparse.Namespace) -> int:
    if args.session:
        log = lookup.resolve(args.session)
    elif args.last:
        log = picker.latest()
    elif picker.interactive():
        log = picker.pick("resume")
    else:
        raise UsageError(NOT_INTERACTIVE)
    report = recovery.reconciliation(log)
    sys.stdout.write(recovery.report_text(report))
    if args.check:
        return 0
    claude = shutil.which("claude")
    if claude is None:
        raise SmllmError("claude is not on PATH",
                         "install Claude Code, or run `smllm resume --check` for the report only")
    folder = report.cwd or os.getcwd()
    if not os.path.isdir(folder):
        raise SmllmError(f"the session's folder {folder} no longer exists",
                         f"recreate it, or run `claude --resume {report.session_id}` yourself")
    sys.stdout.write(f"re-opening {report.session_id} in Claude Code ({folder})\n")
    sys.stdout.flush()
    os.chdir(folder)
    os.execv(claude, [claude, "--resume", report.session_id])  # noqa: S606 - replace ourselves
