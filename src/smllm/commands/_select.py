"""Choosing a session on the command line: one helper, two kinds of session, two flags.

* A **journal** is what the hooks write for one Claude Code session: chosen with
  ``--journal ID|PATH`` (a Claude Code session id, a unique prefix of one, or a path to
  a ``session.jsonl``) or ``--last``; ``smllm resume`` and ``smllm verify`` also take it
  as their positional argument. Commands: ``export``, ``resume``, ``reconcile``, ...
* An **smllm session** is a state-machine session (``sm-nqvfvw``): chosen with
  ``--session KEY`` (seed 001's flag), else ``$SMLLM_SESSION``, else the smllm session
  bound to the Claude Code session the command runs in. Commands: ``fire``, ``status``,
  ``machine draw``, ...

``--session`` on a journal command is refused with a message naming ``--journal``, so
the same flag never means two things, with one exception kept for compatibility:
``smllm export --session ID|PATH`` is the spelling of the audit recipe smllm's export
follows (``export --session c7dfaecc --out a.json``), so ``export`` accepts it as
another name for ``--journal``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from smllm.base.errors import UsageError

__all__ = [
    "HOST_DEFAULTS",
    "add_journal_choice",
    "add_machine_session",
    "journal_of",
    "machine_session",
]

#: what a journal command does when no journal is named
HOST_DEFAULTS = ("latest", "picker-or-latest", "picker-or-error", "host-or-latest")
JOURNAL_HELP = ("a Claude Code session's journal: its session id (or a unique prefix) or "
                "the path of its session.jsonl")


class _WrongSessionFlag(argparse.Action):
    """``--session`` given to a command that takes a journal: say which flag is meant."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        raise UsageError(
            f"--session names an smllm (state-machine) session, not a Claude Code session's "
            f"journal ({parser.prog} --session {values})",
            f"choose the journal with {self.const} or --last; `{parser.prog} --help`")


def add_journal_choice(parser: argparse.ArgumentParser, *, positional: bool = False,
                       last_help: str | None = None, session_alias: bool = False) -> None:
    """``--last`` and ``--journal ID|PATH`` (or a positional ``JOURNAL``), exclusive.

    ``session_alias`` accepts ``--session ID|PATH`` as another name for ``--journal``
    (``smllm export`` only, for the recipe's spelling); otherwise ``--session`` is refused.
    """
    which = parser.add_mutually_exclusive_group()
    if positional:
        which.add_argument("journal", nargs="?", metavar="JOURNAL", help=JOURNAL_HELP)
    elif session_alias:
        which.add_argument("--journal", "--session", dest="journal", metavar="ID|PATH",
                           help=JOURNAL_HELP + " (--session is accepted as another name)")
    else:
        which.add_argument("--journal", metavar="ID|PATH", help=JOURNAL_HELP)
    which.add_argument("--last", action="store_true",
                       help=last_help or "the most recent journal of this folder (else the "
                                         "most recent of all)")
    if not session_alias:
        how = f"`{parser.prog} ID|PATH`" if positional else "--journal ID|PATH"
        parser.add_argument("--session", action=_WrongSessionFlag, help=argparse.SUPPRESS,
                            const=how)


def journal_of(args: argparse.Namespace, *, default: str, purpose: str) -> Path:
    """The journal the command line names, or the command's ``default``:

    ``latest``            the most recent journal of this folder, else of all
    ``picker-or-latest``  ask on a terminal, else ``latest``
    ``picker-or-error``   ask on a terminal, else a usage error (``smllm resume``)
    ``host-or-latest``    the Claude Code session this runs in, else ``latest``
    """
    from smllm.audit import picker  # noqa: PLC0415 - the journal commands only
    from smllm.journal import lookup  # noqa: PLC0415 - the journal commands only

    if default not in HOST_DEFAULTS:
        raise ValueError(f"unknown default {default!r}")
    named = getattr(args, "journal", None)
    if named:
        return lookup.resolve(named)
    if getattr(args, "last", False) or default == "latest":
        return picker.latest()
    if default == "host-or-latest":
        host = os.environ.get("CLAUDE_CODE_SESSION_ID")
        return lookup.resolve(host) if host else picker.latest()
    if picker.interactive():
        return picker.pick(purpose)
    if default == "picker-or-error":
        raise UsageError(f"smllm {purpose} requires an interactive terminal; pass --last or a "
                         "session uuid for non-interactive " + purpose)
    return picker.latest()


def add_machine_session(parser: argparse.ArgumentParser, *, what: str = "") -> None:
    """``--session KEY``: the smllm session (default ``$SMLLM_SESSION``)."""
    parser.add_argument("--session", metavar="KEY",
                        help=f"the smllm session{what}, e.g. sm-nqvfvw (default: "
                             "$SMLLM_SESSION, else the one bound to this Claude Code session)")


def machine_session(args: argparse.Namespace) -> str | None:
    """The smllm session key the command line (or the environment) names, if any."""
    from smllm.machine import session  # noqa: PLC0415 - the machine commands only

    return session.resolve_key(getattr(args, "session", None), os.environ)
