"""The one error hierarchy. ``cli.error_handler`` renders every one of them.

A user-facing error says what is wrong, how to fix it, and where (``file:line``)
when a file is at fault::

    smllm: error: .smllm/policy.toml:3: unknown mode 'strict' (use one of: ...)
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


class ConfigError(SmllmError, ValueError):
    """A configuration file is malformed or inconsistent."""


class PolicyError(ConfigError):
    """The approval policy cannot be loaded."""


class MachineDefinitionError(ConfigError):
    """A state machine file is invalid."""


class SessionNotFound(SmllmError, LookupError):
    """No journal or smllm session matches what the user named."""


class InvalidSessionId(SmllmError, ValueError):
    """A session id from input would escape the store (traversal, odd characters)."""


class JournalError(SmllmError, OSError):
    """The journal could not be read or written."""


class JournalCorrupt(JournalError):
    """The journal fails verification: the message names the first bad line."""


class InstallError(SmllmError):
    """Installing into Claude Code's settings is not possible as asked."""


class ExportError(SmllmError):
    """An export could not be produced or written."""


class StoreError(SmllmError):
    """The team store cannot be reached, or refused what was asked of it."""


class SandboxUnavailable(SmllmError):
    """No sandbox can run a program that smllm must not run bare (a command guard)."""
