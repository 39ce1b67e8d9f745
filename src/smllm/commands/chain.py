"""``smllm chain EXPORT [--action ID]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smllm.audit import approvals, export
from smllm.base.errors import SmllmError
from smllm.commands import _output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("export", metavar="EXPORT", type=Path,
                        help="a document written by `smllm export`")
    parser.add_argument("--action", metavar="ID",
                        help="only the chain of this pending_action_id")
    _output.add_json_flag(parser, "one object per chain", lines=True)


def run(args: argparse.Namespace) -> int:
    doc = export.read(args.export)
    found = list(approvals.chains(doc))
    if args.action is not None:
        picked = [c for c in found if c.pending_action_id == args.action]
        if not picked:
            known = ", ".join(c.pending_action_id for c in found) or "none"
            raise SmllmError(f"no approval chain {args.action!r} in {args.export}",
                             f"pending_action_ids in this export: {known}")
        found = picked
    if not found:
        raise SmllmError(
            f"no approval records in {args.export}",
            "every action passed by static policy or approvals were off (yolo); give the "
            "model an action the policy escalates, such as rm -rf on a file",
        )
    if args.json:
        _output.write_lines(c.data() for c in found)
        return 0
    sys.stdout.write("\n\n".join(c.render() for c in found) + "\n")
    return 0
