"""The parser's data: words, redirections, simple commands, scripts, and the environment."""

from __future__ import annotations

MAX_DEPTH = 12
META = frozenset(" \t\n;&|()<>")


class Word:
    """One shell word: its source text and, when knowable, its value."""

    __slots__ = ("glob", "quoted", "raw", "value")

    def __init__(
        self, raw: str, value: str | None, glob: bool = False, quoted: bool = False
    ) -> None:
        self.raw = raw
        self.value = value
        self.glob = glob
        self.quoted = quoted

    def __repr__(self) -> str:
        return f"Word({self.raw!r}, {self.value!r})"


class Redirect:
    """``op`` (``>``, ``>>``, ``<<``, ``<<<``, …), its target word and any heredoc body."""

    __slots__ = ("body", "body_known", "op", "target")

    def __init__(
        self, op: str, target: Word | None, body: str | None = None, body_known: bool = True
    ) -> None:
        self.op = op
        self.target = target
        self.body = body
        self.body_known = body_known


class Simple:
    """A simple command: assignments, words, redirections and where its stdin comes from."""

    __slots__ = ("assigns", "background", "nested", "redirects", "stdin", "words")

    def __init__(self, nested: bool = False) -> None:
        self.words: list[Word] = []
        self.assigns: list[tuple[str, str | None]] = []  # NAME=value before the words
        self.redirects: list[Redirect] = []
        self.stdin: Simple | None = None
        self.nested = nested
        self.background = False

    def empty(self) -> bool:
        return not (self.words or self.assigns or self.redirects)


class Script:
    """Every simple command of a command string, in order, and the syntax problems."""

    __slots__ = ("commands", "errors", "functions")

    def __init__(self, commands: list[Simple], errors: list[str], functions: list[str]) -> None:
        self.commands = commands
        self.errors = errors
        self.functions = functions


class Env:
    __slots__ = ("assigned", "cwd", "home", "tmpdir")

    def __init__(self, cwd: str, home: str, tmpdir: str) -> None:
        self.cwd = cwd
        self.home = home
        self.tmpdir = tmpdir
        self.assigned: set[str] = set()


def static_output(commands: list[Simple], env: Env) -> str | None:
    """What ``$(…)`` prints when it is one static ``echo``/``printf``/``pwd``."""
    if len(commands) != 1:
        return None
    cmd = commands[0]
    if cmd.redirects or cmd.assigns or not cmd.words:
        return None
    values = [w.value for w in cmd.words]
    if any(v is None for v in values) or any(w.glob for w in cmd.words):
        return None
    return _printed([v for v in values if v is not None], env)


def _printed(argv: list[str], env: Env) -> str | None:
    """What ``pwd``, ``echo`` and a plain ``printf`` print (None for anything else)."""
    if argv == ["pwd"]:
        return env.cwd
    if argv[0] == "echo":
        args = argv[1:]
        while args and args[0] in ("-n", "-e", "-E"):
            args = args[1:]
        return " ".join(args)
    if argv[0] == "printf" and len(argv) == 2 and "%" not in argv[1] and "\\" not in argv[1]:
        return argv[1]
    return None
