"""When a file was created (its birth time), where the system says.

Python's ``os.stat`` gives no birth time on Linux; ``statx(2)`` does (``STATX_BTIME``, on
ext4, XFS, Btrfs, tmpfs since Linux 6.x...), reached here through ``ctypes``. macOS and
the BSDs give ``st_birthtime``. Elsewhere, or on a file system that keeps none, the answer
is None: unknown.

Loaded only by the gate's check of a file tool whose path holds a folder or link changed
in this session (:func:`smllm.gate.protect.fresh_component`): ``ctypes`` costs about 2 ms
to import.
"""

from __future__ import annotations

import sys

from smllm.base import osfast as os

_AT_FDCWD = -100
_AT_SYMLINK_NOFOLLOW = 0x100
_STATX_BTIME = 0x800
_BTIME_OFFSET = 80  # struct statx: stx_btime (tv_sec i64, tv_nsec u32) after 80 bytes
_statx: list[object] = []


def _linux(path: str) -> int | None:
    import ctypes  # noqa: PLC0415 - see the module's text
    import struct  # noqa: PLC0415 - with ctypes

    if not _statx:
        libc = ctypes.CDLL(None, use_errno=True)
        _statx.append(getattr(libc, "statx", None))
    statx = _statx[0]
    if statx is None:
        return None
    buf = ctypes.create_string_buffer(256)
    if statx(_AT_FDCWD, os.fsencode(path), _AT_SYMLINK_NOFOLLOW, _STATX_BTIME, buf) != 0:  # type: ignore[operator]
        return None
    if not struct.unpack_from("I", buf, 0)[0] & _STATX_BTIME:
        return None  # the file system keeps no birth time
    sec, nsec = struct.unpack_from("qI", buf, _BTIME_OFFSET)
    return int(sec) * 1_000_000_000 + int(nsec)


def born_ns(path: str) -> int | None:
    """``path``'s birth time in nanoseconds (a link's own, not its target's), or None."""
    if sys.platform.startswith("linux"):
        try:
            return _linux(path)
        except (OSError, AttributeError, ValueError):
            return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    born = getattr(st, "st_birthtime", None)
    return None if born is None else int(born * 1_000_000_000)
