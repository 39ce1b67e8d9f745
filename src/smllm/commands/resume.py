"""``smllm resume [--last | JOURNAL] [--check [--json]]``.

Prints the reconciliation (committed versus unknown effects) and, without
``--check``, re-opens the session in Claude Code: ``claude --resume <host id>`` in the
folder it ran in. The SessionStart hook then records the crash and the resume.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from smllm.base.errors import SmllmError
from smllm.commands import _output, _select
from smllm.journal import recovery


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _select.add_journal_choice(parser, positional=True)
    parser.add_argument("--check", action="store_true",
                        help="only print the reconciliation; do not start Claude Code")
    _output.add_json_flag(parser, "the reconciliation (implies --check)")


def run(args: argparse.Namespace) -> int:
    log = _select.journal_of(args, default="picker-or-error", purpose="resume")
    report = recovery.reconciliation(log)
    if args.json:
        _output.write(recovery.report_data(report))
        return 0
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
