"""The resident worker's server (smllm.worker.server), driven over its real socket by the
protocol in Python (tests/worker_client.py); the native client has tests/test_worker_client.py.

Each guarantee is attacked: a call through the worker is the Python hook's call to the byte
(the same records, the same answers); nothing a call leaves is seen by the next one; a
client without smllm's key gets nothing run; a child killed mid-call, a full worker, a
code change, a removed socket and an idle worker each end as they must."""

from __future__ import annotations

import ast
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import worker_client as wc
from helpers import REPO, base, hook_output, kind, records
from smllm import worker
from smllm.journal import keyed
from smllm.worker import server

FIXTURES = Path(__file__).parent / "fixtures" / "payloads"
HOOK = "/venv/bin/smllm-hook.py"  # the Python hook a worker stands for (only its name counts)


@pytest.fixture
def folder(smllm_home: Path) -> Path:
    """smllm's key folder of this test's home, with its key."""
    keyed.key(create=True)
    return Path(keyed.key_folder())


@pytest.fixture
def running(folder: Path) -> Any:
    with wc.running(folder, HOOK) as w:
        yield w


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != worker.SWITCH}
    env.update(extra)
    return env


def _argv(event: str, home: Path) -> list[str]:
    return [HOOK, event, "--home", str(home)]


def _call(w: wc.Worker, event: str, payload: dict[str, Any] | bytes, home: Path,
          **kw: Any) -> wc.Answer:
    """One call; then, once it was answered, wait until its child is idle again (it
    answers before it forgets the call: a call made at once would find it busy and be
    given to a new child)."""
    data = payload if isinstance(payload, bytes) else (json.dumps(payload) + "\n").encode()
    calls = w.stats().get("calls", 0)
    answer = wc.call(w.socket, wc.key_of(w.folder), _argv(event, home), kw.pop("env", _env()),
                     data, kw.pop("cwd", "/"), **kw)
    if answer.code is not None:
        deadline = time.monotonic() + 10
        while w.stats().get("calls", 0) == calls and time.monotonic() < deadline:
            time.sleep(0.005)
    return answer


def _turned_away(path: str) -> bool:
    """A new connection is closed unanswered (an end of file; a broken pipe or a reset when
    the worker closed it before or with the HELLO unread)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(path)
    with sock:
        try:
            sock.sendall(worker.HELLO + os.urandom(worker.NONCE))
            return sock.recv(16) == b""
        except (BrokenPipeError, ConnectionResetError):  # closed before or after the HELLO
            return True


def test_a_session_through_the_worker_journals_what_the_python_hook_journals(
        running: wc.Worker, smllm_home: Path) -> None:
    """session_basic.json (startup, prompt, three tools, stop, end) through one worker: the
    records product.md §4 names, in order, every call answered with exit 0."""
    flow = json.loads((FIXTURES / "session_basic.json").read_text())
    for event, payload in flow:
        answer = _call(running, event, payload, smllm_home)
        assert 0 == answer.code, answer.err.decode()
        assert b"Traceback" not in answer.err
    recs = records(flow[0][1]["session_id"])
    assert ["session.start", "proposed", "accepted",
            "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
            "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
            "side_effect_intent", "tool_batch.effect.started", "tool_batch.effect.terminal",
            "completed", "session.end"] == [kind(r) for r in recs]
    assert len(flow) == running.stats()["calls"]


def test_a_dangerous_call_is_denied_with_the_reason_and_journaled(
        running: wc.Worker, smllm_home: Path, tmp_path: Path) -> None:
    payload = base("PreToolUse", "worker-deny", cwd=str(tmp_path), tool_name="Bash",
                   tool_input={"command": "rm -rf ~"}, tool_use_id="toolu_w1")
    answer = _call(running, "PreToolUse", payload, smllm_home, cwd=tmp_path)
    assert 0 == answer.code
    out = hook_output(_completed(answer))
    assert out is not None
    decision = out["hookSpecificOutput"]
    assert "deny" == decision["permissionDecision"]
    intents = [r for r in records("worker-deny") if kind(r) == "side_effect_intent"]
    assert ["deny:policy"] == [r["payload"]["event"]["policy_decision"] for r in intents]


def _completed(answer: wc.Answer) -> subprocess.CompletedProcess[bytes]:
    return subprocess.CompletedProcess([], answer.code or 0, answer.out, answer.err)


def test_one_child_serves_calls_of_different_projects_each_under_its_own_policy(
        running: wc.Worker, smllm_home: Path, tmp_path: Path) -> None:
    """Two projects, one denying ``make`` by its policy: the same child serves both, and
    each call is decided by its own project's policy and environment."""
    strict, plain = tmp_path / "strict", tmp_path / "plain"
    for p in (strict, plain):
        (p / ".smllm").mkdir(parents=True)
    (strict / ".smllm" / "policy.toml").write_text(
        '[[rule]]\nid = "no-make"\ncommand = "make *"\ndecision = "deny"\n'
        'reason = "not here"\n')
    pids, decisions = set(), []
    for n, project in enumerate([strict, plain, strict, plain]):
        payload = base("PreToolUse", f"worker-proj-{n}", cwd=str(project), tool_name="Bash",
                       tool_input={"command": "make all"}, tool_use_id=f"toolu_p{n}")
        answer = _call(running, "PreToolUse", payload, smllm_home, cwd=project,
                       env=_env(CLAUDE_PROJECT_DIR=str(project)))
        assert 0 == answer.code, answer.err.decode()
        pids.add(answer.pid)
        out = hook_output(_completed(answer))
        decisions.append((out or {}).get("hookSpecificOutput", {}).get("permissionDecision"))
    assert 1 == len(pids)
    assert ["deny", None, "deny", None] == decisions


