# ruff: noqa: PLR0911 - a shell grammar is a big case analysis; /tmp is data here
"""The analyser's core: walk a parsed script and judge each simple command.

Each simple command is reduced to its effective argv (wrappers such as ``sudo``,
``env``, ``timeout`` or ``busybox`` stripped, ``bash -c``/``eval`` strings parsed and
analysed recursively) and handed to the handler its program has in the table of
:mod:`smllm.gate.shell._programs`. A command whose name is not known statically (a
variable, a substitution, a glob) is escalated, never allowed.

Every family module (``_fs``, ``_git``, ``_launchers``, ...) imports this module for
what handlers share (:func:`judge_argv`, :func:`nested`, :func:`write_target`, ...);
this module imports none of them: it finds a handler through the table, which loads a
family's module on first use.
"""

from __future__ import annotations

import os

from smllm.base.digest import tagged
from smllm.gate.shell import _programs
from smllm.gate.shell._model import (
    Analysis,
    CommandReport,
    Context,
    Finding,
    LazyRe,
    is_lower_assignment,
    worst,
)
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Script, Simple, Word, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.gate.shell._model import Decision

MAX_LEN = 200_000
_CONFUSABLE_RE = LazyRe(
    "[\u2010-\u2015\u2212\ufe58\ufe63\uff0d\u00a0\u1680\u2000-\u200f"
    "\u2028\u2029\u202f\u205f\u3000\ufeff]"
)
_FORK_BOMB_RE = LazyRe(r"(\S+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&")


def analyse_text(text: str, ctx: Context) -> Analysis:
    """Analyse one command string in ``ctx`` (never raises)."""
    if len(text) > MAX_LEN:
        f = Finding("shell.too-complex", "ask", f"command is {len(text)} characters long")
        return Analysis("ask", (), (f,))
    if ctx.depth > 8 or ctx.budget[0] <= 0:
        f = Finding("shell.too-complex", "ask", "command nests shells too deeply to analyse")
        return Analysis("ask", (), (f,))
    ctx.budget[0] -= 1
    script = parse(text, cwd=ctx.cwd or ctx.root, home=ctx.home, tmpdir=ctx.tmpdir)
    return analyse_script(script, text, ctx)


def analyse_script(script: Script, text: str, ctx: Context) -> Analysis:
    findings: list[Finding] = []
    for err in script.errors:
        findings.append(Finding("shell.syntax", "ask", f"cannot parse the command: {err}"))
    if not text.isascii() and _CONFUSABLE_RE.search(text):
        findings.append(
            Finding(
                "shell.confusable", "ask", "look-alike Unicode dashes or spaces in the command"
            )
        )
    if "()" in text and _FORK_BOMB_RE.search(text):
        findings.append(Finding("sys.destroy", "deny", "fork bomb"))
    reports: list[CommandReport] = []
    for cmd in script.commands:
        if cmd.words and cmd.words[0].value in script.functions and not cmd.nested:
            reports.append(CommandReport(_argv(cmd.words), (), False))
            continue
        found, safe = judge_simple(cmd, ctx)
        reports.append(CommandReport(_argv(cmd.words) or ("(redirection)",), tuple(found), safe))
    decision = worst([f.decision for f in findings] + [r.decision for r in reports])
    return Analysis(decision, tuple(reports), tuple(findings))


def _argv(words: list[Word]) -> tuple[str, ...]:
    return tuple(w.value if w.value is not None else w.raw for w in words)


def nested(text: str, ctx: Context, via: str) -> list[Finding]:
    """Findings of a command string run by ``via`` (``bash -c``, ``eval``, …)."""
    sub = analyse_text(text, ctx.child())
    return [Finding(f.rule, f.decision, f"{via}: {f.reason}") for f in sub.all_findings()]


def stdin_text(cmd: Simple) -> tuple[str | None, str]:
    """(text fed to ``cmd`` on stdin if statically known, a description of the source)."""
    for r in cmd.redirects:
        if r.op in ("<<", "<<-", "<<<"):
            return (r.body if r.body_known else None), "a heredoc"
        if r.op == "<" and r.target is not None:
            return None, f"the file {r.target.raw}"
    src = cmd.stdin
    if src is None:
        return None, "the terminal"
    words = [w.value for w in src.words]
    if src.words and all(v is not None for v in words) and not src.redirects:
        argv = [v for v in words if v is not None]
        name = os.path.basename(argv[0])
        if name == "echo":
            args = argv[1:]
            while args and args[0] in ("-n", "-e", "-E"):
                args = args[1:]
            return " ".join(args) + "\n", "echo"
        if name == "printf" and len(argv) == 2:
            return argv[1].replace("\\n", "\n"), "printf"
    first = src.words[0].value if src.words else None
    return None, f"the output of {first or 'a command'}"


def run_script_file(name: str, word: Word, ctx: Context) -> list[Finding]:
    """A shell running a script file: analyse the file when it can be read."""
    text = read_script(word, ctx)
    if text is None:
        shown = word.value if word.value is not None else word.raw
        return [
            Finding(
                "shell.unread-script",
                "ask",
                f"{name} runs the script {shown}, which smllm cannot read",
            )
        ]
    return nested(text, ctx, f"{name} {word.value}")


