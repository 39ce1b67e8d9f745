"""Time one hook process as the real client runs it: ``hook_timer.py LOG EVENT ARGV...``.

``bench/bench_session.py`` puts this in front of each hook command of its *timed* set-ups.
It starts ``ARGV`` with this process's standard streams, folder and environment (so the
hook reads the client's payload and the client reads the hook's answer, as without the
timer), waits for it and appends one JSON line to ``LOG``: the event, the hook's wall time
(from its start to its exit) and its own CPU time (user and system, with any child it
waited for), from ``os.wait4``. It exits with the hook's exit status (128 + N when a
signal N ended it), so the client sees what the hook did.

What it measures leaves out the client's own cost of running a hook (its shell, its pipes,
parsing the answer) and this timer's start; the session's total, which includes them,
is what the untimed set-ups measure. Standard library only; run it with ``-I -S``.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        sys.stderr.write("usage: hook_timer.py LOG EVENT ARGV...\n")
        return 2
    log, event, command = argv[0], argv[1], argv[2:]
    start = time.perf_counter()
    pid = os.posix_spawnp(command[0], command, os.environ)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    line = json.dumps({"event": event, "wall": wall, "user": usage.ru_utime,
                       "system": usage.ru_stime, "status": status}) + "\n"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())  # one write: hooks that run at once never interleave
    finally:
        os.close(fd)
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