def test_nothing_of_a_call_is_left_for_the_next(running: wc.Worker, smllm_home: Path,
                                                 tmp_path: Path) -> None:
    """A variable of one call is not seen by the next in the same child. The first call
    sets SMLLM_MAX_INPUT=10 (honoured: this home allows the test knobs), so its input is
    refused; the second, without it, is judged as usual. The child then waits in /, not in
    the first call's folder."""
    def pre(n: int) -> dict[str, Any]:
        return base("PreToolUse", f"worker-env-{n}", cwd=str(tmp_path), tool_name="Bash",
                    tool_input={"command": "echo hi"}, tool_use_id=f"toolu_env{n}")

    def decision(answer: wc.Answer) -> str | None:
        out = hook_output(_completed(answer)) or {}
        return out.get("hookSpecificOutput", {}).get("permissionDecisionReason")

    a = _call(running, "PreToolUse", pre(1), smllm_home, cwd=tmp_path,
              env=_env(SMLLM_MAX_INPUT="10"), umask=0o077)
    b = _call(running, "PreToolUse", pre(2), smllm_home, cwd=tmp_path)
    assert (0, 0, a.pid) == (a.code, b.code, b.pid)
    assert "over the 10-byte limit" in (decision(a) or "")
    assert "limit" not in (decision(b) or "")
    assert "/" == os.readlink(f"/proc/{b.pid}/cwd")


def test_every_per_process_cache_of_the_hooks_is_forgotten_between_calls() -> None:
    """Every module-level dict, set or list of the modules a worker loads is either one the
    worker forgets after each call (server.PER_CALL) or holds what the code itself says
    (built from constants: listed here with why). A new cache fails this test until it is
    classified."""
    constant = {
        "smllm.base.catalogue._BY_OPERATION": "the catalogue's operations, built once",
        "smllm.base.secrets._BY_PAIR": "the rules' needles, built at import",
        "smllm.base.secrets._RULES_OF": "needles -> rules: a function of the rules",
        "smllm.base.birth._statx": "the statx function, found once",
        "smllm.hooks._bundle._index": "the code bundle (not used by a worker)",
        "smllm.hooks._bundle._fd": "the code bundle (not used by a worker)",
        "smllm.hooks._bundle._base": "the code bundle (not used by a worker)",
        "smllm.hooks._bundle._missing": "the code bundle (not used by a worker)",
        "smllm.hooks._bundle._unread": "the code bundle (not used by a worker)",
        "smllm.hooks._done": "reset at the start of every call (hooks.main)",
        "smllm.gate.shell._programs._TABLE": "the programs' table, built from constants",
    }
    forgotten = {f"{m}.{a}" for m, attrs in server.PER_CALL.items() for a in attrs}
    unclassified = []
    src = REPO / "src" / "smllm"
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        module = ".".join(("smllm", *parts)).removesuffix(".__init__")
        if parts[0] in ("commands", "serve", "audit", "index", "setup", "cli",
                                    "store", "worker", "__main__", "mcp"):
            continue  # not loaded by a hook (test_startup checks the hooks' modules)
        for name in _mutable_globals(path):
            full = f"{module}.{name}"
            if full not in forgotten and full not in constant and not name.isupper() \
                    and not name.startswith("__"):
                unclassified.append(full)
    assert [] == unclassified


