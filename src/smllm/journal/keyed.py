"""The keyed chain: a per-user secret key MACs every record's hash, outside the log.

The hash chain (:mod:`smllm.journal.codec`) shows an edit, but a process that can write
the log can also re-chain it: SHA-256 needs no secret. So every writer also keeps, beside
the log, one HMAC-SHA256 per record over the record's ``hash`` (which covers the whole
line and, through ``prev``, every line before it), keyed with a secret that only smllm
reads:

* the key: :func:`key_file`, 32 random bytes (hex), mode 0600 in smllm's state folder,
  in a folder the agent's sandbox can neither read nor write (``denyRead``, see
  :mod:`smllm.setup.sandbox`); the first writer on a machine creates it;
* the MACs: ``chain.mac`` beside the log (:data:`MAC_NAME`), one fixed-size slot per
  sequence (``<sequence> <hex>\\n``, :data:`SLOT` bytes), written with one ``pwrite``
  *before* the records themselves, so a writer killed in between leaves a slot that the
  next writer (which reuses the sequence) overwrites, never a record without its MAC;
* the register: :func:`register_file`, in the key's folder, lists the logs created with
  the key. A log listed there must carry a valid MAC on every record: removing
  ``chain.mac`` does not turn the check off. A log not listed (written before the key
  existed, or copied elsewhere) is checked unkeyed, and ``smllm verify`` says so.

The seeds pin the line format (its ``hash`` and ``prev``), so the MAC is a separate file,
never a field of the line: exports and their goldens are unchanged.

Hot path: ``os`` and the built-in SHA-256 only; the key is read once per process.
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.base import paths
from smllm.base.digest import sha256
from smllm.base.errors_hot import JournalError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the MAC file beside a log
MAC_NAME = "chain.mac"
#: one slot: 20-digit sequence, a space, 64 hex digits, a newline
SLOT = 20 + 1 + 64 + 1
KEY_FOLDER = os.path.basename(paths.key_root())
KEY_NAME = "journal.key"
REGISTER_NAME = "keyed-logs"
_DOMAIN = b"smllm-journal-mac-v1\0"
_BLOCK = 64
#: RFC 2104's inner and outer pads (0x36, 0x5C repeated), as integers to XOR the key with
_IPAD = int.from_bytes(b"\x36" * _BLOCK, "big")
_OPAD = int.from_bytes(b"\x5c" * _BLOCK, "big")

#: key file -> the key, as this process read it
_KEY: dict[str, bytes] = {}
#: key -> (inner, outer) HMAC states, prepared once per process
_PADS: dict[bytes, tuple[Any, Any]] = {}


def key_folder() -> str:
    """The folder of the key and the register (hidden from the sandbox, read and write)."""
    return paths.key_root()


def key_file() -> str:
    return os.path.join(key_folder(), KEY_NAME)


def register_file() -> str:
    return os.path.join(key_folder(), REGISTER_NAME)


def _parse(data: bytes, where: str) -> bytes:
    text = data.strip()
    if len(text) != 64 or text.translate(None, b"0123456789abcdef"):
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


def key(*, create: bool) -> bytes | None:
    """This user's journal key, read once per process (``create``: make it when missing;
    otherwise None when there is none)."""
    path = key_file()
    found = _KEY.get(path)
    if found is not None:
        return found
    found = _read(path)
    if found is None and create:
        found = _create(path)
    if found is not None:
        _KEY[path] = found
    return found


def mac(secret: bytes, digest: str) -> str:
    """HMAC-SHA256 (RFC 2104) under ``secret`` of a record's ``hash``, as hex."""
    pads = _PADS.get(secret)
    if pads is None:
        k = int.from_bytes(secret.ljust(_BLOCK, b"\0"), "big")
        pads = (sha256((k ^ _IPAD).to_bytes(_BLOCK, "big")),
                sha256((k ^ _OPAD).to_bytes(_BLOCK, "big")))
        _PADS[secret] = pads
    inner = pads[0].copy()
    inner.update(_DOMAIN + digest.encode("ascii", "replace"))
    outer = pads[1].copy()
    outer.update(inner.digest())
    return outer.hexdigest()


def mac_file(log: str) -> str:
    return os.path.join(os.path.dirname(log), MAC_NAME)


def slots(secret: bytes, first: int, digests: list[str]) -> bytes:
    """The slots of records ``first``, ``first + 1``, … with these hashes."""
    return b"".join(f"{first + n:>20} {mac(secret, d)}\n".encode("ascii")
                    for n, d in enumerate(digests))


def write_slots(log: str, first: int, data: bytes) -> None:
    """Write slots from sequence ``first`` on (one ``pwrite``, no link followed)."""
    fd = paths.open_regular(mac_file(log), os.O_WRONLY | os.O_CREAT)
    try:
        os.pwrite(fd, data, (first - 1) * SLOT)
    finally:
        os.close(fd)


def _log_id(log: str) -> str:
    from smllm.base.digest import sha256_hex  # noqa: PLC0415 - a new log only

    return sha256_hex(os.path.realpath(log).encode("utf-8", "surrogatepass"))


def register(log: str) -> None:
    """Record that ``log`` was created with the key (one appended line)."""
    line = (_log_id(log) + "\n").encode("ascii")
    fd = paths.open_regular(register_file(), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def registered(log: str) -> bool:
    """Was ``log`` created with the key (so each of its records must carry a MAC)?"""
    want = _log_id(log).encode("ascii")
    try:
        fd = paths.open_regular(register_file(), os.O_RDONLY)
    except FileNotFoundError:
        return False
    with os.fdopen(fd, "rb") as fh:
        return any(line.rstrip(b"\n") == want for line in fh)


class Slots:
    """Reads the MAC slots of one log by sequence (verify)."""

    def __init__(self, log: str) -> None:
        try:
            fd = paths.open_regular(mac_file(log), os.O_RDONLY)
        except FileNotFoundError:
            fd = -1
        self.fh = os.fdopen(fd, "rb") if fd >= 0 else None

    def get(self, sequence: int) -> str | None:
        """The MAC recorded for ``sequence`` (None: no slot)."""
        if self.fh is None or sequence < 1:
            return None
        self.fh.seek((sequence - 1) * SLOT)
        raw = self.fh.read(SLOT)
        if len(raw) != SLOT or not raw.endswith(b"\n"):
            return None
        text = raw[:-1].decode("ascii", "replace")
        return text[21:] if text[:20].strip() == str(sequence) and text[20] == " " else None

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
