"""``smllm hook EVENT``: one Claude Code hook event, stdin JSON → stdout JSON.

The contract (product.md §4, claude-code-contract.md §2):

* stdout carries exactly one JSON object, or nothing. Anything else printed while a
  handler runs is diverted to stderr, so a stray ``print`` cannot cancel a decision.
* The exit status is 0: decisions travel in the JSON.
* A gating hook (PreToolUse) that cannot read its input or crashes **denies** with the
  reason and journals it when it can; an observing hook exits quietly. This holds for
  *any* failure: an exception at import time (a broken or shadowed ``_json``), a lone
  surrogate that cannot be printed, a closed stdout, ``SystemExit``/``MemoryError`` in a
  handler. The output is written as bytes that are always valid UTF-8.
* An internal deadline (:data:`DEADLINES`, ``SMLLM_HOOK_DEADLINE``) ends the hook well
  before Claude Code's own timeout, which would let the call through: a gating hook then
  denies, an observing one exits quietly.
* Nothing heavy is imported here: each handler module is imported by name, on use; even
  the input parser is imported inside :func:`run`, so that ``from smllm.hooks import cli``
  itself cannot fail.

Every event smllm knows is one row of :data:`TABLE`, from which the rest is derived:
:data:`HANDLERS` and :data:`GATING` here, the input check's tool events, and what
``smllm install`` registers (:data:`INSTALLED`: timeout and matcher). ``hooks/hooks.json``,
the launcher's ``GATING`` and the startup test are checked against it, so an event added
in one place only fails a test.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the builtin behind signal
import gc
import posix  # the builtin behind os: smllm.base.osfast loads once the bundle serves it
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

#: (event, gating: fails closed (else observes, fails open), tool: its input names a tool,
#: handler module in smllm.hooks (None: journaled as ``host.event``, not installed),
#: install timeout in seconds: PreToolUse and PermissionRequest may wait on a reviewer)
TABLE: tuple[tuple[str, bool, bool, str | None, int | None], ...] = (
    ("SessionStart", False, False, "session_start", 30),
    ("UserPromptSubmit", False, False, "user_prompt_submit", 30),
    ("PreToolUse", True, True, "pre_tool_use", 300),
    ("PermissionRequest", False, True, "permission_request", 300),
    ("PostToolUse", False, True, "post_tool_use", 30),
    ("PostToolUseFailure", False, True, "post_tool_use", 30),
    ("Stop", False, False, "stop", 30),
    ("SubagentStart", False, False, "subagent", 30),
    ("SubagentStop", False, False, "subagent", 30),
    ("SessionEnd", False, False, "session_end", 30),
    ("PermissionDenied", False, True, None, None),
)

#: event -> handler module (a static registry, imported lazily by name)
HANDLERS: dict[str, str] = {name: handler for name, _, _, handler, _ in TABLE if handler}
#: events whose hook decides (fail closed) rather than observes (fail open)
GATING = frozenset(name for name, gating, _, _, _ in TABLE if gating)
#: events whose input carries ``tool_name`` and ``tool_input``
TOOL_EVENTS = frozenset(name for name, _, tool, _, _ in TABLE if tool)
#: what ``smllm install`` and ``hooks/hooks.json`` register: event -> (timeout, matcher);
#: a tool event matches every tool (``*``), the others take no matcher
INSTALLED: dict[str, tuple[int, str | None]] = {
    name: (timeout, "*" if tool else None)
    for name, _, tool, handler, timeout in TABLE if handler and timeout
}

MAX_INPUT = 8 * 1024 * 1024

#: seconds a hook may run before it gives up on its own: well before the timeouts
#: ``smllm install`` and hooks/hooks.json give Claude Code (300 s for the events that may
#: wait on a reviewer, 30 s for the others), after which the host would let the call run
DEADLINES: dict[str, float] = {"PreToolUse": 270.0, "PermissionRequest": 270.0}
DEFAULT_DEADLINE = 20.0

#: what a gating hook prints when nothing else can be printed (pure ASCII, prebuilt)
FALLBACK_DENY = (
    b'{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",'
    b'"permissionDecisionReason":"smllm could not decide on this call and denies it '
    b'(fail closed): REASON"}}'
)

#: the same for a host that reads another shape: Copilot's native file and Gemini CLI
#: ignore the object above (Gemini runs the tool), and read these flat ones
FALLBACK_DENIES: dict[str, bytes] = {
    "copilot": b'{"permissionDecision":"deny","permissionDecisionReason":"smllm could not '
               b'decide on this call and denies it (fail closed): REASON"}',
    "gemini": b'{"decision":"deny","reason":"smllm could not decide on this call and denies '
              b'it (fail closed): REASON"}',
}

_done = [False]  # set once the hook's own output is on its way: the deadline stands down

#: the hosts whose hooks smllm answers: ``smllm-hook EVENT [--harness NAME]`` (none named:
#: Claude Code, whose installed command is unchanged). The event stays first, so the
#: installed hook's start-up guard still sees a gating event when smllm cannot import
HARNESSES = ("claude", "codex", "copilot", "gemini")
#: ``--home VALUE`` of an installed hook command: smllm's home pinned by ``smllm install``
#: (an absolute folder: what ``SMLLM_HOME`` was; :data:`PLATFORM_HOME`: the platform's
#: folders), whatever ``SMLLM_HOME`` the hook's environment says
PLATFORM_HOME = "platform"
#: the hosts that name smllm's events their own way: smllm's name -> theirs (Gemini CLI
#: 0.61; its BeforeModel, AfterModel, BeforeToolSelection and PreCompress are not needed:
#: the model calls come from its chat file, and AfterModel fires for every streamed chunk)
HOST_EVENTS: dict[str, dict[str, str]] = {"gemini": {
    "SessionStart": "SessionStart", "UserPromptSubmit": "BeforeAgent",
    "PreToolUse": "BeforeTool", "PostToolUse": "AfterTool", "Stop": "AfterAgent",
    "SessionEnd": "SessionEnd"}}


def split_argv(argv: list[str]) -> tuple[str, list[str]]:
    """``(harness, [EVENT])`` of a hook's arguments: ``PreToolUse --harness codex`` ->
    ``("codex", ["PreToolUse"])``; without ``--harness``, Claude Code's. (``--home`` is
    taken out first: :func:`take_home`.)"""
    if argv[1:2] == ["--harness"] and len(argv) > 2:
        return argv[2], [argv[0], *argv[3:]]
    return "claude", argv


def take_home(argv: list[str]) -> tuple[str | None, list[str]]:
    """``(home, the other arguments)``: the ``--home VALUE`` an installed hook command ends
    with (None when there is none: ``smllm hook EVENT`` run by hand, the plugin route).

    >>> take_home(["PreToolUse", "--harness", "codex", "--home", "/h"])
    ('/h', ['PreToolUse', '--harness', 'codex'])
    """
    if len(argv) >= 3 and argv[-2] == "--home":
        return argv[-1], argv[:-2]
    return None, argv


def pin_home(home: str | None) -> None:
    """Apply the installed command's ``--home``: ``SMLLM_HOME`` becomes that folder (or, for
    :data:`PLATFORM_HOME` or a value that is not an absolute folder, goes away), whatever the
    environment said. Nothing for a hook without ``--home``."""
    from smllm.base import osfast as os  # noqa: PLC0415 - from the bundle (installed first)

    if home is None:
        return
    if home != PLATFORM_HOME and os.path.isabs(home):
        os.environ["SMLLM_HOME"] = home
    else:
        os.environ.pop("SMLLM_HOME", None)


def _max_input() -> int:
    from smllm.base import osfast as os  # noqa: PLC0415 - from the bundle (installed first)

    raw = os.environ.get("SMLLM_MAX_INPUT")
    return int(raw) if raw and raw.isdigit() else MAX_INPUT


def deny(reason: str) -> dict[str, Any]:
    """The gating event's deny (:func:`smllm.harness.claude.deny`; :data:`FALLBACK_DENY` is
    the same object, prebuilt, for when nothing can be imported)."""
    from smllm.harness import claude  # noqa: PLC0415 - importing smllm.hooks must never fail

    return claude.deny(reason)


def _read_stdin(limit: int) -> bytes:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        return b""
    return stream.read(limit + 1)


def run(event: str, raw: bytes, harness: str = "claude", *,
        refusal: str | None = None) -> dict[str, Any] | None:
    """Handle one event of ``harness``'s hooks; return the JSON output object (or None).
    ``refusal``: a gating call is denied with this reason whatever the gate would say,
    and journaled so (:func:`_foreign`)."""
    gating = event in GATING
    try:
        from smllm.hooks._context import HookInputError  # noqa: PLC0415 - importing smllm.hooks must never fail
    except BaseException as exc:  # a broken install: _json, a syntax error, a missing file
        where = _report(event, exc)
        return _crash_deny(exc, where) if gating else None
    try:
        return _handle(event, raw, harness, refusal)
    except HookInputError as exc:
        _journal_rejection(event, raw, exc.render())
        return deny(f"smllm refused this call: {exc.render()}") if gating else None
    except Exception as exc:
        where = _report(event, exc)
        return _crash_deny(exc, where) if gating else None


def _crash_deny(exc: BaseException, where: str) -> dict[str, Any]:
    return deny(f"smllm could not decide on this call and denies it (fail closed): "
                f"{type(exc).__name__}: {exc} (report: {where})")


def _handle(event: str, raw: bytes, harness: str = "claude",
            refusal: str | None = None) -> dict[str, Any] | None:
    from smllm.hooks._context import (  # noqa: PLC0415 - importing smllm.hooks must never fail
        HookContext,
        HookInputError,
        parse_input,
    )

    if harness not in HARNESSES:
        raise HookInputError(f"unknown harness {harness!r} (smllm answers the hooks of "
                             f"{', '.join(HARNESSES)})", "check the hook's command line")
    if harness == "claude" and b"COPILOT_CLI" in posix.environ:
        from smllm.base import osfast  # noqa: PLC0415 - from the bundle (installed first)
        from smllm.harness import copilot  # noqa: PLC0415 - run from Copilot only

        project = copilot.under_copilot(raw, osfast.environ)
        if project is not None:  # Copilot runs Claude Code's file: its own hooks govern
            return None if copilot.installed(project) or event not in GATING \
                else deny(copilot.NOT_INSTALLED)
    if event not in HANDLERS:
        _journal_other(event, raw, harness)
        return None
    limit = _max_input()
    if len(raw) > limit:
        raise HookInputError(
            f"hook input is {len(raw)} bytes or more, over the {limit}-byte limit",
            "raise SMLLM_MAX_INPUT if such inputs are expected",
        )
    payload = parse_input(event, raw, tool_event=event in TOOL_EVENTS, harness=harness)
    ctx = HookContext.create(event, payload, harness)
    ctx.refusal = refusal
    if event != "SessionStart":  # SessionStart's handler may adopt a person's edits
        from smllm.hooks import _features  # noqa: PLC0415 - importing smllm.hooks must never fail

        _features.tripwire_watch(ctx)
    name = f"smllm.hooks.{HANDLERS[event]}"
    __import__(name)
    result: dict[str, Any] | None = sys.modules[name].handle(ctx)
    return result


def _journal_rejection(event: str, raw: bytes, reason: str) -> None:
    """Record a rejected input in its session's journal, if a session id can be found."""
    try:
        from smllm import journal  # noqa: PLC0415 - importing smllm.hooks must never fail
        from smllm.hooks._context import salvage_session_id  # noqa: PLC0415 - importing smllm.hooks must never fail
        from smllm.journal import records  # noqa: PLC0415 - importing smllm.hooks must never fail

        sid = salvage_session_id(raw)
        if sid is None:
            return
        from smllm.base import paths  # noqa: PLC0415 - importing smllm.hooks must never fail

        project = paths.declared_project()
        path = journal.locate(sid, create=True, project=project)
        journal.append(
            path,
            [records.new("hook.input_rejected", hook_event_name=event, reason=reason,
                         input_bytes=len(raw))],
        )
    except Exception:  # noqa: S110 - best effort: the decision matters more
        pass


