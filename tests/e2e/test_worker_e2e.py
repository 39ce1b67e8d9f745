"""The resident worker in the real Claude Code (issue 25): as installed, the hooks go
through the native client to the worker; killed, hung or replaced by a foreign listener,
every gating call is still decided fail-closed and journaled.

Each session: a harmless command, ``rm -rf ~`` (denied by smllm's built-in rules), a Read.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import Harness, Run

from smllm import worker
from smllm.setup import install

pytestmark = pytest.mark.e2e

#: the worker on: the tests' environment turns it off (tests/conftest.py)
ON = {worker.SWITCH: None}


def _script(claude: Harness) -> list[dict[str, Any]]:
    return [
        {"tool_use": {"name": "Bash", "input": {"command": "echo worker-one",
                                                "description": "say one"}}},
        {"tool_use": {"name": "Bash", "input": {"command": "rm -rf ~",
                                                "description": "clean up"}}},
        {"tool_use": {"name": "Read", "input": {"file_path": str(claude.project / "n.txt")}}},
        {"text": "done"},
    ]


def _intents(run: Run) -> list[tuple[str, str, str | None]]:
    out = []
    for rec in run.journal():
        ev = (rec.get("payload") or {}).get("event")
        if isinstance(ev, dict) and ev.get("kind") == "side_effect_intent":
            command = (ev.get("input") or {}).get("command") or ev.get("tool_name")
            out.append((str(command), str(ev.get("policy_decision")), ev.get("rule")))
    return out


def _folder(claude: Harness) -> Path:
    return claude.smllm_home / "key"


def _stats(claude: Harness) -> list[dict[str, Any]]:
    return worker.workers(str(_folder(claude)))


def _wait_for_worker(claude: Harness, other_than: int = 0) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        live = [s for s in _stats(claude) if s.get("pid") != other_than]
        if live and list(_folder(claude).glob("worker-*.sock")):
            return live[0]
        time.sleep(0.05)
    raise AssertionError(f"no worker started: {_stats(claude)}")


@pytest.fixture
def installed(claude: Harness) -> Iterator[Harness]:
    """smllm installed with the native client (this machine has a C compiler), the
    workers the sessions start killed by PID at the end."""
    assert install.native_client(), "the tests need a C compiler (tests/system-packages.txt)"
    claude.install_smllm()
    (claude.project / "n.txt").write_text("notes\n")
    try:
        yield claude
    finally:
        worker.stop(str(_folder(claude)))


def _decided(run: Run) -> None:
    """Every call journaled: the harmless command and the Read left to Claude Code's own
    permissions (smllm allows them), ``rm -rf ~`` denied."""
    intents = _intents(run)
    hooks = [(e.get("hook_name"), e.get("exit_code"), e.get("stderr"))
             for e in run.events if e.get("subtype") == "hook_response"]
    assert [("echo worker-one", "defer:host"), ("rm -rf ~", "deny:policy"),
            ("Read", "defer:host")] == [(c, d) for c, d, _ in intents], (hooks, run.stderr)
    assert run.returncode == 0


def test_the_installed_hook_is_the_native_client_and_the_worker_serves_the_calls(
        installed: Harness) -> None:
    claude = installed
    python, _ = install.interpreter()
    exe = install.hook_executable(python)
    assert exe.read_bytes()[:4] == b"\x7fELF"
    assert install.python_hook(exe).read_text().startswith(f"#!{python} ")
    first = claude.run("steps", script=_script(claude), env=ON)
    _decided(first)  # the first hooks ran the Python hook, and started the worker
    served = _wait_for_worker(claude)
    second = claude.run("steps", script=_script(claude), env=ON)
    _decided(second)
    after = _wait_for_worker(claude)
    assert after["pid"] == served["pid"]
    assert after["calls"] - served["calls"] >= 8  # the session's hooks, the worker's
    assert 0 == claude.smllm("verify", second.session_id).returncode


def test_a_killed_worker_leaves_every_call_decided_and_a_new_one_starts(
        installed: Harness) -> None:
    claude = installed
    _decided(claude.run("steps", script=_script(claude), env=ON))
    old = _wait_for_worker(claude)
    os.killpg(int(old["pid"]), signal.SIGKILL)
    _decided(claude.run("steps", script=_script(claude), env=ON))
    assert _wait_for_worker(claude, other_than=int(old["pid"]))["pid"] != old["pid"]


def test_a_hung_worker_is_passed_over_and_replaced(installed: Harness) -> None:
    """The worker stopped (SIGSTOP): the next hook waits for its answer a second at most,
    removes its socket and decides the call itself; a new worker serves the rest."""
    claude = installed
    _decided(claude.run("steps", script=_script(claude), env=ON))
    old = _wait_for_worker(claude)
    # a worker that has served for a while (not one still loading, which a new worker
    # leaves be: server.TAKE_OVER)
    lock = next(_folder(claude).glob("worker-*.lock"))
    os.utime(lock, (time.time() - 60, time.time() - 60))
    os.killpg(int(old["pid"]), signal.SIGSTOP)
    try:
        run = claude.run("steps", script=_script(claude), env=ON)
        _decided(run)
        assert _wait_for_worker(claude, other_than=int(old["pid"]))["pid"] != old["pid"]
    finally:
        os.killpg(int(old["pid"]), signal.SIGKILL)


def test_a_foreign_listener_on_the_socket_gets_nothing_and_gating_calls_are_denied(
        installed: Harness) -> None:
    """Something that is not smllm's worker (it cannot prove smllm's key) listens on the
    worker's socket: it never receives a call; every gating call is denied, the reason
    given to the model and journaled under worker.foreign-listener."""
    claude = installed
    _decided(claude.run("steps", script=_script(claude), env=ON))
    old = _wait_for_worker(claude)
    path = next(_folder(claude).glob("worker-*.sock"))
    os.killpg(int(old["pid"]), signal.SIGKILL)
    path.unlink()
    got: list[bytes] = []
    with _impostor(path, got):
        run = claude.run("steps", script=_script(claude), env=ON)
    intents = _intents(run)
    assert [("deny:policy", "worker.foreign-listener")] * 3 == [
        (d, r) for _, d, r in intents], run.stderr
    assert run.model_saw("not smllm's worker")
    assert got
    assert all(len(g) <= len(worker.HELLO) + worker.NONCE for g in got)  # no call given


@contextlib.contextmanager
def _impostor(path: Path, got: list[bytes]) -> Iterator[None]:
    """A listener that answers every HELLO with an ACK under the wrong key."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    hello = conn.recv(4096)
                    got.append(hello)
                    nonce = hello[len(worker.HELLO):]
                    ours, pid = os.urandom(worker.NONCE), (1).to_bytes(8, "little")
                    conn.sendall(worker.ACK + ours + pid
                                 + worker.mac(b"\0" * 32, b"ack", nonce, ours, pid))
                    got.append(conn.recv(4096))  # anything it would send next

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_a_worker_whose_queue_is_full_leaves_every_call_decided(installed: Harness) -> None:
    """The worker's backlog filled (its master stopped, connections queued until the
    kernel refuses more): each hook finds it full at once and decides the call itself; the
    worker, continued, serves again."""
    claude = installed
    _decided(claude.run("steps", script=_script(claude), env=ON))
    old = _wait_for_worker(claude)
    path = str(next(_folder(claude).glob("worker-*.sock")))
    os.killpg(int(old["pid"]), signal.SIGSTOP)
    queued: list[socket.socket] = []
    try:
        while len(queued) < 1024:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                sock.connect(path)
            except BlockingIOError:  # the backlog is full
                sock.close()
                break
            queued.append(sock)
        assert len(queued) < 1024
        started = time.monotonic()
        run = claude.run("steps", script=_script(claude), env=ON)
        _decided(run)
        assert time.monotonic() - started < 60
        # no hook reached the ACK wait (which ends by removing the socket): each found the
        # queue full at once
        assert Path(path).exists()
    finally:
        for sock in queued:
            sock.close()
        os.killpg(int(old["pid"]), signal.SIGCONT)
    assert old["pid"] == _wait_for_worker(claude)["pid"]
