"""smllm's per-user secret key, and HMAC-SHA256 under it.

32 random bytes (hex) in ``journal.key``, mode 0600, in smllm's key folder
(:func:`smllm.base.paths.key_root`): a folder of the state folder that the agent's sandbox
can neither read nor write (``denyRead``, :mod:`smllm.setup.sandbox`). The first writer on
a machine creates it. Two parts of smllm prove with it what a process without it cannot:

* the keyed chain (:mod:`smllm.journal.keyed`): a MAC of every journal record's hash;
* the resident worker (:mod:`smllm.worker`): a hook and the worker it hands a call to
  each MAC the other's fresh nonce, so a listener planted on the worker's socket cannot
  answer for it.

Each use MACs under its own domain (a prefix), so one's MAC never stands for the other's.

Hot path: ``os`` and the built-in SHA-256 only; the key is read once per process.
"""

from __future__ import annotations

import os

from smllm.base import paths
from smllm.base.digest import sha256
from smllm.base.errors import JournalError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KEY_NAME = "journal.key"
_BLOCK = 64

#: key file -> the key, as this process read it
_KEY: dict[str, bytes] = {}
#: key -> (inner, outer) HMAC states, prepared once per process
_PADS: dict[bytes, tuple[Any, Any]] = {}


def key_folder() -> str:
    """The folder of the key (hidden from the sandbox, read and write)."""
    return paths.key_root()


def key_file(folder: str | None = None) -> str:
    """The key in ``folder`` (default: this process's key folder)."""
    return os.path.join(folder or key_folder(), KEY_NAME)


def _parse(data: bytes, where: str) -> bytes:
    text = data.strip()
    if len(text) != 64 or any(c not in b"0123456789abcdef" for c in text):
        raise JournalError(f"{where}: not an smllm journal key (64 hex digits expected)",
                           "restore it from a backup; a new key cannot vouch for old "
                           "journals (remove it only to start a new one)")
    return bytes.fromhex(text.decode("ascii"))


def _read(path: str) -> bytes | None:
    try:
        fd = paths.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise JournalError(f"cannot read smllm's journal key {path}: {exc}",
                           "it must be a regular file owned by you (mode 0600)") from None
    try:
        data = os.read(fd, 256)
    finally:
        os.close(fd)
    return _parse(data, path)


def _create(path: str) -> bytes:
    """A new key, published atomically: of two writers racing, both get the one linked."""
    paths.ensure_private_tree(os.path.dirname(path), paths.state_root())
    tmp = f"{path}.{os.getpid()}.new"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, paths.FILE_MODE)
    try:
        os.write(fd, os.urandom(32).hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    found = _read(path)
    if found is None:  # pragma: no cover - removed between link and read
        raise JournalError(f"smllm's journal key {path} vanished while it was created")
    return found


def key(*, create: bool, folder: str | None = None) -> bytes | None:
    """This user's key, read once per process (``create``: make it when missing;
    otherwise None when there is none); ``folder``: the key folder, when not this
    process's."""
    path = key_file(folder)
    found = _KEY.get(path)
    if found is not None:
        return found
    found = _read(path)
    if found is None and create:
        found = _create(path)
    if found is not None:
        _KEY[path] = found
    return found


def hmac(secret: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 (RFC 2104) of ``message`` under ``secret`` (the pads are prepared once
    per key and process); ``message`` starts with its use's domain."""
    pads = _PADS.get(secret)
    if pads is None:
        k = secret.ljust(_BLOCK, b"\0")
        pads = (sha256(bytes(b ^ 0x36 for b in k)), sha256(bytes(b ^ 0x5C for b in k)))
        _PADS[secret] = pads
    inner = pads[0].copy()
    inner.update(message)
    outer = pads[1].copy()
    outer.update(inner.digest())
    digest: bytes = outer.digest()
    return digest
