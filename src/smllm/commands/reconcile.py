"""``smllm reconcile SEQ --outcome applied|not-applied [--journal ID|PATH] [--evidence TEXT]``.

Records the verified outcome of an effect left unknown by a crash: a
``tool_batch.effect.terminal`` (``observed_via: "reconcile"``) for its intent and an
``effect.reconciled`` fact saying who verified it. After it, a re-attempt of that
effect is no longer held.

Inside Claude Code (``CLAUDECODE`` set: the agent's shell) the outcome is recorded as the
agent's claim (``verified_by: "agent"``), with its evidence; a person runs it from a
shell of their own. The agent's plain ``smllm reconcile …`` runs outside the sandbox
(``excludedCommands``: the journal is read-only inside it), and smllm's hook admits only
that plain form (:func:`smllm.gate.protect.agent_reconcile`), so the agent cannot pass
its claim off as a person's (no variable or wrapper can change what the command sees).
"""

from __future__ import annotations

import argparse
import os
import sys

from smllm.base.errors import UsageError
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
    parser.add_argument("--note", "--evidence", metavar="TEXT", dest="note",
                        help="how the outcome was verified (the evidence: what you checked)")
    _output.add_json_flag(parser, "what was recorded")


def run(args: argparse.Namespace) -> int:
    by = "agent" if os.environ.get("CLAUDECODE") else "user"
    if by == "agent" and (args.journal or args.last):
        raise UsageError("inside Claude Code, smllm reconcile records outcomes in the session "
                         "it runs in only", "leave out --journal and --last; a person reconciles "
                         "another session from a shell of their own")
    log = _select.journal_of(args, default="host-or-latest", purpose="reconcile")
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
