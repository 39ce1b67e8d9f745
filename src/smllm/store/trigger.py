"""What SessionEnd and Stop call: start a detached shipper when a store is configured.

Hot path: standard library basics only, and never a wait. The hook touches a mark
(``ship/again``) and, unless a shipper already holds ``locks/ship.lock`` (in smllm's
locks folder, which the agent's sandbox cannot open), spawns one with ``posix_spawn`` in
its own session, stdin from ``/dev/null`` and output to ``logs/ship.log`` (never the
hook's stdout, which Claude Code reads to its end). The shipper ships every journal, then
again while the mark keeps coming back, so a hook that fires while it works is never
lost; a store that is down is retried by the next hook, the journals being the outbox.
"""

from __future__ import annotations

import sys

from smllm.base import osfast as os
from smllm.base import paths


def _folder() -> str:
    return paths.ensure_private_tree(os.path.join(paths.state_root(), "ship"),
                                     paths.state_root())


def _try_lock(path: str) -> int | None:
    """An fd holding ``path``'s exclusive lock, or None if another process holds it."""
    import fcntl  # noqa: PLC0415 - a shipper to start only

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _touch(path: str) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


def start() -> bool:
    """Start a detached shipper unless one runs; never raises. The caller has found a
    store configured (:func:`smllm.store.configured`)."""
    try:
        if not hasattr(os, "posix_spawn"):
            return False
        folder = _folder()
        _touch(os.path.join(folder, "again"))
        fd = _try_lock(paths.lock_path("ship.lock"))
        if fd is None:
            return False  # the running shipper will see the mark
        os.close(fd)
        log = os.path.join(paths.ensure_private_tree(paths.logs_root(), paths.state_root()),
                           "ship.log")
        code = (f"import sys; sys.path[:0] = {sys.path!r}; "
                "from smllm.store.trigger import main; main()")
        os.posix_spawn(
            sys.executable, [sys.executable, "-c", code], os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
                (os.POSIX_SPAWN_DUP2, 1, 2),
            ],
            setsid=True,
        )
    except OSError:
        return False
    return True


def _pass(log: list[str]) -> bool:
    """Ship everything once; False when the store cannot take it now."""
    from smllm.base import clock  # noqa: PLC0415 - the detached shipper only
    from smllm.base.errors import SmllmError  # noqa: PLC0415 - the detached shipper only
    from smllm.store import address, shipper  # noqa: PLC0415 - the detached shipper only

    at = clock.iso_utc(clock.now_ms())
    try:
        found = address.configured_url()
        if found is None:
            return False
        report = shipper.ship(found[0])
    except SmllmError as exc:
        log.append(f"{at} ship failed: {exc.render()}")
        return False
    if report.sent or report.conflict_count:
        log.append(f"{at} shipped {report.sent} record(s) to "
                   f"{address.shown(found[0])}: {report.inserted} new, "
                   f"{report.conflict_count} conflict(s)")
        log += [f"{at} {c.text()}" for c in report.conflicts]
    return True


def main() -> None:
    """The detached shipper: ship while hooks keep asking, then exit."""
    folder = _folder()
    again = os.path.join(folder, "again")
    lock = paths.lock_path("ship.lock")  # where the sandbox cannot hold it
    import contextlib  # noqa: PLC0415 - the detached process, not the hook
    import fcntl  # noqa: PLC0415 - a shipper to start only

    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        log: list[str] = []
        try:
            while True:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(again)
                if not _pass(log) or not os.path.exists(again):
                    break
        finally:
            for line in log:
                sys.stdout.write(line + "\n")
            sys.stdout.flush()
            os.close(fd)
        # a hook that touched the mark after our last look found the lock still held
        if not os.path.exists(again):
            return
        fd2 = _try_lock(lock)
        if fd2 is None:
            return  # another shipper took over
        os.close(fd2)
