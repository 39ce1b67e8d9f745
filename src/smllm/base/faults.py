"""Fault points for crash tests: ``SMLLM_FAULT=<point>`` SIGKILLs the process there.

The journal's write path calls :func:`point` at each step, so a test can kill a real
hook process at exactly that step and check that every reader still accepts the log.
"""

from __future__ import annotations

from smllm.base import osfast as os

POINTS = ("open", "locked", "before-write", "mid-write", "after-write", "after-fsync", "state")
_SIGKILL = 9


def armed(name: str) -> bool:
    return os.environ.get("SMLLM_FAULT") == name


def point(name: str) -> None:
    """Die at once (no cleanup, no flush) if the fault ``name`` is armed."""
    if os.environ.get("SMLLM_FAULT") == name:
        os.kill(os.getpid(), _SIGKILL)
