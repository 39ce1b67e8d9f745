"""The analyser's data-driven pieces, each on its own table: option reading, settings that
run code, task files, secret sources and sinks, paths through links."""

from __future__ import annotations

from pathlib import Path

import pytest

from smllm.gate.shell import _environ, _flags, _flows, _tasks, analyse
from smllm.gate.shell._model import Context

LONG = [
    ("--har", ("--hard", "--soft", "--mixed"), "--hard"),
    ("--forc", ("--force", "--force-with-lease", "--force-if-includes"), "--forc"),
    ("--force", ("--force", "--force-with-lease"), "--force"),
    ("--mirr=x", ("--mirror", "--merge"), "--mirror=x"),
    ("--m", ("--mirror", "--merge"), "--m"),
    ("-f", ("--force",), "-f"),
    ("--recur", ("--recursive", "--dir"), "--recursive"),
]


@pytest.mark.parametrize(("word", "known", "expected"), LONG)
def test_long_options_resolve_as_getopt_does(word: str, known: tuple[str, ...],
                                             expected: str) -> None:
    """A unique prefix spells out its option; an ambiguous one, or a short one, does not."""
    assert expected == _flags.long_option(word, known)


SUBCOMMANDS = [
    (["-n", "prod", "delete", "pod"], frozenset({"-n"}), 2),
    (["--namespace=prod", "get", "x"], frozenset({"--namespace"}), 1),
    (["-v", "--", "run"], frozenset(), 2),
    (["-x"], frozenset(), 1),
]


@pytest.mark.parametrize(("values", "with_arg", "expected"), SUBCOMMANDS)
def test_subcommand_after_global_options(values: list[str], with_arg: frozenset[str],
                                         expected: int) -> None:
    """The verb is found past global options and their values."""
    assert expected == _flags.subcommand(values, with_arg)


def _read(values: list[str | None], spec: _flags.Options) -> list[tuple[str, str | None]]:
    """(name, value) for each item the reader yields: ``""`` names an operand (its word
    is the value), ``--`` the end of the options."""
    out: list[tuple[str, str | None]] = []
    for arg in _flags.read(values, spec):
        value = values[arg.at] if arg.name == "" else (
            arg.attached if arg.attached is not None else
            values[arg.value] if arg.value >= 0 else None)
        out.append((arg.name, value))
    return out


POSIX = _flags.Options(("-o", "--out"))
CLUSTERS = _flags.Options(("-o", "-c"), clusters=True)
GNU = _flags.Options(("-o",), permute=True, longs=("--verbose", "--version"))
ENV_LIKE = _flags.Options(("-C", "--chdir"), dash=True, longs=("--null",))
READS = [
    # POSIX order: the first operand ends the options (and is the last item)
    (["-v", "-o", "f", "x", "-y"], POSIX, [("-v", None), ("-o", "f"), ("", "x")]),
    (["-ofile", "--out=g", "--out", "h", "run"], POSIX,
     [("-o", "file"), ("--out", "g"), ("--out", "h"), ("", "run")]),
    (["-v", "--", "-x", "y"], POSIX, [("-v", None), ("--", None), ("", "-x")]),
    (["-", "x"], POSIX, [("", "-")]),
    ([None, "-v"], POSIX, [("", None)]),
    (["-o"], POSIX, [("-o", None)]),
    # a cluster: the first letter that takes a value takes the rest, or the next word
    (["-qc", "cmd", "x"], CLUSTERS, [("-c", "cmd"), ("", "x")]),
    (["-qofile", "x"], CLUSTERS, [("-o", "file"), ("", "x")]),
    (["-qc=cmd"], CLUSTERS, [("-c", "cmd")]),
    (["-qv", "x"], CLUSTERS, [("-qv", None), ("", "x")]),
    # GNU order: options after operands; after -- only operands
    (["a", "-o", "f", "b", "--", "-o"], GNU,
     [("", "a"), ("-o", "f"), ("", "b"), ("--", None), ("", "-o")]),
    # an unambiguous prefix of a known long option reads as it; an ambiguous one does not
    (["--verb", "--ver", "x"], GNU, [("--verbose", None), ("--ver", None), ("", "x")]),
    (["-", "--chd=/", "--nu", "x"], ENV_LIKE,
     [("-", None), ("--chdir", "/"), ("--null", None), ("", "x")]),
]


@pytest.mark.parametrize(("values", "spec", "expected"), READS)
def test_the_argv_reader_reads_as_getopt(values: list[str | None], spec: _flags.Options,
                                         expected: list[tuple[str, str | None]]) -> None:
    """Options with their values, operands and the end of options, as the spec says."""
    assert expected == _read(values, spec)


READER_FIXES = [
    # GNU env abbreviates its long options and clusters its short ones (getopt)
    ("env --split-str='rm -rf ~'", "deny"),
    ("env -iS 'rm -rf ~'", "deny"),
    ("env --chd=/ rm -rf etc", "deny"),
    # a cluster's letter takes the rest of the word as its value (-u foo), not the next word
    ("strace -ufoo -o x rm -rf ~", "deny"),
    # a timer set with its value in the next word is a timer too
    ("systemd-run --on-active 5 ls", "ask"),
    ("env -i FOO=1 ls", "allow"),
]


@pytest.mark.parametrize(("command", "expected"), READER_FIXES)
def test_launchers_read_their_options_as_getopt(command: str, expected: str) -> None:
    """env and the launchers read their options with the one argv reader: abbreviations,
    clusters and values in the next word no longer hide the command they run."""
    assert expected == analyse(command, cwd="/work/p", home="/home/u").decision