#: run in a fresh interpreter: preload as a worker does, note every module-level dict, set
#: and list of smllm's modules, serve the flow's calls as a child does, forget, and print
#: the names whose contents differ from before
_DRIFT = r"""
import json, os, sys
from smllm.worker import server
from smllm import hooks
flow, home, env_json, result = json.load(open(sys.argv[1])), *sys.argv[2:5]
server.preload()
def containers():
    out = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("smllm"):
            continue
        for attr, value in list(vars(module).items()):
            if type(value) in (dict, set, list):
                out[f"{name}.{attr}"] = repr(sorted(map(repr, value)) if isinstance(value, set)
                                              else value)
    return out
before = containers()
for event, payload in flow:
    r, w = os.pipe()
    os.write(w, json.dumps(payload).encode() + b"\n")
    os.close(w)
    null = os.open(os.devnull, os.O_WRONLY)
    here = os.open("/", os.O_RDONLY)
    env = [k.encode() + b"=" + v.encode() for k, v in os.environ.items()]
    server._become_and_run(0o22, [b"/h.py", event.encode(), b"--home", home.encode()], env,
                           [r, null, os.dup(null), here])
    server.forget()
    os.environ.update(json.loads(env_json))
after = containers()
with open(result, "w") as out:
    json.dump(sorted(k for k in after if k in before and after[k] != before[k]), out)
"""


def test_what_a_call_leaves_in_module_state_is_forgotten_or_constant(
        smllm_home: Path, tmp_path: Path) -> None:
    """The dynamic side of the test above: a whole session served as a child serves it,
    and every module-level container whose contents the calls changed is one the worker
    forgets or one built from constants on first use."""
    lazily_built = {"smllm.base.catalogue._BY_OPERATION", "smllm.base.secrets._RULES_OF",
                    "smllm.base.birth._statx", "smllm.hooks._done"}
    forgotten = {f"{m}.{a}" for m, attrs in server.PER_CALL.items() for a in attrs}
    result = tmp_path / "drift.json"
    env = _env()
    subprocess.run([sys.executable, "-c", _DRIFT, str(FIXTURES / "session_basic.json"),
                    str(smllm_home), json.dumps(env), str(result)], env=env, check=True,
                   timeout=120, capture_output=True)
    changed = set(json.loads(result.read_text()))
    assert set() == changed - forgotten - lazily_built


def _mutable_globals(path: Path) -> list[str]:
    """Module-level names bound to a dict, set or list (display, comprehension or call)."""
    out = []
    for node in ast.parse(path.read_text()).body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is None:
            continue
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp,
                                     ast.SetComp)) or (
            isinstance(value, ast.Call) and ast.unparse(value.func) in ("dict", "set", "list"))
        if mutable:
            out += [t.id for t in targets if isinstance(t, ast.Name)]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Global):
            out += node.names
    return out


def test_forget_clears_the_listed_caches_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from smllm.journal import transcript

    transcript._WAITED.add("toolu_x")
    monkeypatch.setitem(os.environ, "SMLLM_TEST_FORGET", "1")
    env = dict(os.environ)
    try:
        import _thread

        # True when no thread but the main one runs (pytest-xdist may run some here)
        assert server.forget() is (_thread._count() == 0)
        assert (set(), None) == (transcript._WAITED, os.environ.get("SMLLM_TEST_FORGET"))
        assert {} == dict(os.environ)
    finally:
        os.environ.update(env)