def _journal_other(event: str, raw: bytes, harness: str = "claude") -> None:
    """Events without a handler are journaled as ``host.event`` facts."""
    from smllm.hooks._context import HookContext, parse_input  # noqa: PLC0415 - importing smllm.hooks must never fail

    try:
        payload = parse_input(event, raw, tool_event=event in TOOL_EVENTS, harness=harness)
        ctx = HookContext.create(event, payload, harness)
        from smllm import journal  # noqa: PLC0415 - importing smllm.hooks must never fail
        from smllm.journal import records  # noqa: PLC0415 - importing smllm.hooks must never fail

        fields = {k: v for k, v in payload.items() if k not in ("transcript_path",)}
        with journal.transaction(ctx.log_path) as txn:
            txn.append(records.new("host.event", **fields))
    except Exception as exc:
        _report(event, exc)


def _report(event: str, exc: BaseException) -> str:
    """Write a crash report to the logs folder; return its path (never raises)."""
    try:
        import traceback  # noqa: PLC0415 - a crash only

        from smllm.base import clock, paths  # noqa: PLC0415 - importing smllm.hooks must never fail
        from smllm.base import osfast as os  # noqa: PLC0415 - importing smllm.hooks must never fail

        logs = paths.ensure_private_tree(paths.logs_root(), paths.state_root())
        path = os.path.join(logs, f"hook-{event}-{clock.now_ms()}-{os.getpid()}.log")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, "".join(traceback.format_exception(exc)).encode())
        finally:
            os.close(fd)
        return path
    except Exception:
        return "unavailable"


