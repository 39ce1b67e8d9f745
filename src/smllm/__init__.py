"""smllm: make a Claude Code session accountable and steerable.

The package keeps its import cheap: hooks import it on every tool call, so the
version is resolved lazily through ``__getattr__``.
"""

from __future__ import annotations

__all__ = ["__version__"]

VERSION = "0.1.0"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return VERSION
    raise AttributeError(name)