def read_script(word: Word, ctx: Context) -> str | None:
    """The text of the script file ``word`` names (None: cannot be read); its digest is
    kept in ``ctx.scripts`` so that the check after the run can tell if it changed."""
    if word.value is None or word.glob:
        return None
    path = ctx.resolve(word.value)
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(256 * 1024 + 1)
    except OSError:
        return None
    if len(data) > 256 * 1024:
        return None
    ctx.scripts[path] = tagged(data)  # what was analysed, for the check after the run
    return data.decode("utf-8", "replace")


def stdin_script(name: str, cmd: Simple, ctx: Context) -> list[Finding]:
    """A shell or ``source`` reading code on stdin: analyse it when it is known."""
    text, source = stdin_text(cmd)
    if text is not None:
        return nested(text, ctx, f"{name} reading {source}")
    if source == "the terminal":
        return []
    if re.search(r"\b(curl|wget|fetch|http|nc|ncat|aria2c)\b", source):
        return [
            Finding(
                "shell.remote-code", "ask", f"{name} runs code downloaded at run time ({source})"
            )
        ]
    return [
        Finding(
            "shell.stdin-script",
            "ask",
            f"{name} runs code read from {source}, unknown until run time",
        )
    ]


def judge_simple(cmd: Simple, ctx: Context) -> tuple[list[Finding], bool]:
    """Findings for one simple command, and whether it is known to be read-only."""
    findings = _redirects(cmd, ctx)
    if not cmd.words:
        return findings, not findings
    found, safe = judge_argv(list(cmd.words), cmd, ctx)
    return findings + found, safe and not findings


_RESERVED = frozenset(
    {"{", "}", "!", "(", ")", "then", "do", "else", "time", "if", "while", "until", "elif"}
)


def judge_argv(words: list[Word], cmd: Simple, ctx: Context) -> tuple[list[Finding], bool]:
    """Judge an argv (the command word first): the handler of its program, if any.

    A program without a handler runs its arguments as data: no finding, and known to
    be read-only only when the table lists it so.
    """
    name, problem = command_name(words[0])
    if problem is not None or name is None:
        return [problem] if problem else [], False
    args = words[1:]
    if (is_lower_assignment(name) or name in _RESERVED) and args:
        return judge_argv(args, cmd, ctx)  # an assignment after a launcher (sudo FOO=1 cmd)
    handler = _programs.lookup(name)
    if handler is not None:
        return handler(name, args, cmd, ctx)
    return [], name in _programs.READ_ONLY


def command_name(word: Word) -> tuple[str | None, Finding | None]:
    """The program a command word names, or why it cannot be known."""
    if word.value is None:
        return None, Finding(
            "shell.dynamic-command",
            "ask",
            f"the command name {word.raw!r} is only known at run time",
        )
    if word.glob:
        return None, Finding(
            "shell.dynamic-command", "ask", f"the command name {word.raw!r} is a glob pattern"
        )
    if not word.value:
        return None, Finding("shell.dynamic-command", "ask", "empty command name")
    name = os.path.basename(word.value)
    if not name.isascii():
        import unicodedata  # noqa: PLC0415 - rare

        name = unicodedata.normalize("NFKC", name)
    name = name.lower()
    return name, None


def write_target(word: Word | None, ctx: Context, *, truncate: bool, what: str) -> list[Finding]:
    """Judge a write to ``word`` (redirection, tee, cp/mv destination, in-place edit)."""
    if word is None:
        return []
    if word.value is not None and (
        word.value.startswith("/dev/fd/")
        or word.value in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
    ):
        return []
    where = ctx.where(word)
    shown = word.value if word.value is not None else word.raw
    if where == "dynamic":
        return [
            Finding(
                "fs.write-unresolved", "ask", f"{what} a path only known at run time ({shown})"
            )
        ]
    if where == "device":
        return [Finding("fs.destroy", "deny", f"{what} the device {shown}")]
    if where in ("sensitive", "critical"):
        return [Finding("fs.write-sensitive", "deny", f"{what} the protected path {shown}")]
    if where == "outside":
        return [Finding("fs.write-outside", "ask", f"{what} {shown}, outside the workspace")]
    if where == "workspace" and truncate and word.value is not None:
        path = ctx.resolve(word.value)
        if path and os.path.isfile(path) and os.path.getsize(path) > 0:
            return [Finding("fs.overwrite", "ask", f"{what} the existing file {shown}")]
    return []


def _redirects(cmd: Simple, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    for r in cmd.redirects:
        if r.op in (">", ">|", "&>", "<>"):
            out += write_target(r.target, ctx, truncate=True, what="overwrites")
        elif r.op in (">>", "&>>"):
            out += write_target(r.target, ctx, truncate=False, what="appends to")
        elif (
            r.op in (">&", "<&")
            and r.target is not None
            and r.target.value is not None
            and not _fd_duplication(r.target.value)
        ):
            out += write_target(r.target, ctx, truncate=True, what="overwrites")
    return out


def _fd_duplication(value: str) -> bool:
    r"""``\d+-?|-``: the target of ``>&`` / ``<&`` is a descriptor (or closes one)."""
    digits = value[:-1] if value.endswith("-") else value
    return value == "-" or (digits.isascii() and digits.isdigit())


def decide(findings: list[Finding]) -> Decision:
    return worst([f.decision for f in findings])