def test_a_call_without_smllms_key_runs_nothing(running: wc.Worker, smllm_home: Path,
                                                tmp_path: Path) -> None:
    """A client that cannot sign its call (the agent of a host without the sandbox, say):
    the child runs nothing, journals nothing, answers no DONE, and serves the next call."""
    payload = base("PreToolUse", "worker-unsigned", cwd=str(tmp_path), tool_name="Bash",
                   tool_input={"command": "echo hi"}, tool_use_id="toolu_u")
    bad = _call(running, "PreToolUse", payload, smllm_home, go_secret=b"\0" * 32)
    assert (None, b"") == (bad.code, bad.out)
    with pytest.raises(FileNotFoundError):
        records("worker-unsigned")
    good = _call(running, "PreToolUse", payload, smllm_home)
    assert 0 == good.code
    assert ["side_effect_intent"] == [kind(r) for r in records("worker-unsigned")][-1:]


def test_a_child_killed_mid_call_loses_that_call_only(running: wc.Worker, smllm_home: Path,
                                                      tmp_path: Path) -> None:
    """The hook's child is killed while it serves (here: waiting for the call): its client
    gets no DONE; the master forks another child for the next call."""
    sock, _, pid = wc.greet(running.socket, wc.key_of(running.folder))
    os.kill(pid, signal.SIGKILL)
    with sock:
        assert b"" == sock.recv(16)
    payload = base("UserPromptSubmit", "worker-after-kill", cwd="/", prompt="hi")
    answer = _call(running, "UserPromptSubmit", payload, smllm_home)
    assert 0 == answer.code
    assert answer.pid != pid


def test_a_full_worker_turns_a_call_away_before_answering(
        running: wc.Worker, smllm_home: Path, tmp_path: Path) -> None:
    """Every child busy (each serving a call that waits for its transcript): the next
    connection is closed unanswered, and the client runs the Python hook."""
    held = [_busy(running, smllm_home, tmp_path, f"full{n}") for n in range(server.CHILDREN)]
    try:
        assert _turned_away(running.socket)
    finally:
        for sock, _, out in held:
            sock.close()
            os.close(out)


def test_a_second_worker_for_the_same_socket_leaves_at_once(running: wc.Worker) -> None:
    argv = [sys.executable, *server.boot_argv(str(running.folder), HOOK)]
    proc = subprocess.run(argv, timeout=30, capture_output=True, check=False)
    assert 0 == proc.returncode
    assert running.proc.poll() is None


def test_the_worker_ends_when_its_socket_is_removed_or_replaced(folder: Path) -> None:
    with wc.running(folder, HOOK) as w:
        os.unlink(w.socket)
        assert 0 == w.proc.wait(timeout=10)


def test_an_idle_worker_ends_by_itself(folder: Path) -> None:
    with wc.running(folder, HOOK, idle=0.5) as w:
        assert 0 == w.proc.wait(timeout=10)


def test_the_socket_and_the_key_folder_are_the_users_alone(running: wc.Worker) -> None:
    st = os.stat(running.socket)
    assert (0o600, os.getuid()) == (st.st_mode & 0o777, st.st_uid)
    assert 0o700 == os.stat(running.folder).st_mode & 0o777


def test_a_change_of_smllms_code_restarts_the_worker_before_the_next_call(
        tmp_path: Path, smllm_home: Path, folder: Path) -> None:
    """A copy of the package served by a worker; one of its modules edited: the next
    connection is turned away unanswered (the client runs the Python hook) while the
    worker starts afresh on the same socket, and the call after runs the new code."""
    import shutil

    copy = tmp_path / "pkg"
    shutil.copytree(REPO / "src" / "smllm", copy / "smllm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.bundle"))
    site = [p for p in sys.path if p.endswith("site-packages")]
    stdlib = [p for p in sys.path if "python3" in p and not p.endswith("site-packages")]
    with wc.running(folder, HOOK, path=[str(copy), *site, *stdlib]) as w:
        payload = base("UserPromptSubmit", "worker-code", cwd="/", prompt="hi")
        assert 0 == _call(w, "UserPromptSubmit", payload, smllm_home).code
        started = w.stats()["started"]
        changed = copy / "smllm" / "hooks" / "user_prompt_submit.py"
        changed.write_text(changed.read_text() + "\n# edited\n")
        assert _turned_away(w.socket)
        deadline = time.monotonic() + 30
        while w.stats().get("started") == started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert w.stats()["started"] != started
        assert 0 == _call(w, "UserPromptSubmit", payload, smllm_home).code


