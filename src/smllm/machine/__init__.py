"""State machines (seed 001): loader, engine, audit, and the hooks' view of them."""

from __future__ import annotations

import os

from smllm import paths

#: the harness name in bindings and audit lines
HARNESS = "claude"


def binding_file(harness: str, host: str) -> str:
    """Where the smllm session key bound to a host session is kept.

    Light on purpose: the hooks check it before importing the rest of the package.
    """
    return os.path.join(paths.state_root(), "bindings", paths.check_id(harness, "harness"),
                        f"{paths.check_id(host, 'host session id')}.key")


def is_bound(host: str) -> bool:
    """Is this Claude Code session bound to an smllm session (was a machine ever in play)?"""
    try:
        return os.path.exists(binding_file(HARNESS, host))
    except ValueError:
        return False