def _take_no_orders(home: str | None, harness: str = "claude") -> None:
    """Drop the ``SMLLM_*`` variables the project's settings set (:mod:`smllm.base.knobs`)
    before anything reads them, pin smllm's home (``--home``: :func:`pin_home`), then drop
    the test knobs unless smllm's own config allows them (:func:`smllm.base.knobs.untested`);
    a failure here drops every ``SMLLM_*`` variable. Where none is set (a user's hooks, as a
    rule) the check loads nothing."""
    if not _knobs_set():
        pin_home(home)
        return
    try:
        from smllm.base import knobs  # noqa: PLC0415 - importing smllm.hooks must never fail

        dropped = knobs.scrub(harness=harness)
        pin_home(home)
        untested = knobs.untested()
    except BaseException:
        from smllm.base import osfast  # noqa: PLC0415 - from the bundle (installed first)

        dropped = [k for k in osfast.environ if k.startswith("SMLLM_")]
        for k in dropped:
            osfast.environ.pop(k, None)
        pin_home(home)
        untested = []
    if dropped:
        _stderr(("smllm: ignoring " + ", ".join(dropped) + " set by the project's settings "
                 "(hooks take no orders from the project)\n").encode("utf-8", "replace"))
    if untested:
        _stderr(("smllm: ignoring the test knobs " + ", ".join(untested) + " (smllm's "
                 "config does not allow them)\n").encode("utf-8", "replace"))


