"""``smllm reconcile SEQ --outcome applied|not-applied [--journal ID|PATH] [--note TEXT]``.

Records the verified outcome of an effect left unknown by a crash: a
``tool_batch.effect.terminal`` (``observed_via: "reconcile"``) for its intent and an
``effect.reconciled`` fact saying who verified it. After it, a re-attempt of that
effect is no longer held.
"""

from __future__ import annotations

import argparse
import os
import sys

from smllm.commands import _output, _select
from smllm.journal import recovery


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sequence", metavar="SEQ", type=int,
                        help="the sequence of the unknown effect's side_effect_intent")
    parser.add_argument("--outcome", required=True, choices=("applied", "not-applied"),
                        help="what you verified: the effect happened, or it did not")
    _select.add_journal_choice(
        parser, last_help="the most recent journal of this folder (the default outside "
                          "Claude Code; inside it, the default is the session it runs in)")
    parser.add_argument("--note", metavar="TEXT", help="how the outcome was verified")
    _output.add_json_flag(parser, "what was recorded")


def run(args: argparse.Namespace) -> int:
    log = _select.journal_of(args, default="host-or-latest", purpose="reconcile")
    by = "agent" if os.environ.get("CLAUDECODE") else "user"
    done = recovery.record_outcome(log, args.sequence, args.outcome, verified_by=by,
                                    note=args.note)
    e = done.effect
    if args.json:
        _output.write({"journal": str(log), "sequence": e.sequence, "operation": e.operation,
                       "summary": e.summary(), "outcome": args.outcome.replace("-", "_"),
                       "verified_by": by, "note": args.note,
                       "terminal_sequence": done.terminal_sequence,
                       "reconciled_sequence": done.reconciled_sequence})
        return 0
    sys.stdout.write(
        f"reconciled effect {e.sequence} ({e.operation} {e.summary()}): "
        f"{args.outcome.replace('-', ' ')}, verified by {by}; recorded at sequence "
        f"{done.terminal_sequence} and {done.reconciled_sequence}\n"
    )
    return 0
