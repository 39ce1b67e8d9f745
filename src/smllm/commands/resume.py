"""``smllm resume [--last | JOURNAL] [--check [--json]] [-- CLAUDE_ARGS...]``.

Prints the reconciliation (committed versus unknown effects) and, without
``--check``, re-opens the session in Claude Code: ``claude --resume <host id>
CLAUDE_ARGS...`` in the folder it ran in (what follows ``--`` is passed to ``claude``
as it is: a permission mode, ``--plugin-dir``, a model). The SessionStart hook then
records the crash and the resume. A session Codex drove (its ``session.start`` names the
harness) re-opens in Codex: ``codex resume <thread id> ARGS...``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from smllm.base.errors import SmllmError, UsageError
from smllm.commands import _output, _select
from smllm.journal import recovery

#: claude options that choose the session: resume chooses it
SESSION_OPTIONS = ("--resume", "-r", "--continue", "-c", "--session-id")

_Parse = Callable[..., tuple[argparse.Namespace, list[str]]]


def _passing_through(parse: _Parse) -> _Parse:
    """``parse_known_args`` that keeps every word after the first ``--`` for claude.

    argparse would read them as positionals (the journal), so they are cut off first."""
    def parse_known_args(args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        words = list(sys.argv[1:] if args is None else args)
        cut = words.index("--") if "--" in words else len(words)
        ns, extra = parse(words[:cut], namespace)
        ns.claude_args = words[cut + 1:]
        return ns, extra

    return parse_known_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _select.add_journal_choice(parser, positional=True)
    parser.add_argument("--check", action="store_true",
                        help="only print the reconciliation; do not start Claude Code")
    _output.add_json_flag(parser, "the reconciliation (implies --check)")
    parser.usage = parser.format_usage().removeprefix("usage: ").rstrip() + \
        " [-- CLAUDE_ARGS ...]"
    parser.epilog = ("CLAUDE_ARGS: every word after `--` is passed to `claude` after "
                     "`--resume <session id>`, e.g. `smllm resume --last -- "
                     "--permission-mode acceptEdits --model sonnet`.")
    parser.parse_known_args = _passing_through(  # type: ignore[method-assign, assignment]
        parser.parse_known_args)


def _check_claude_args(args: argparse.Namespace) -> list[str]:
    words: list[str] = getattr(args, "claude_args", [])
    if words and (args.check or args.json):
        raise UsageError("-- CLAUDE_ARGS is for starting Claude Code, and --check only "
                         "prints the reconciliation", "drop --check (and --json) or the "
                         "arguments after --")
    chosen = [w for w in words if w.split("=", 1)[0] in SESSION_OPTIONS]
    if chosen:
        raise UsageError(f"{chosen[0]} after -- would choose another session; smllm resume "
                         "passes --resume <session id> itself",
                         "name the session as smllm resume's JOURNAL (or --last) instead")
    return words


def _shown(words: list[str]) -> str:
    import shlex  # noqa: PLC0415 - only when arguments are passed through

    return "" if not words else " with " + shlex.join(words)


def run(args: argparse.Namespace) -> int:
    claude_args = _check_claude_args(args)
    log = _select.journal_of(args, default="picker-or-error", purpose="resume")
    report = recovery.reconciliation(log)
    if args.json:
        _output.write(recovery.report_data(report))
        return 0
    sys.stdout.write(recovery.report_text(report))
    if args.check:
        return 0
    if _harness_of(log) == "codex":
        return _reopen_in_codex(report, claude_args)
    claude = shutil.which("claude")
    if claude is None:
        raise SmllmError("claude is not on PATH",
                         "install Claude Code, or run `smllm resume --check` for the report only")
    folder = report.cwd or os.getcwd()
    if not os.path.isdir(folder):
        raise SmllmError(f"the session's folder {folder} no longer exists",
                         f"recreate it, or run `claude --resume {report.session_id}` yourself")
    sys.stdout.write(f"re-opening {report.session_id} in Claude Code ({folder})"
                     f"{_shown(claude_args)}\n")
    sys.stdout.flush()
    os.chdir(folder)
    os.execv(claude, [claude, "--resume", report.session_id, *claude_args])  # noqa: S606 - replace ourselves


def _harness_of(log: Path) -> str:
    """The agent CLI that drove the session (its ``session.start`` names any other than
    Claude Code)."""
    from smllm import journal  # noqa: PLC0415 - resume only

    for rec in journal.iter_records(log):
        payload = rec.get("payload") or {}
        body = payload.get("record") if isinstance(payload, dict) else None
        harness = body.get("harness") if isinstance(body, dict) else None
        return harness if isinstance(harness, str) else "claude"
    return "claude"


def _reopen_in_codex(report: recovery.Reconciliation, words: list[str]) -> int:
    """A Codex session: ``codex resume <id> CODEX_ARGS...`` in its folder (its SessionStart
    then records the crash and tells the agent each unknown effect)."""
    codex = shutil.which("codex")
    if codex is None:
        raise SmllmError("codex is not on PATH",
                         "install the Codex CLI, or run `smllm resume --check` for the report "
                         "only")
    folder = report.cwd or os.getcwd()
    if not os.path.isdir(folder):
        raise SmllmError(f"the session's folder {folder} no longer exists",
                         f"recreate it, or run `codex resume {report.session_id}` yourself")
    sys.stdout.write(f"re-opening {report.session_id} in Codex ({folder}){_shown(words)}\n")
    sys.stdout.flush()
    os.chdir(folder)
    os.execv(codex, [codex, "resume", str(report.session_id), *words])  # noqa: S606 - replace ourselves