def _knobs_set() -> bool:
    """Whether any ``SMLLM_*`` variable is set, the names searched in one joined string
    (no per-name Python step: most hooks have none)."""
    return b"\0SMLLM_" in b"\0" + b"\0".join(posix.environ)  # the names as the OS gave them


def _foreign() -> str:
    """The reason a gating call is denied when the native client found something that is
    not smllm's worker on the worker's socket (it could not prove smllm's key)."""
    return ("smllm denies this call (fail closed): a program that is not smllm's worker "
            "listens on smllm's worker socket in its key folder (it could not prove "
            "smllm's key); nothing was handed to it. Find who created that socket "
            "(worker-*.sock), then remove it")


def _start_worker() -> None:
    """Start smllm's worker for the next hooks (the native client found none listening)."""
    try:
        from smllm.base import paths  # noqa: PLC0415 - loaded already
        from smllm.worker import server  # noqa: PLC0415 - once per worker's life

        server.start(paths.key_root(), sys.argv[0])
    except Exception:  # noqa: S110 - an optimisation: the next hook runs here again
        pass


def _bundled() -> None:
    """Import the rest of smllm from the hooks' code bundle (:mod:`smllm.hooks._bundle`)."""
    try:
        from smllm.hooks import _bundle  # noqa: PLC0415 - importing smllm.hooks must never fail

        _bundle.install()
    except BaseException:  # noqa: S110 - an optimisation: modules then load as usual
        pass


def _refresh_bundle() -> None:
    """Once the output is written: keep the bundle in step with what this hook imported."""
    bundle = sys.modules.get("smllm.hooks._bundle")
    if bundle is not None:
        bundle.refresh()


def _deadline(event: str) -> float:
    from smllm.base import osfast as os  # noqa: PLC0415 - from the bundle (installed first)

    raw = os.environ.get("SMLLM_HOOK_DEADLINE", "")
    try:
        value = float(raw) if raw else 0.0
    except ValueError:
        value = 0.0
    return value if value > 0 else DEADLINES.get(event, DEFAULT_DEADLINE)