GIT_KEYS = [
    ("core.fsmonitor", "rm -rf ~", "shell"),
    ("core.fsmonitor", "true", None),
    ("core.hooksPath", "/tmp/h", "code"),
    ("diff.lfs.textconv", "cat", "shell"),
    ("filter.lfs.smudge", "git-lfs smudge", "shell"),
    ("includeIf.gitdir:~/w/.path", "x", "code"),
    ("pager.log", "less", "shell"),
    ("user.email", "me@example.com", None),
    ("protocol.ext.allow", "always", "code"),
]


@pytest.mark.parametrize(("key", "value", "expected"), GIT_KEYS)
def test_git_settings_that_run_code(key: str, value: str, expected: str | None) -> None:
    """git settings are classed: a command line git runs, code it loads, or nothing."""
    assert expected == _environ.git_key(key, value)


ENV = [("GIT_SSH_COMMAND", "shell"), ("BASH_ENV", "script"), ("LD_PRELOAD", "library"),
       ("NODE_OPTIONS", "options"), ("GIT_CONFIG_KEY_3", "git-config"), ("HOME", None)]


@pytest.mark.parametrize(("name", "expected"), ENV)
def test_environment_variables_that_run_code(name: str, expected: str | None) -> None:
    """Variables are classed by what their value is."""
    assert expected == _environ.kind_of(name)


def test_code_loading_options() -> None:
    """Interpreter options that load code are told from ordinary ones."""
    cases = ["--require ./x.js", "--max-old-space-size=4096", "-MEvil", "-r ./y.js",
             "--enable-source-maps", "-javaagent:/x.jar"]
    assert [True, False, True, True, False, True] == [_environ.loads_code(c) for c in cases]


MAKEFILE = """\
BUILD := build
OUT = $(BUILD)/out
CC ?= clang
.PHONY: all clean
all: $(OUT)
\t@echo done
clean: ; rm -rf $(BUILD)
$(OUT): src.c
\t$(CC) -o $@ $< && cp $@ $(DEST)/bin
define RECIPE
rm -rf /
endef
include other.mk
"""


def test_makefiles_are_read_as_make_reads_them() -> None:
    """Rules, prerequisites, inline recipes, defaults, includes; variables expanded,
    automatic ones set, unknown ones left unknown, $(shell) kept as a substitution."""
    mk = _tasks.parse_makefile(MAKEFILE)
    assert ("all", True) == (mk.default, mk.includes)
    assert (["rm -rf $(BUILD)"], ["$(OUT)"]) == (mk.rules["clean"][1], mk.rules["all"][0])
    auto = {"@": "build/out", "<": "src.c"}
    expanded = _tasks.make_expand(mk.rules["$(OUT)"][1][0], mk.variables, auto)
    assert "clang -o build/out src.c && cp build/out ${DEST}/bin" == expanded
    assert "x $(date) $ y" == _tasks.make_expand("x $(shell date) $$ y", {}, {})
    assert ["echo done"] == _tasks.recipe_lines(["@-echo done"])


def test_justfiles_are_read_as_just_reads_them() -> None:
    """Recipes with parameters and dependencies; {{var}} filled from variables."""
    jf = _tasks.parse_justfile(
        'target := "dist"\n\ndefault: build\n\nbuild mode="dev": clean\n    make {{mode}}\n'
        '\nclean:\n    rm -rf {{target}}\n')
    assert "default" == jf.first
    assert (["clean"], ["make {{mode}}"], ["mode"]) == jf.recipes["build"]
    assert "rm -rf dist" == _tasks.just_expand(jf.recipes["clean"][1][0], jf.variables)
    assert "rm -rf ${other}" == _tasks.just_expand("rm -rf {{other}}", {})


REMOTE = [("host:path", True), ("user@host:/tmp", True), ("./a:b", False),
          ("/abs/path", False), ("C", False), ("-e", False), ("~/x", False)]


@pytest.mark.parametrize(("value", "expected"), REMOTE)
def test_remote_operands(value: str, expected: bool) -> None:
    """scp/rsync operands that name another machine."""
    assert expected == _flows.remote(value)


SECRETS = [
    ("/home/me/.ssh/id_rsa", "store"),
    ("/home/me/.ssh/id_rsa.pub", None),
    ("/home/me/.ssh/known_hosts", None),
    ("/home/me/.aws/credentials", "store"),
    ("/work/p/.env", "file"),
    ("/work/p/.env.production", "file"),
    ("/work/p/.env.example", None),
    ("/work/p/certs/server.key", "store"),
    ("/work/p/src/env.py", None),
    ("/etc/shadow", "store"),
]


@pytest.mark.parametrize(("path", "expected"), SECRETS)
def test_what_a_path_holds(path: str, expected: str | None) -> None:
    """Credential stores and keys, .env files (templates excepted), and ordinary files."""
    ctx = Context(root="/work/p", cwd="/work/p", home="/home/me")
    assert expected == ctx.secret_kind(path)


def test_links_are_followed_for_deletes_and_writes(tmp_path: Path) -> None:
    """A path through a link is judged where it lands; rm of the link itself is not."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "h").symlink_to("/home/me")
    ctx = Context(root=str(root), cwd=str(root), home="/home/me")
    from smllm.gate.shell._parse import Word

    expected = ("workspace", "critical", "sensitive")
    assert expected == (ctx.where(Word("h", "h"), last=False), ctx.where(Word("h/", "h/")),
                        ctx.where(Word("h/.bashrc", "h/.bashrc")))
