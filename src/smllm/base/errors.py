"""The one error hierarchy. ``cli.error_handler`` renders every one of them.

A user-facing error says what is wrong, how to fix it, and where (``file:line``)
when a file is at fault::

    smllm: error: .smllm/policy.toml:3: unknown mode 'strict' (use one of: ...)

The classes a hook can raise are defined in :mod:`smllm.base.errors_hot` (the modules on
the hooks' hot path import them from there) and re-exported here; import every class from
this module anywhere else.
"""

from __future__ import annotations

from smllm.base.errors_hot import InvalidSessionId, JournalError, SmllmError, UsageError

__all__ = ["ConfigError", "ExportError", "InstallError", "InvalidSessionId", "JournalCorrupt",
           "JournalError", "MachineDefinitionError", "PolicyError", "SandboxUnavailable",
           "SessionNotFound", "SmllmError", "StoreError", "UsageError"]


class ConfigError(SmllmError, ValueError):
    """A configuration file is malformed or inconsistent."""


class PolicyError(ConfigError):
    """The approval policy cannot be loaded."""


class MachineDefinitionError(ConfigError):
    """A state machine file is invalid."""


class SessionNotFound(SmllmError, LookupError):
    """No journal or smllm session matches what the user named."""


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
