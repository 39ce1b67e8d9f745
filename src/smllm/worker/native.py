"""Building the native hook client (``client.c``, :mod:`smllm.worker`): the installed
``smllm-hook`` wherever a C compiler exists.

The client is compiled with ``-include`` of a generated header (:func:`header`): the Python
hook it stands for, the worker's tag, the waits, the hooks' deadlines and gating events, and
the protocol's constants, all taken from the Python modules, so the client cannot drift
from them. The header also embeds a stamp (:func:`stamp`: the source, the header, the
compiler and its flags), which :func:`is_current` finds in a built client.

Install only: no hook imports this module.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from smllm import hooks, worker
from smllm.base import paths
from smllm.base.digest import sha256_hex
from smllm.base.errors import InstallError
from smllm.journal import keyed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: the client's source, package data of :mod:`smllm.worker`
SOURCE = "client.c"
#: how the client is compiled (no ``-Werror``: a newer compiler's new warning must not
#: stop an install; the tests build with it)
FLAGS = ("-O2", "-std=c99", "-D_GNU_SOURCE", "-Wall", "-Wextra")
#: what precedes the stamp in a built client
STAMP_MARK = b"smllm-stamp:"
#: the compiler may take this long (seconds)
COMPILE_TIMEOUT = 300
#: how much of the compiler's complaint an error shows (characters)
_ERROR_MAX = 2000
#: the bytes a C string literal may hold as they are (``?`` is not one: trigraphs)
_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 /._-+,:=@")


def compiler() -> str | None:
    """The C compiler: ``$CC`` when set and found, else the first of ``cc``, ``gcc`` and
    ``clang`` on ``PATH``; None when there is none."""
    cc = os.environ.get("CC", "").strip()
    for name in ([cc] if cc else []) + ["cc", "gcc", "clang"]:
        found = shutil.which(name)
        if found:
            return os.path.abspath(found)
    return None


def source() -> str:
    """The client's C source."""
    return resources.files(worker).joinpath(SOURCE).read_text(encoding="utf-8")


def c_string(value: str | bytes) -> str:
    """``value`` as a C string literal: anything but plain ASCII as a 3-digit octal escape
    (a path may hold quotes, backslashes, ``??`` or bytes that are not UTF-8).

    >>> print(c_string('a"b\\\\c??/é'))
    "a\\042b\\134c\\077\\077/\\303\\251"
    """
    data = os.fsencode(value) if isinstance(value, str) else value
    return '"' + "".join(chr(b) if b in _PLAIN else f"\\{b:03o}" for b in data) + '"'


def _c_seconds(value: float) -> str:
    seconds = float(value)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a wait in seconds: {value!r}")
    return repr(seconds)


def header(python_hook: str, *, ack_wait_ms: int = int(worker.ACK_WAIT * 1000),
           deadlines: Mapping[str, float] | None = None,
           default_deadline: float = hooks.DEFAULT_DEADLINE,
           grace_s: float = worker.DONE_GRACE) -> str:
    """The client's configuration for the Python hook ``python_hook`` (its absolute path):
    C ``#define`` lines, without the stamp. ``deadlines`` (event -> seconds, the others
    ``default_deadline``) defaults to :data:`smllm.hooks.DEADLINES`; the keyword arguments
    other than ``python_hook`` exist for the tests."""
    if not os.path.isabs(python_hook):
        raise ValueError(f"the Python hook's path must be absolute: {python_hook!r}")
    if worker.MAC_SIZE != 32 or worker.NONCE != 32:
        raise ValueError("client.c speaks HMAC-SHA256 with 32-byte nonces")
    table = hooks.DEADLINES if deadlines is None else deadlines
    rows = "".join(f"{{{c_string(e)}, {_c_seconds(s)}}}, " for e, s in sorted(table.items()))
    gating = "".join(f"{c_string(e)}, " for e in sorted(hooks.GATING))
    defines = {
        "SMLLM_FALLBACK": c_string(python_hook),
        "SMLLM_TAG": c_string(worker.tag(python_hook)),
        "SMLLM_ACK_WAIT_MS": str(int(ack_wait_ms)),
        "SMLLM_GRACE_S": _c_seconds(grace_s),
        "SMLLM_DEFAULT_DEADLINE_S": _c_seconds(default_deadline),
        "SMLLM_DEADLINES": rows,
        "SMLLM_GATING": gating,
        "SMLLM_SWITCH": c_string(worker.SWITCH),
        "SMLLM_FLAG": c_string(worker.FLAG),
        "SMLLM_START": c_string(worker.START),
        "SMLLM_FOREIGN": c_string(worker.FOREIGN),
        "SMLLM_HELLO": c_string(worker.HELLO),
        "SMLLM_ACK": c_string(worker.ACK),
        "SMLLM_GO": c_string(worker.GO),
        "SMLLM_DONE": c_string(worker.DONE),
        "SMLLM_DOMAIN": c_string(worker.DOMAIN),
        "SMLLM_CALL_LIMIT": str(worker.CALL_LIMIT),
        "SMLLM_ADDRESS_MAX": str(worker.ADDRESS_MAX),
        "SMLLM_PLATFORM_HOME": c_string(hooks.PLATFORM_HOME),
        "SMLLM_APP": c_string(paths.APP),
        "SMLLM_KEY_FOLDER": c_string(keyed.KEY_FOLDER),
        "SMLLM_KEY_NAME": c_string(keyed.KEY_NAME),
    }
    lines = ["/* generated by smllm.worker.native: the client's configuration */"]
    lines += [f"#define {name} {value}".rstrip() for name, value in defines.items()]
    return "\n".join(lines) + "\n"


