"""JSON for the hot path, without importing the ``json`` package.

``import json`` pulls in ``re`` and costs about as much as half an interpreter start,
which a hook on every tool call cannot afford. This module drives CPython's C
accelerator (``_json``) directly, with the same output as
``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))`` and the same input
rules as ``json.loads``. Where ``_json`` is missing it falls back to ``json``; errors
are re-raised by ``json`` itself so messages stay the standard ones.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

try:
    import _json as _c
except ImportError:  # pragma: no cover - other Pythons
    _c = None  # type: ignore[assignment]

_WS = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)
    memo: ClassVar[dict[str, str]] = {}


def _default(obj: object) -> object:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_encode_ascii = (
    _c.make_encoder(None, _default, _c.encode_basestring_ascii, None, ":", ",", False, False,
                    True)
    if _c is not None
    else None
)
_scan = _c.make_scanner(_Context()) if _c is not None else None  # type: ignore[arg-type]
_encode = (
    _c.make_encoder(None, _default, _c.encode_basestring, None, ":", ",", False, False, True)
    if _c is not None
    else None
)


def _slow_loads(text: str | bytes) -> Any:
    import json  # noqa: PLC0415 - error path and fallback only

    return json.loads(text)


def loads(data: str | bytes) -> Any:
    """Like ``json.loads``; raises ``ValueError`` (``json.JSONDecodeError``) on bad input."""
    if _scan is None:
        return _slow_loads(data)
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    if text[:1] == "{":  # an object from the first character: every journal line
        return _scan_from(text, 0)
    if text.startswith("\ufeff"):
        return _slow_loads(text)
    return _scan_from(text, len(text) - len(text.lstrip(_WS)))


def _scan_from(text: str, start: int) -> Any:
    """The value at ``start`` of ``text``, which must hold nothing else but white space."""
    assert _scan is not None
    try:
        obj, end = _scan(text, start)
    except RecursionError:
        raise
    except Exception:
        return _slow_loads(text)  # let json itself raise the standard error
    finally:
        _Context.memo.clear()
    if end != len(text) and text[end:].strip(_WS):
        return _slow_loads(text)
    return obj


def dumps(obj: object) -> str:
    """Compact JSON, non-ASCII kept: ``json.dumps(obj, ensure_ascii=False,
    separators=(",", ":"))``."""
    if _encode is None:
        import json  # noqa: PLC0415 - without the C accelerator only

        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if isinstance(obj, str):
        return str(_c.encode_basestring(obj))
    return "".join(_encode(obj, 0))


def dumps_utf8(obj: object) -> bytes:
    """``dumps(obj)`` as bytes that are always valid UTF-8.

    A lone surrogate (``"\\ud800"``, which JSON input may carry) cannot be encoded in
    UTF-8: then the whole document is written with ASCII escapes instead, which
    :func:`loads` reads back to the very same string.
    """
    text = dumps(obj)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    if _encode_ascii is None:
        import json  # noqa: PLC0415 - without the C accelerator only

        return json.dumps(obj, separators=(",", ":")).encode("ascii")
    if isinstance(obj, str):
        return str(_c.encode_basestring_ascii(obj)).encode("ascii")
    return "".join(_encode_ascii(obj, 0)).encode("ascii")
