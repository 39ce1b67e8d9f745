"""The CLI skeleton: version, help, wiring, and product.md §8's error format and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import REPO, smllm
from smllm import VERSION, cli


def test_version() -> None:
    """--version prints the package version."""
    proc = smllm("--version")
    assert (0, f"smllm {VERSION}\n") == (proc.returncode, proc.stdout)


def test_help_lists_every_command() -> None:
    """--help lists every registered command with its summary."""
    proc = smllm("--help")
    assert 0 == proc.returncode
    for name, cmd in cli.COMMANDS.items():
        assert f"  {name:<9}  {cmd.summary}\n" in proc.stdout


def test_no_arguments_is_a_usage_error() -> None:
    """Bare `smllm` prints help and exits 2."""
    assert 2 == smllm().returncode


def test_unknown_command_names_the_choices() -> None:
    """An unknown command: one error line with the valid choices, exit 2, no traceback."""
    proc = smllm("exprot")
    assert 2 == proc.returncode
    assert proc.stderr.startswith("smllm: error: unknown command 'exprot' (use one of: install, ")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_command_has_help(name: str) -> None:
    """Each subcommand answers --help with its usage and summary."""
    proc = smllm(name, "--help")
    assert 0 == proc.returncode, proc.stderr
    assert f"smllm {name}" in proc.stdout
    assert cli.COMMANDS[name].summary.split()[0].lower() in proc.stdout.lower()


def test_user_error_format_and_exit_1(tmp_path: object) -> None:
    """A user's mistake: `smllm: error: <what> (<how to fix>)`, exit 1."""
    proc = smllm("verify", "no-such-session")
    assert 1 == proc.returncode
    assert proc.stderr.startswith("smllm: error: no session 'no-such-session' in ")
    assert proc.stderr.rstrip().endswith(")")


def test_internal_error_is_reported_to_a_file(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """An unexpected exception: exit 3, one line naming the report file, no traceback."""
    def boom(argv: list[str]) -> int:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli, "_dispatch", boom)
    assert 3 == cli.main(["verify"])
    err = capsys.readouterr().err
    assert err.startswith("smllm: error: internal error: RuntimeError: kaboom (a report is in ")
    path = err.split("a report is in ", 1)[1].split(";", 1)[0]
    with open(path) as fh:
        assert "RuntimeError: kaboom" in fh.read()


def test_hook_subcommand_equals_the_installed_entry_point() -> None:
    """`smllm hook EVENT` (python -m smllm) answers exactly like the installed `-c` form."""
    import json

    from helpers import base, hook

    payload = base("PreToolUse", "cli-1", tool_name="Bash", tool_input={"command": "ls"},
                   tool_use_id="toolu_1", hook_event_name="PreToolUse")
    bad = dict(payload, tool_input="not a dict")
    via_cli = smllm("hook", "PreToolUse", input=json.dumps(bad).encode())
    via_entry = hook("PreToolUse", bad)
    assert (0, via_entry.stdout.decode()) == (via_cli.returncode, via_cli.stdout)
    assert '"permissionDecision":"deny"' in via_cli.stdout


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_command_is_documented(name: str) -> None:
    """Each subcommand appears as `smllm NAME` in the README or a docs page."""
    import re

    from helpers import REPO

    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    pattern = re.compile(rf"\bsmllm {name}\b")
    assert [] != [p.name for p in pages if pattern.search(p.read_text())]


@pytest.mark.parametrize(("args", "message"), [
    (["chain"], "smllm: error: the following arguments are required: EXPORT (see `smllm chain "
                "--help`)\n"),
    (["machine", "valdate"], "smllm: error: argument ACTION: invalid choice: 'valdate' (choose "
                             "from 'validate', 'list', 'draw') (see `smllm machine --help`)\n"),
    (["verify", "--nope"], "smllm: error: unrecognized arguments: --nope (see `smllm verify "
                           "--help`)\n"),
    (["reconcile", "3", "--outcome", "maybe"], "smllm: error: argument --outcome: invalid "
     "choice: 'maybe' (choose from 'applied', 'not-applied') (see `smllm reconcile --help`)\n"),
])
def test_argparse_errors_use_the_one_format(args: list[str], message: str) -> None:
    """Usage mistakes caught by argparse read `smllm: error: ...` (not `smllm X: error:`),
    exit 2, with no usage dump."""
    proc = smllm(*args)
    assert (2, "", message) == (proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize(("command", "how"), [
    (["reconcile", "3", "--outcome", "applied"], "--journal ID|PATH"),
    (["resume"], "`smllm resume ID|PATH`"),  # these two name the journal as an argument
    (["verify"], "`smllm verify ID|PATH`"),
])
def test_session_flag_on_a_journal_command_points_to_journal(command: list[str],
                                                             how: str) -> None:
    """--session names an smllm session; on a command that takes a Claude Code session's
    journal it is refused with the way that command names one instead."""
    proc = smllm(*command, "--session", "abc")
    prog = f"smllm {command[0]}"
    expected = (2, f"smllm: error: --session names an smllm (state-machine) session, not a "
                   f"Claude Code session's journal ({prog} --session abc) (choose the journal "
                   f"with {how} or --last; `{prog} --help`)\n")
    assert expected == (proc.returncode, proc.stderr)


def test_export_takes_the_recipes_session_flag(tmp_path: Path) -> None:
    """`smllm export --session ID|PATH` (the audit recipe's spelling) exports the same
    document as `--journal`."""
    log = next((REPO / "tests" / "fixtures" / "sessions" / "billing").rglob("session.jsonl"))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    runs = [smllm("export", "--session", str(log), "--out", str(a)),
            smllm("export", "--journal", str(log), "--out", str(b))]
    assert [0, 0] == [r.returncode for r in runs]
    assert a.read_bytes() == b.read_bytes()
