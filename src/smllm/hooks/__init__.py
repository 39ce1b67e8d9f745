"""``smllm hook EVENT``: one Claude Code hook event, stdin JSON → stdout JSON.

The contract (product.md §4, claude-code-contract.md §2):

* stdout carries exactly one JSON object, or nothing. Anything else printed while a
  handler runs is diverted to stderr, so a stray ``print`` cannot cancel a decision.
* The exit status is 0: decisions travel in the JSON.
* A gating hook (PreToolUse) that cannot read its input or crashes **denies** with the
  reason and journals it when it can; an observing hook exits quietly.
* Nothing heavy is imported here: each handler module is imported by name, on use.
"""

from __future__ import annotations

import os
import sys

from smllm.hooks._context import HookContext, HookInputError, parse_input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: host event -> handler module in this package (a static registry, imported lazily)
HANDLERS: dict[str, str] = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use",
    "Stop": "stop",
    "SubagentStart": "subagent",
    "SubagentStop": "subagent",
    "SessionEnd": "session_end",
}

#: events whose hook decides (fail closed) rather than observes (fail open)
GATING = frozenset({"PreToolUse"})

MAX_INPUT = 8 * 1024 * 1024


def _max_input() -> int:
    raw = os.environ.get("SMLLM_MAX_INPUT")
    return int(raw) if raw and raw.isdigit() else MAX_INPUT


def deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _read_stdin(limit: int) -> bytes:
    stream = sys.stdin.buffer if sys.stdin is not None else None
    if stream is None:
        return b""
    return stream.read(limit + 1)


def run(event: str, raw: bytes) -> dict[str, Any] | None:
    """Handle one event; return the JSON output object (or None for no output)."""
    gating = event in GATING
    try:
        if event not in HANDLERS:
            _journal_other(event, raw)
            return None
        limit = _max_input()
        if len(raw) > limit:
            raise HookInputError(
                f"hook input is {len(raw)} bytes or more, over the {limit}-byte limit",
                "raise SMLLM_MAX_INPUT if such inputs are expected",
            )
        payload = parse_input(event, raw)
        ctx = HookContext.create(event, payload)
        name = f"smllm.hooks.{HANDLERS[event]}"
        __import__(name)
        result: dict[str, Any] | None = sys.modules[name].handle(ctx)
        return result
    except HookInputError as exc:
        _journal_rejection(event, raw, exc.render())
        return deny(f"smllm refused this call: {exc.render()}") if gating else None
    except Exception as exc:
        where = _report(event, exc)
        if gating:
            return deny(
                f"smllm could not decide on this call and denies it (fail closed): "
                f"{type(exc).__name__}: {exc} (report: {where})"
            )
        return None


def _journal_rejection(event: str, raw: bytes, reason: str) -> None:
    """Record a rejected input in its session's journal, if a session id can be found."""
    try:
        from smllm import journal  # noqa: PLC0415
        from smllm.hooks._context import salvage_session_id  # noqa: PLC0415

        sid = salvage_session_id(raw)
        if sid is None:
            return
        path = journal.locate(sid, create=True)
        journal.append(
            path,
            [
                journal.fact(
                    "hook.input_rejected",
                    {"hook_event_name": event, "reason": reason, "input_bytes": len(raw)},
                )
            ],
        )
    except Exception:  # noqa: S110 - best effort: the decision matters more
        pass


def _journal_other(event: str, raw: bytes) -> None:
    """Events without a handler are journaled as ``host.event`` facts."""
    try:
        payload = parse_input(event, raw)
        ctx = HookContext.create(event, payload)
        from smllm import journal  # noqa: PLC0415

        fields = {k: v for k, v in payload.items() if k not in ("transcript_path",)}
        with journal.transaction(ctx.log_path) as txn:
            txn.append(journal.fact("host.event", fields))
    except Exception as exc:
        _report(event, exc)


def _report(event: str, exc: BaseException) -> str:
    """Write a crash report to the logs folder; return its path (never raises)."""
    try:
        import traceback  # noqa: PLC0415

        from smllm.base import clock, paths  # noqa: PLC0415

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


def main(argv: list[str]) -> int:
    """``smllm hook EVENT``: always exit 0 with at most one JSON object on stdout."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(
            "usage: smllm hook EVENT < hook-input.json\n\n"
            "Run one Claude Code hook event. Events: " + ", ".join(HANDLERS) + ".\n"
        )
        return 0 if argv else 2
    event = argv[0]
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # nothing a handler prints can reach Claude Code's parser
    try:
        try:
            raw = _read_stdin(_max_input())
        except (OSError, ValueError):
            raw = b""
        result = run(event, raw)
    finally:
        sys.stdout = real_stdout
    if result is not None:
        from smllm.base import jsonfast  # noqa: PLC0415

        real_stdout.write(jsonfast.dumps(result))
        real_stdout.flush()
    return 0


def cli() -> None:
    """What an installed hook runs: ``python -c "from smllm.hooks import cli; cli()" EVENT``.

    ``python -c`` skips ``runpy``, which ``python -m smllm`` would import on every call.
    """
    raise SystemExit(main(sys.argv[1:]))