def test_the_python_hook_told_foreign_denies_a_gating_call_and_journals_why(
        smllm_home: Path, tmp_path: Path) -> None:
    """``--worker foreign`` (the native client found a listener that could not prove
    smllm's key): even a harmless call is denied, with the reason, journaled under
    worker.foreign-listener; an observing hook runs as usual."""
    payload = base("PreToolUse", "worker-foreign", cwd=str(tmp_path), tool_name="Bash",
                   tool_input={"command": "echo hi"}, tool_use_id="toolu_f")
    proc = _python_hook(["PreToolUse", "--home", str(smllm_home), "--worker", "foreign"],
                        payload)
    out = hook_output(proc)
    assert out is not None
    assert "deny" == out["hookSpecificOutput"]["permissionDecision"]
    assert "not smllm's worker" in out["hookSpecificOutput"]["permissionDecisionReason"]
    intent = [r for r in records("worker-foreign") if kind(r) == "side_effect_intent"][-1]
    assert ("deny:policy", "worker.foreign-listener") == (
        intent["payload"]["event"]["policy_decision"], intent["payload"]["event"]["rule"])
    post = base("UserPromptSubmit", "worker-foreign", cwd="/", prompt="hi")
    proc = _python_hook(["UserPromptSubmit", "--home", str(smllm_home), "--worker",
                         "foreign"], post)
    assert (0, b"") == (proc.returncode, proc.stdout)


def test_the_python_hook_told_start_starts_a_worker(smllm_home: Path, folder: Path,
                                                    tmp_path: Path) -> None:
    """``--worker start`` (no worker listened): the call is answered, then a worker starts
    for the Python hook that ran (named for its path)."""
    payload = base("UserPromptSubmit", "worker-start", cwd="/", prompt="hi")
    hook_path = tmp_path / "smllm-hook.py"
    proc = _python_hook(["UserPromptSubmit", "--home", str(smllm_home), "--worker", "start"],
                        payload, argv0=str(hook_path))
    assert 0 == proc.returncode, proc.stderr.decode()
    lock = Path(worker.lock_path(str(folder), str(hook_path)))
    deadline = time.monotonic() + 30
    while not Path(worker.socket_path(str(folder), str(hook_path))).exists() \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(lock.read_text())
    try:
        assert Path(f"/proc/{pid}").exists()
        assert "smllm.worker.server" in Path(f"/proc/{pid}/cmdline").read_text()
    finally:
        os.killpg(pid, signal.SIGKILL)


def _python_hook(argv: list[str], payload: dict[str, Any],
                 argv0: str = HOOK) -> subprocess.CompletedProcess[bytes]:
    code = f"import sys; sys.argv[0] = {argv0!r}; from smllm.hooks import cli; cli()"
    return subprocess.run([sys.executable, "-c", code, *argv],
                          input=(json.dumps(payload) + "\n").encode(), capture_output=True,
                          env=_env(), timeout=60, check=False)


