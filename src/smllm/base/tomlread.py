"""Reading TOML (config and policy files): ``tomllib`` from Python 3.11, ``tomli`` before.

Slow path only: hooks read compiled caches, never TOML.
"""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - Python 3.10 (tomli is a dependency there)
    import tomli as _toml  # type: ignore[import-not-found,no-redef,unused-ignore]

TOMLDecodeError = _toml.TOMLDecodeError


def loads(text: str) -> dict[str, Any]:
    """Parse a TOML document; raises :data:`TOMLDecodeError` (a ``ValueError``)."""
    doc: dict[str, Any] = _toml.loads(text)
    return doc


def error_at(exc: ValueError) -> tuple[str, int | None]:
    """A :data:`TOMLDecodeError`'s message without its ``(at line N, column M)`` tail, and N
    (None when the message names no line), for a ``file:line`` error."""
    import re  # noqa: PLC0415 - error path

    msg = str(exc)
    at = re.search(r"\(at line (\d+), column \d+\)", msg)
    return re.sub(r"\s*\(at line \d+, column \d+\)", "", msg), int(at.group(1)) if at else None
