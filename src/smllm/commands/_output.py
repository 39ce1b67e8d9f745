"""The one way a command prints data for scripts: ``--json``.

One style for every command:

* compact JSON (no spaces), UTF-8 with non-ASCII characters kept, keys in the order
  the command built them (seed 001's ``smllm fire --json`` and audit lines are this);
* a **report** (one thing: ``doctor``, ``verify``, ``status``, ``resume --check``, ...)
  is one JSON object on one line (:func:`write`);
* a **list** (sessions, machines, ledger rows, audit lines, ...) is JSON Lines: one
  object per line, streamed as it is produced, nothing before or after; an empty list
  prints nothing (:func:`write_lines`);
* under ``--json`` nothing else goes to stdout: messages go to stderr, errors are the
  usual ``smllm: error: ...`` line on stderr with its exit status.

Light on purpose (``smllm fire --json`` runs at every step of an agent): only ``sys`` and
smllm's ``jsonfast`` are imported.
"""

from __future__ import annotations

import sys

from smllm.base import jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable
    from typing import TextIO

__all__ = ["add_json_flag", "dumps", "write", "write_lines"]


def add_json_flag(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str,
                  *, lines: bool = False) -> None:
    """``--json``: print ``what`` as one JSON object (or, with ``lines``, JSON Lines)."""
    form = "as JSON Lines, one object per line" if lines else "as one JSON object"
    parser.add_argument("--json", action="store_true", help=f"print {what} {form}")


def dumps(value: object) -> str:
    """The one serialization: compact, UTF-8, one line."""
    return jsonfast.dumps(value)


def write(value: object, out: TextIO | None = None) -> None:
    """Print one report: a JSON object on one line."""
    stream = sys.stdout if out is None else out
    stream.write(jsonfast.dumps(value) + "\n")


def write_lines(items: Iterable[object], out: TextIO | None = None) -> int:
    """Print a list as JSON Lines, one item per line; return how many were printed."""
    stream = sys.stdout if out is None else out
    count = 0
    for item in items:
        stream.write(jsonfast.dumps(item) + "\n")
        count += 1
    return count
