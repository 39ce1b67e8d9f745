"""The error classes a hook can raise, in a module of their own.

They are part of :mod:`smllm.base.errors`, the one error hierarchy (import them from there
anywhere off the hooks' hot path). The modules a hook loads import them from here, so a
hook does not create the other classes (about 0.15 M instructions each, ``type_new``'s
slot fix-ups, on every tool call).
"""

from __future__ import annotations


class SmllmError(Exception):
    """An error the user can act on: rendered as one line, exit status 1."""

    exit_code = 1

    def __init__(self, what: str, fix: str | None = None, *, where: str | None = None) -> None:
        self.what = what
        self.fix = fix
        self.where = where
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        if self.fix:
            text += f" ({self.fix})"
        return text


class UsageError(SmllmError):
    """The command line itself is wrong: exit status 2."""

    exit_code = 2


class InvalidSessionId(SmllmError, ValueError):
    """A session id from input would escape the store (traversal, odd characters)."""


class JournalError(SmllmError, OSError):
    """The journal could not be read or written."""


# their public home: tracebacks, doctests and pickles name them as smllm.base.errors's
for _cls in (SmllmError, UsageError, InvalidSessionId, JournalError):
    _cls.__module__ = "smllm.base.errors"
del _cls
