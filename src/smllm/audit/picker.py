"""Choosing a session: the TTY picker shared by ``smllm export`` and ``smllm resume``.

``choose()`` decides between the three ways a command names its session: an explicit
id or path, ``--last`` (the most recent session of this folder, else of the store),
or, on an interactive terminal, a numbered list read from the keyboard.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from smllm.base import clock
from smllm.base.errors import SessionNotFound, UsageError
from smllm.journal import lookup

LIST_LIMIT = 20


def interactive() -> bool:
    """Both stdin and stdout are terminals (a pipe or a redirect is not)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


@dataclass(frozen=True)
class Choice:
    session_id: str
    path: Path
    when: str
    cwd: str
    prompt: str


def _choice(s: lookup.StoredSession) -> Choice:
    when = clock.iso_utc(int(s.mtime * 1000))[:16].replace("T", " ")
    return Choice(s.session_id, s.path, when, s.cwd or "", s.first_prompt or "")


def latest(cwd: str | None = None) -> Path:
    """The most recent session in ``cwd`` if there is one, else the most recent overall."""
    here = cwd if cwd is not None else os.getcwd()
    try:
        return lookup.latest(here).path
    except SessionNotFound:
        return lookup.latest().path


def render(choices: list[Choice]) -> str:
    lines = []
    for i, c in enumerate(choices, start=1):
        prompt = c.prompt if len(c.prompt) <= 50 else c.prompt[:49] + "…"
        lines.append(f"{i:>3}  {c.when}  {c.session_id}  {c.cwd}  {prompt}".rstrip())
    return "\n".join(lines) + "\n"


def pick(purpose: str, *, stdin: TextIO | None = None, out: TextIO | None = None) -> Path:
    """Ask on the terminal which session to use; return its journal."""
    stdin = stdin or sys.stdin
    out = out or sys.stderr
    choices = [_choice(s) for s in lookup.sessions(LIST_LIMIT)]
    if not choices:
        lookup.latest()  # raises the "no journal" error
    out.write(f"Sessions, most recent first ({purpose}):\n")
    out.write(render(choices))
    while True:
        out.write(f"Choose a session [1-{len(choices)}, Enter = 1, q = quit]: ")
        out.flush()
        answer = stdin.readline()
        if not answer or answer.strip().lower() in ("q", "quit"):
            raise UsageError("no session chosen", "name one with --journal ID or use --last")
        text = answer.strip() or "1"
        if text.isdigit() and 1 <= int(text) <= len(choices):
            return choices[int(text) - 1].path
        out.write(f"not a choice: {text!r}\n")