def stamp(config: str, cc: str) -> str:
    """What identifies a build: the source, the header ``config``, the compiler and its
    flags (hex SHA-256)."""
    parts = [source(), config, cc, *FLAGS]
    return sha256_hex("\0".join(parts).encode("utf-8", "surrogateescape"))


def _stamped(config: str, cc: str) -> str:
    return f"{config}#define SMLLM_STAMP {c_string(stamp(config, cc))}\n"


def is_current(path: str | os.PathLike[str], python_hook: str) -> bool:
    """Whether the client at ``path`` is what :func:`build` would build now for
    ``python_hook`` (its stamp is in the file); False when there is no compiler to tell."""
    cc = compiler()
    if cc is None:
        return False
    try:
        data = Path(path).read_bytes()
    except OSError:
        return False
    return STAMP_MARK + stamp(header(python_hook), cc).encode("ascii") in data


def _trimmed(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _ERROR_MAX else text[:_ERROR_MAX] + " ..."


def _compile(cc: str, config: str, folder: str) -> bytes:
    """The client, compiled in the private folder ``folder``."""
    src = os.path.join(folder, SOURCE)
    include = os.path.join(folder, "smllm-client.h")
    binary = os.path.join(folder, "smllm-hook")
    Path(src).write_text(source(), encoding="utf-8")
    Path(include).write_text(_stamped(config, cc), encoding="utf-8")
    fix = "set CC to a working C compiler, or install gcc and libc6-dev"
    try:
        done = subprocess.run([cc, *FLAGS, "-include", include, "-o", binary, src],
                              capture_output=True, text=True, errors="replace", cwd=folder,
                              timeout=COMPILE_TIMEOUT,
                              env={**os.environ, "LC_ALL": "C"}, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallError(f"could not build the native hook client with {cc}: {exc}",
                           fix) from None
    if done.returncode != 0:
        raise InstallError(f"could not build the native hook client with {cc} (exit status "
                           f"{done.returncode}): {_trimmed(done.stderr or done.stdout)}", fix)
    return Path(binary).read_bytes()


def build(out: Path, python_hook: str, *, ack_wait_ms: int = int(worker.ACK_WAIT * 1000),
          deadlines: Mapping[str, float] | None = None,
          default_deadline: float = hooks.DEFAULT_DEADLINE,
          grace_s: float = worker.DONE_GRACE) -> None:
    """Compile the client for ``python_hook`` and put it at ``out`` (mode 0755), replacing
    what was there in one rename. InstallError when there is no compiler or it fails. The
    keyword arguments are :func:`header`'s, for the tests."""
    cc = compiler()
    if cc is None:
        raise InstallError("no C compiler to build the native hook client",
                           "install gcc and libc6-dev, or set CC")
    config = header(python_hook, ack_wait_ms=ack_wait_ms, deadlines=deadlines,
                    default_deadline=default_deadline, grace_s=grace_s)
    with tempfile.TemporaryDirectory(prefix="smllm-client-") as folder:
        binary = _compile(cc, config, folder)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        try:
            os.fchmod(fd, 0o755)
            view = memoryview(binary)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
