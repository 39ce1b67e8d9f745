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
