"""Parser cases that the tree-sitter oracle (tests/test_shell_oracle.py) led to: each split
here was wrong before, the way the oracle's difference showed, and bash agrees with it."""

from __future__ import annotations

import pytest

import test_shell
from smllm.gate.shell import analyse
from smllm.gate.shell._parse import parse

CWD, HOME = "/work/proj", "/home/me"


def _split(text: str) -> tuple[list[list[str | None]], list[str]]:
    script = parse(text, cwd=CWD, home=HOME)
    return [[w.value for w in c.words] for c in script.commands], script.errors


#: (command, the simple commands bash runs) with no syntax error
SPLITS: list[tuple[str, list[list[str | None]]]] = [
    # the operand of ${name:-…} is a word, not a script: `:-…` is no command, and inside
    # double quotes bash runs $(…) even between single quotes ("${x:-'$(id)'}" prints 'uid=…')
    ("""echo "${x:-'$(rm -rf ~)'}\"""", [["rm", "-rf", HOME], ["echo", None]]),
    ('cd "${DIR:-$(pwd)}"', [["pwd"], ["cd", None]]),
    ("echo ${a[$(id)]}", [["id"], ["echo", None]]),
    ('echo "${x:+`id -u`}"', [["id", "-u"], ["echo", None]]),
    # && and || inside [[ … ]] join tests, they do not end a command; < and > compare
    ("[[ -f x && -d y ]] && echo ok", [["echo", "ok"]]),
    ("[[ -f x || $(id) ]]", [["id"]]),
    # an array assignment's words are data; a substitution in them still runs
    ("arr=(a b); echo ${arr[@]}", [[], ["echo", None]]),
    ("files=(*.py\n  $(ls src)) make", [["ls", "src"], ["make"]]),
]
COMPARISONS = ['[[ "$a" > "$b" ]]', "[[ a < b && b > c ]] && echo ok"]
HIDDEN = [
    "echo \"${x:-'$(rm -rf ~)'}\"",
    ": \"${HOME:='$(git reset --hard)'}\"",
]
EVERYDAY = [
    "[[ -f x && -d y ]] && echo ok",
    '[[ -n "$a" || -z "$b" ]]',
    'cd "${DIR:-$(pwd)}"',
    "files=(*.py); echo ${files[@]}",
]
#: every command of this file (the parser oracle compares them with tree-sitter-bash's)
COMMANDS = [t for t, _ in SPLITS] + COMPARISONS + HIDDEN + EVERYDAY + ["arr=(a b) env"]


@pytest.mark.parametrize(("text", "expected"), SPLITS)
def test_split(text: str, expected: list[list[str | None]]) -> None:
    """The simple commands bash would run, with no syntax error."""
    assert (expected, []) == _split(text)


@pytest.mark.parametrize("text", COMPARISONS)
def test_double_bracket_comparisons_are_not_redirections(text: str) -> None:
    """``<`` and ``>`` in ``[[ … ]]`` compare strings: no file is read or written."""
    assert [] == [r.op for c in parse(text, cwd=CWD, home=HOME).commands for r in c.redirects]


def test_array_assignment_is_an_assignment() -> None:
    """``arr=(…)`` assigns ``arr`` (its value unknown) before the command."""
    [cmd] = parse("arr=(a b) env", cwd=CWD, home=HOME).commands
    assert ([("arr", None)], ["env"]) == (cmd.assigns, [w.value for w in cmd.words])


@pytest.mark.parametrize("text", ["arr=(a; rm -rf /)", "arr=(a b"])
def test_broken_array_assignment_is_a_syntax_error(text: str) -> None:
    """bash refuses these whole; so does the parser (a syntax error asks)."""
    assert [] != parse(text, cwd=CWD, home=HOME).errors


#: every operator whose operand bash expands (inside double quotes: quotes and all), around
#: each danger of test_shell.py
QUOTED_DEFAULTS = [
    f"""echo "${{x{op}'$( {danger} )'}}\""""
    for op in (":-", "-", ":=", "=", ":+", "+", ":?") for danger in test_shell.DANGEROUS
]


@pytest.mark.parametrize("text", HIDDEN + QUOTED_DEFAULTS)
def test_a_substitution_in_a_quoted_default_is_never_allowed(text: str) -> None:
    """The hidden command is analysed (it was allowed: the operand was read as a script in
    which the single quotes hid it)."""
    assert "allow" != analyse(text, cwd=CWD, home=HOME).decision


@pytest.mark.parametrize("text", EVERYDAY)
def test_everyday_forms_are_allowed(text: str) -> None:
    """These asked before (a false syntax error, or a command named ``:-…``)."""
    assert "allow" == analyse(text, cwd=CWD, home=HOME).decision
