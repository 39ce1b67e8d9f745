"""``smllm reconcile SEQ --outcome applied|not-applied [--session ID|PATH] [--note TEXT]``.

Records the verified outcome of an effect left unknown by a crash: a
``tool_batch.effect.terminal`` (``observed_via: "reconcile"``) for its intent and an
``effect.reconciled`` fact saying who verified it. After it, a re-attempt of that
effect is no longer held.
"""

from __future__ import annotations

import argparse
import os
import sys

from smllm.audit import picker
from smllm.journal import lookup, recovery


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sequence", metavar="SEQ", type=int,
                        help="the sequence of the unknown effect's side_effect_intent")
    parser.add_argument("--outcome", required=True, choices=("applied", "not-applied"),
                        help="what you verified: the effect happened, or it did not")
    parser.add_argument("--session", metavar="ID|PATH",
                        help="the host session (default: the Claude Code session this runs "
                             "in, else the most recent session of this folder)")
    parser.add_argument("--note", metavar="TEXT", help="how the outcome was verified")


def run(args: argparse.Namespace) -> int:
    host = os.environ.get("CLAUDE_CODE_SESSION_ID")
    if args.session:
        log = lookup.resolve(args.session)
    elif host:
        log = lookup.resolve(host)
    else:
        log = picker.latest()
    by = "agent" if os.environ.get("CLAUDECODE") else "user"
    done = recovery.record_outcome(log, args.sequence, args.outcome, verified_by=by,
                                    note=args.note)
    e = done.effect
    sys.stdout.write(
        f"reconciled effect {e.sequence} ({e.operation} {e.summary()}): "
        f"{args.outcome.replace('-', ' ')}, verified by {by}; recorded at sequence "
        f"{done.terminal_sequence} and {done.reconciled_sequence}\n"
    )
    return 0
