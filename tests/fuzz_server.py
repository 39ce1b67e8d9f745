"""A fork server for hook fuzzing: ``python tests/fuzz_server.py BATCH RESULTS``.

It imports the real hook entry point once (and the handler modules a warm hook would
import), then for every input in BATCH (JSON lines: ``event``, ``data`` in base64) forks
a child that runs ``smllm.hooks.main([event])`` exactly as the installed command does,
with real pipes on fds 0/1/2 and a real exit status. An exception escaping ``main`` is
printed as Python would (a traceback, exit 1), so the test sees what a host would see.
RESULTS gets one JSON line per input: ``rc`` (negative: killed by that signal), ``out``,
``err`` (base64) and ``seconds``.
"""

from __future__ import annotations

import base64
import gc
import json
import os
import selectors
import sys
import time
import traceback


def _child(event: str, r_in: int, w_out: int, w_err: int, others: list[int]) -> None:
    os.dup2(r_in, 0)
    os.dup2(w_out, 1)
    os.dup2(w_err, 2)
    for fd in (r_in, w_out, w_err, *others):
        os.close(fd)
    from smllm import hooks

    try:
        rc = hooks.main([event])
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        rc = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(rc)


def _run(event: str, data: bytes) -> dict[str, object]:
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(event, r_in, w_out, w_err, [w_in, r_out, r_err])
    for fd in (r_in, w_out, w_err):
        os.close(fd)
    os.set_blocking(w_in, False)
    sel = selectors.DefaultSelector()
    bufs: dict[int, list[bytes]] = {r_out: [], r_err: []}
    pending = memoryview(data)
    if pending:
        sel.register(w_in, selectors.EVENT_WRITE)
    else:
        os.close(w_in)
    sel.register(r_out, selectors.EVENT_READ)
    sel.register(r_err, selectors.EVENT_READ)
    open_fds = 2 + (1 if pending else 0)
    while open_fds:
        for key, _ in sel.select():
            fd = key.fd
            if fd == w_in:
                try:
                    pending = pending[os.write(w_in, pending[:65536]):]
                except (BrokenPipeError, BlockingIOError) as exc:
                    if isinstance(exc, BlockingIOError):
                        continue
                    pending = memoryview(b"")
                if not pending:
                    sel.unregister(w_in)
                    os.close(w_in)
                    open_fds -= 1
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                bufs[fd].append(chunk)
            else:
                sel.unregister(fd)
                os.close(fd)
                open_fds -= 1
    _, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    return {"rc": rc, "seconds": time.monotonic() - start,
            "out": base64.b64encode(b"".join(bufs[r_out])).decode(),
            "err": base64.b64encode(b"".join(bufs[r_err])).decode()}


WARM = {"session_id": "fuzz-warm", "cwd": "/tmp", "tool_name": "Bash",
        "tool_input": {"command": "echo warm"}, "tool_use_id": "toolu_warm"}


def main(batch: str, results: str) -> int:
    from smllm import hooks

    for event in ("PreToolUse", "PermissionRequest"):  # load what a hook loads, once
        hooks.run(event, json.dumps({**WARM, "hook_event_name": event}).encode())
    gc.freeze()  # the children share the parent's heap untouched: cheaper forks

    with open(batch, encoding="utf-8") as src, open(results, "w", encoding="utf-8") as out:
        for line in src:
            item = json.loads(line)
            res = _run(item["event"], base64.b64decode(item["data"]))
            out.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