def fallback_deny(harness: str) -> bytes:
    """The prebuilt deny ``harness`` reads (:data:`FALLBACK_DENY`, Claude Code's shape, which
    Codex reads too)."""
    return FALLBACK_DENIES.get(harness, FALLBACK_DENY)


def for_host(harness: str, event: str, result: dict[str, Any]) -> dict[str, Any]:
    """A handler's answer in the shape ``harness`` reads: Copilot's native file reads no
    ``hookSpecificOutput`` (:func:`smllm.harness.copilot.native`), Gemini CLI a flat deny
    and its own event names (:func:`smllm.harness.gemini.native`)."""
    if harness == "copilot":
        from smllm.harness import copilot  # noqa: PLC0415 - Copilot's hooks only

        return copilot.native(event, result)
    if harness == "gemini":
        from smllm.harness import gemini  # noqa: PLC0415 - Gemini's hooks only

        return gemini.native(event, result)
    return result


def _arm_deadline(event: str, gating: bool, harness: str = "claude") -> None:
    """After :func:`_deadline` seconds, deny (gating) or leave quietly, whatever is running.

    A blocked read, a lock wait or a reviewer that never answers is interrupted by
    SIGALRM; the process exits at once (the kernel releases the journal lock, and a line
    cut short is a torn line every reader handles).
    """
    if not hasattr(_signal, "setitimer"):  # pragma: no cover - not on Windows
        return
    seconds = _deadline(event)

    def expired(signum: int, frame: object) -> None:
        if _done[0]:
            return
        _done[0] = True
        if gating:
            _write_out(fallback_deny(harness).replace(
                b"REASON", b"the hook ran out of time (%.0f s, SMLLM_HOOK_DEADLINE)" % seconds))
        posix._exit(0)

    _signal.signal(_signal.SIGALRM, expired)
    _signal.setitimer(_signal.ITIMER_REAL, seconds)


def _write_out(data: bytes) -> bool:
    """Write ``data`` to fd 1 whole; False if stdout is gone."""
    view = memoryview(data)
    try:
        while view:
            view = view[posix.write(1, view):]
    except OSError:
        return False
    return True


