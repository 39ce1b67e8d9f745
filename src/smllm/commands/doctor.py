"""``smllm doctor [--project DIR] [--json]``: what is installed where, and would the hooks fire."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from smllm.commands import _output
from smllm.setup import DOCTORS, doctor


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", metavar="DIR",
                        help="the project whose settings to check (default: the cwd)")
    parser.add_argument("--harness", choices=("claude", *DOCTORS), default="claude",
                        help="check Claude Code's side (default), Codex's (its hooks present "
                             "and trusted, the project trusted), Copilot's (its hook file, "
                             "the folder trusted, the sandbox, which guarantees hold) or "
                             "Gemini CLI's (its hooks present, switched on and sandboxed, "
                             "and which guarantees hold)")
    _output.add_json_flag(parser, "{project, findings: [{status, text}], errors, warnings}")


def run(args: argparse.Namespace) -> int:
    project = Path(args.project).expanduser().absolute() if args.project else Path.cwd()
    if args.harness != "claude":
        host = importlib.import_module(DOCTORS[args.harness])
        found = [doctor.Finding(status, text) for status, text in host.diagnose(project)]
        findings = [doctor.smllm_itself(), *found, *doctor.tripwire(project, args.harness),
                    *doctor.store_folders()]
    else:
        findings = doctor.diagnose(project)
    errors = sum(f.status == "error" for f in findings)
    warnings = sum(f.status == "warn" for f in findings)
    if args.json:
        _output.write({"project": str(project),
                       "findings": [{"status": f.status, "text": f.text.strip()}
                                    for f in findings],
                       "errors": errors, "warnings": warnings})
        return 1 if errors else 0
    for f in findings:
        sys.stdout.write(f"{f.status:<6} {f.text}\n")
    sys.stdout.write(f"{errors} error(s), {warnings} warning(s)\n")
    return 1 if errors else 0
