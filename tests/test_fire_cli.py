"""`smllm fire` command lines: the argparse-free fast path and its fallbacks."""


from __future__ import annotations

from pathlib import Path

import pytest

from machine_project import Project
from smllm.commands.fire import fast
from smllm.machine import locations


@pytest.mark.parametrize("argv", [
    ["--session", "{key}", "reproduced", "--param", "bugId=BUG-7"],
    ["reproduced", "--session={key}", "--param=bugId=BUG-7"],
    ["--param", "bugId=BUG-7", "reproduced", "--session", "{key}", "--json"],
])
def test_fast_path_spellings(tmp_path: Path, argv: list[str],
                             capsys: pytest.CaptureFixture[str]) -> None:
    """Every spelling argparse accepts fires the same event with the same params."""
    project = Project(tmp_path / "p")
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    code = fast([a.replace("{key}", key) for a in argv])
    last = locations.read_audit(key)[-1]
    assert (0, "reproduced", {"bugId": "BUG-7"}) == (code, last["event"], last["params"])
    assert capsys.readouterr().out.startswith('{"ok":true' if "--json" in argv else "<smllm>")


@pytest.mark.parametrize("argv", [["--help"], [], ["-h", "x"], ["a", "b"], ["--session"],
                                  ["x", "--verbose"]])
def test_fast_path_leaves_the_rest_to_argparse(argv: list[str]) -> None:
    """Help, missing or extra arguments and unknown flags fall back to argparse."""
    assert fast(argv) is None


@pytest.mark.parametrize(("args", "code", "stderr"), [
    (["fire", "--help"], 0, ""),
    (["fire"], 2, "smllm: error: the following arguments are required: EVENT (see `smllm fire "
                  "--help`)\n"),
    (["fire", "x", "--param", "bad"], 2,
     "smllm: error: --param 'bad' is not NAME=VALUE (write e.g. --param bugId=BUG-7)\n"),
    (["fire", "x", "--param", "a=1", "--param", "a=2"], 2,
     "smllm: error: --param a is given twice (give each param once)\n"),
])
def test_cli_usage(tmp_path: Path, args: list[str], code: int, stderr: str) -> None:
    """Usage mistakes exit 2 with one line on stderr, never a traceback."""
    proc = Project(tmp_path / "p").cli(*args)
    assert (code, stderr) == (proc.returncode, proc.stderr[-len(stderr):] if stderr else
                              proc.stderr)