def test_a_child_whose_client_goes_away_mid_call_ends_with_it(
        running: wc.Worker, smllm_home: Path, tmp_path: Path) -> None:
    """Claude Code kills the hook (its timeout, or the user interrupts) while the child
    serves it, here in the transcript wait (the transcript lacks the tool's use): the child
    ends at once, as a killed hook process would, instead of serving the call out."""
    sock, pid, r1 = _busy(running, smllm_home, tmp_path, "gone")
    time.sleep(0.5)
    assert Path(f"/proc/{pid}").exists()  # waiting for the transcript
    started = time.monotonic()
    sock.close()
    while Path(f"/proc/{pid}").exists() and _state(pid) != "Z" \
            and time.monotonic() - started < 10:
        time.sleep(0.02)
    assert time.monotonic() - started < 3
    assert b"" == os.read(r1, 100)  # it answered nothing
    os.close(r1)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_child_ends_unanswered_once_a_module_its_calls_imported_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module a call imported (not one the master preloaded and checks itself) is noted
    after the call; once its file changes, the child answers no more calls: the connection
    is closed before the ACK (the client runs the Python hook) and the child ends."""
    import types

    source = tmp_path / "late.py"
    source.write_text("X = 1\n")
    module = types.ModuleType("smllm._late_for_test")
    module.__file__ = str(source)
    monkeypatch.setitem(sys.modules, "smllm._late_for_test", module)
    ours, theirs = socket.socketpair()
    child = server.Child(ours, b"k" * 32, watched=set())
    child.imported()
    assert str(source) in child.extra
    first, gone = socket.socketpair()
    gone.close()
    with first:  # a client that left before its HELLO: nothing run, the child serves on
        assert child.serve(first, os.open(os.devnull, os.O_RDWR)) is True
    a, b = socket.socketpair()
    with a, b, ours, theirs:
        source.write_text("X = 2  # changed\n")
        b.sendall(worker.HELLO + os.urandom(worker.NONCE))
        assert child.serve(a, os.open(os.devnull, os.O_RDWR)) is False
        b.settimeout(1)
        with pytest.raises(TimeoutError):
            b.recv(1)  # no ACK was sent (the caller closes the connection)


_HELLO = r"""
import os, socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(10)
sock.connect(sys.argv[1])
try:
    sock.sendall(sys.argv[2].encode() + os.urandom(32))
    data = sock.recv(8)
except (BrokenPipeError, ConnectionResetError):  # closed before or after the HELLO
    data = b""
print("answered" if data else "turned away")
"""


@pytest.mark.parametrize(("confine", "expected"), [
    ([], "answered"),
    (["setpriv", "--no-new-privs"], "turned away"),
])
def test_a_client_more_confined_than_the_worker_is_turned_away(
        running: wc.Worker, confine: list[str], expected: str) -> None:
    """A process inside a sandbox (no_new_privs, a seccomp filter: what bubblewrap and
    Codex's landlock set) that could reach the socket and read the key must not have the
    worker, outside its sandbox, write for it: it is turned away before the handshake."""
    proc = subprocess.run([*confine, sys.executable, "-c", _HELLO, running.socket,
                           worker.HELLO.decode()], capture_output=True, text=True,
                          timeout=30, check=True)
    assert expected == proc.stdout.strip()


def _busy(running: wc.Worker, home: Path, folder: Path, name: str) \
        -> tuple[socket.socket, int, int]:
    """A call that keeps its child busy for 20 s: a PreToolUse waiting for its tool's use in
    a transcript that lacks it. The connection, the child's pid and the read end of the
    hook's stdout."""
    transcript = folder / f"{name}.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    payload = base("PreToolUse", f"worker-{name}", cwd=str(folder), tool_name="Bash",
                   tool_input={"command": "echo hi"}, tool_use_id=f"toolu_{name}",
                   transcript_path=str(transcript))
    secret = wc.key_of(running.folder)
    sock, theirs, pid = wc.greet(running.socket, secret)
    body = worker.encode_call(0o022, [os.fsencode(a) for a in _argv("PreToolUse", home)],
                              [os.fsencode(f"{k}={v}") for k, v in _env(
                                  SMLLM_TRANSCRIPT_WAIT="20").items()])
    r0, w0 = os.pipe()
    r1, w1 = os.pipe()
    here = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    socket.send_fds(sock, [worker.GO + len(body).to_bytes(4, "little")
                           + worker.mac(secret, b"go", theirs, body) + body],
                    [r0, w1, w1, here])
    for fd in (r0, w1, here):
        os.close(fd)
    os.write(w0, (json.dumps(payload) + "\n").encode())
    os.close(w0)
    return sock, pid, r1
