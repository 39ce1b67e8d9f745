"""The ``smllm`` command line: wiring only.

Each subcommand lives in ``smllm.commands.<module>`` with two functions,
``add_arguments(parser)`` and ``run(args) -> int``. Only the module of the
command being run is imported, so ``smllm fire`` and ``smllm hook`` start fast.
``smllm hook EVENT`` skips argparse altogether: it is the hot path; so does a plain
``smllm fire`` (``commands.fire.fast``), which agents run at every step.
"""

from __future__ import annotations

import os
import sys

from smllm import VERSION
from smllm.base.errors import SmllmError, UsageError

TYPE_CHECKING = False  # typing costs milliseconds at every start
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import NoReturn


class Command:
    """A subcommand: its module under ``smllm.commands`` and its one-line summary."""

    __slots__ = ("module", "summary")

    def __init__(self, module: str, summary: str) -> None:
        self.module = module
        self.summary = summary


COMMANDS: dict[str, Command] = {
    "install": Command("install", "add smllm's hooks to Claude Code settings"),
    "uninstall": Command("uninstall", "remove exactly what `smllm install` added"),
    "doctor": Command("doctor", "say what is installed where and whether the hooks would fire"),
    "hook": Command("hook", "run one Claude Code hook event (stdin JSON -> stdout JSON)"),
    "fire": Command("fire", "fire a state-machine event in an smllm session"),
    "status": Command("status", "show where the current smllm session is"),
    "machine": Command("machine", "validate, list and draw state machines"),
    "session": Command("session", "list state-machine sessions (sm-…) and show their audit"),
    "mcp": Command("mcp", "serve the `smllm` MCP tool on stdio"),
    "export": Command("export", "export a session's journal as one JSON document"),
    "resume": Command("resume", "reconcile a crashed session and re-open it in Claude Code"),
    "reconcile": Command("reconcile", "record the verified outcome of an unknown effect"),
    "tripwire": Command("tripwire", "answer a change to smllm's protected files (accept, revert)"),
    "ledger": Command("ledger", "one row per journaled action with its authorization"),
    "chain": Command("chain", "the approval evidence chain of an export"),
    "verify": Command("verify", "check a journal's hash chain and invariants"),
    "policy": Command("policy", "explain approval decisions and manage grants"),
    "sessions": Command("sessions", "list Claude Code sessions (their journals), newest first"),
    "search": Command("search", "find records and effects across sessions"),
    "ship": Command("ship", "send journals to the team store (PostgreSQL)"),
    "store": Command("store", "set up and inspect the team store"),
    "serve": Command("serve", "a read-only web viewer of sessions, approvals and machines"),
}


def _version() -> str:
    return f"smllm {VERSION}"


def _top_help() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = [
        "usage: smllm [-h] [--version] COMMAND ...",
        "",
        "Make a Claude Code session accountable and steerable.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {cmd.summary}" for name, cmd in COMMANDS.items()]
    lines += ["", "Run `smllm COMMAND --help` for a command's options."]
    return "\n".join(lines) + "\n"


def _parser_class() -> type[argparse.ArgumentParser]:
    """argparse, with its errors in smllm's one format (``smllm: error: ...``, exit 2)."""
    import argparse  # noqa: PLC0415 - `smllm hook` and a plain `smllm fire` never parse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message, f"see `{self.prog} --help`")

    return Parser


def build_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand (also used by the docs tests)."""
    import importlib  # noqa: PLC0415 - with argparse: a command that parses options only

    cmd = COMMANDS[name]
    module = importlib.import_module(f"smllm.commands.{cmd.module}")
    parser = _parser_class()(prog=f"smllm {name}", description=cmd.summary)
    module.add_arguments(parser)
    parser.set_defaults(_run=module.run)
    return parser


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(_top_help())
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        sys.stdout.write(_version() + "\n")
        return 0
    name, rest = argv[0], argv[1:]
    if name == "hook":
        from smllm.hooks import main as hook_main  # noqa: PLC0415 - only the command that runs

        return hook_main(rest)
    if name == "mcp" and not rest:  # Claude Code starts it with every session: no argparse
        from smllm.commands.mcp import serve  # noqa: PLC0415 - only the command that runs

        return serve()
    if name == "fire":
        from smllm.commands.fire import fast  # noqa: PLC0415 - only the command that runs

        code = fast(rest)
        if code is not None:
            return code
    if name not in COMMANDS:
        choices = ", ".join(COMMANDS)
        raise UsageError(f"unknown command {name!r}", f"use one of: {choices}")
    parser = build_parser(name)
    args = parser.parse_args(rest)
    result: int = args._run(args)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``smllm`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except SmllmError as exc:
        sys.stderr.write(f"smllm: error: {exc.render()}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        return _read_only(exc) if getattr(exc, "errno", None) == 30 else _report_crash(exc)


def _read_only(exc: BaseException) -> int:
    """EROFS: inside Claude Code's sandbox, smllm's store is read-only to commands."""
    sys.stderr.write(
        f"smllm: error: cannot write {getattr(exc, 'filename', '?')}: read-only file system "
        f"(inside Claude Code's sandbox smllm's store is read-only to commands; the agent fires "
        f"events through the smllm MCP tool, and a person runs this command outside the "
        f"session)\n")
    return 1


def _report_crash(exc: BaseException) -> int:
    import traceback  # noqa: PLC0415 - a crash only

    from smllm.base import clock, paths  # noqa: PLC0415 - a crash only

    report = "".join(traceback.format_exception(exc))
    where = "stderr"
    try:
        logs = paths.ensure_private_tree(paths.logs_root(), paths.state_root())
        log = os.path.join(logs, f"crash-{clock.now_ms()}.log")
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, f"{_version()}\nargv: {sys.argv!r}\n\n{report}".encode())
        finally:
            os.close(fd)
        where = log
    except OSError:
        sys.stderr.write(report)
    sys.stderr.write(
        f"smllm: error: internal error: {type(exc).__name__}: {exc} "
        f"(a report is in {where}; please file it with the smllm developers)\n"
    )
    return 3
