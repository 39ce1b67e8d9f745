"""SHA-256 without ``hashlib`` (which loads OpenSSL): the built-in module where it exists."""

from __future__ import annotations

__all__ = ["sha256", "sha256_hex", "tagged"]  # sha256: the hasher itself (HMAC, journal.keyed)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha256 import sha256  # Python 3.10, 3.11
    except ImportError:  # pragma: no cover - depends on the Python version
        try:
            from _sha2 import sha256  # Python 3.12+
        except ImportError:
            from hashlib import sha256


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def tagged(data: bytes) -> str:
    """``sha256:<hex>``, the form every digest in the journal takes."""
    return "sha256:" + sha256(data).hexdigest()