def _plain_json(value: object) -> str:
    """ASCII JSON of nested dicts and strings, without any JSON module (last resort)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_plain_json(str(k))}:{_plain_json(v)}"
                              for k, v in value.items()) + "}"
    out = ['"']
    for ch in str(value):
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            code -= 0x10000
            out.append(f"\\u{0xD800 | code >> 10:04x}\\u{0xDC00 | code & 0x3FF:04x}")
    return "".join(out) + '"'


def _encode(result: dict[str, Any]) -> bytes:
    """The output object as bytes: valid UTF-8 whatever its strings hold."""
    try:
        from smllm.base import jsonfast  # noqa: PLC0415 - importing smllm.hooks must never fail

        return jsonfast.dumps_utf8(result)
    except BaseException:
        return _plain_json(result).encode("ascii")


def main(argv: list[str], *, resident: bool = False) -> int:
    """``smllm hook EVENT``: exit 0 with at most one JSON object on stdout.

    A gating hook that cannot print its decision exits 2 (Claude Code blocks the call and
    shows stderr): never 1, never a traceback. ``resident``: run by the worker's child
    (:mod:`smllm.worker.server`), which has every module loaded and serves calls one
    after another: no code bundle, and nothing frozen at the end.
    ``--worker start|foreign`` at the end of ``argv``: the native client ran this Python
    hook because no worker listened (this hook starts one once its answer is out), or
    because what listened was not smllm's worker (a gating call is denied:
    :func:`_foreign`).
    """
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(
            "usage: smllm hook EVENT < hook-input.json\n\n"
            "Run one Claude Code hook event. Events: " + ", ".join(HANDLERS) + ".\n"
        )
        return 0 if argv else 2
    why = None
    if len(argv) >= 3 and argv[-2] == "--worker":  # run by the native client instead
        from smllm import worker  # noqa: PLC0415 - importing smllm.hooks must never fail

        why, argv = worker.take_worker(argv)
    home, argv = take_home(argv)
    harness, argv = split_argv(argv)
    event = argv[0]
    gating = event in GATING
    _done[0] = False
    if not resident:
        _bundled()
    _take_no_orders(home, harness)
    _arm_deadline(event, gating, harness)
    # a hook lives for milliseconds: a cyclic-garbage pass (about 0.5 ms once the imports
    # have made enough objects) is pure cost; reference counting still frees what it can
    gc.disable()
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # nothing a handler prints can reach Claude Code's parser
    data: bytes | None = None
    try:
        try:
            raw = _read_stdin(_max_input())
        except Exception:
            raw = b""
        refusal = _foreign() if why == "foreign" and gating else None
        result = run(event, raw, harness, refusal=refusal)
        data = None if result is None else _encode(for_host(harness, event, result))
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, MemoryError in a handler
        if gating:
            data = _host_crash_deny(harness, event, exc)
    finally:
        sys.stdout = real_stdout
    _done[0] = True
    if hasattr(_signal, "setitimer"):
        _signal.setitimer(_signal.ITIMER_REAL, 0)
    code = 0
    if data is not None and not _write_out(data) and gating:
        _stderr(b"smllm denies this call: its decision could not be written to stdout\n")
        code = 2
    if why == "start":
        _start_worker()
    if resident:  # the worker's child: it forgets the call and serves the next
        return code
    _refresh_bundle()
    # the process ends next, and the interpreter's teardown would make one more full
    # cyclic-garbage pass over every object the imports made (about 1 ms, more than the
    # hook's own work): frozen objects are left out of it; memory goes back as the
    # process exits, and teardown otherwise runs as usual (atexit, flushes, threads)
    gc.freeze()
    return code


def _host_crash_deny(harness: str, event: str, exc: BaseException) -> bytes:
    """The crash deny in ``harness``'s shape; its prebuilt form if even that fails."""
    try:
        return _encode(for_host(harness, event, _crash_deny(exc, _report(event, exc))))
    except BaseException:
        return fallback_deny(harness).replace(b"REASON", b"an internal error in the hook")


def _stderr(data: bytes) -> None:
    try:  # noqa: SIM105 - contextlib is too slow to import on the hot path
        posix.write(2, data)
    except OSError:
        pass


def guarded(argv: list[str], *, resident: bool = False) -> int:
    """:func:`main`; whatever escapes it still ends a gating hook with a deny, never a
    traceback (the Python hook's and the worker child's last line of defence)."""
    try:
        return main(argv, resident=resident)
    except BaseException:  # the last line of defence
        code = 0
        if argv[:1] and argv[0] in GATING and not _done[0]:
            _done[0] = True
            reason = b"an internal error in the hook"
            host = argv[2] if argv[1:2] == ["--harness"] and len(argv) > 2 else "claude"
            if not _write_out(fallback_deny(host).replace(b"REASON", reason)):
                code = 2
        return code


def cli() -> None:
    """What an installed hook runs: ``python -c "from smllm.hooks import cli; cli()" EVENT``.

    ``python -c`` skips ``runpy``, which ``python -m smllm hook`` would import on every call.
    Whatever escapes :func:`main` still ends a gating hook with a deny, never a traceback.
    """
    leave(guarded(sys.argv[1:]))


def _nothing_left_to_run() -> bool:
    """No thread, exit callback, tracer or profiler that the interpreter's teardown runs."""
    if "threading" in sys.modules or sys.gettrace() is not None or sys.getprofile() is not None:
        return False
    exits = sys.modules.get("atexit")  # coverage, weakref.finalize, logging register there
    return exits is None or exits._ncallbacks() == 0


def leave(code: int) -> NoReturn:
    """End a hook process with ``code`` once its output is written.

    The interpreter's teardown frees every module and object one by one (about 0.7 ms
    after the imports a hook makes, even with :func:`gc.freeze`) for a process whose memory
    the kernel takes back at once. When nothing is left for the teardown to run (no other
    thread, no ``atexit`` callback, no tracer) the process flushes stdout and stderr and
    ends with ``os._exit``; otherwise (or if a flush fails) with ``SystemExit`` as usual.
    """
    if _nothing_left_to_run():
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        except BaseException:  # noqa: S110 - the usual exit reports it
            pass
        else:
            posix._exit(code)
    raise SystemExit(code)
