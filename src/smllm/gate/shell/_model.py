# ruff: noqa: PLR0911, S108 - a shell grammar is a big case analysis; /tmp is data here
"""The analyser's vocabulary: decisions, findings, per-command reports, the context."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # importing typing costs milliseconds on the hook's hot path
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import Literal

    from smllm.gate.shell._parse import Word

    Decision = Literal["allow", "ask", "deny"]
    Where = Literal["dynamic", "device", "sensitive", "critical", "outside", "temp", "workspace"]


class _ReProxy:
    """The ``re`` module, imported on first use.

    ``import re`` (with enum, functools and collections behind it) costs about half a bare
    interpreter start; most commands are analysed without any regular expression.
    """

    def __getattr__(self, name: str) -> object:
        import re  # noqa: PLC0415

        return getattr(re, name)


if TYPE_CHECKING:
    re_lazy = re
else:
    re_lazy = _ReProxy()

_LOWER_NAME = frozenset("abcdefghijklmnopqrstuvwxyz_0123456789")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def strip_version(name: str) -> str:
    """``python3.11`` -> ``python`` (a trailing ``[0-9.]+`` removed)."""
    return name.rstrip("0123456789.")


def is_lower_assignment(word: str) -> bool:
    """``[a-z_][a-z0-9_]*=.*``: a lowercase ``name=value`` word."""
    eq = word.find("=")
    return (eq > 0 and word[0] in _LOWER_NAME and not word[0].isdigit()
            and all(c in _LOWER_NAME for c in word[:eq]))


def is_short_flags(word: str, last: str) -> bool:
    """``-[a-zA-Z]*<last>``: a bundle of short options ending in ``last``."""
    return (len(word) >= 2 and word[0] == "-" and word.endswith(last)
            and all(c in _ASCII_LETTERS for c in word[1:]))


#: flags for :class:`LazyRe`, without importing ``re`` to read them
IGNORECASE = 2
DOTALL = 16


class LazyRe:
    """A regular expression compiled on first use (compiling them all costs ~40 ms a run).

    ``hints``: substrings of which every match contains at least one (lowercase when the
    pattern ignores case). A text with none of them cannot match, so :meth:`search` answers
    without importing ``re`` at all: most code the analyser reads has none.
    """

    __slots__ = ("_rx", "flags", "hints", "pattern")

    def __init__(self, pattern: str, flags: int = 0, hints: tuple[str, ...] = ()) -> None:
        self.pattern = pattern
        self.flags = flags
        self.hints = hints
        self._rx: re.Pattern[str] | None = None

    def may_match(self, text: str) -> bool:
        if not self.hints:
            return True
        hay = text.lower() if self.flags & IGNORECASE else text
        return any(h in hay for h in self.hints)

    def get(self) -> re.Pattern[str]:
        if self._rx is None:
            import re  # noqa: PLC0415

            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    def search(self, text: str) -> re.Match[str] | None:
        return self.get().search(text) if self.may_match(text) else None

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.get().match(text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.get().finditer(text)


SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


def worst(decisions: list[Decision] | tuple[Decision, ...]) -> Decision:
    """The most restrictive of ``decisions`` (``allow`` when empty)."""
    out: Decision = "allow"
    for d in decisions:
        if SEVERITY[d] > SEVERITY[out]:
            out = d
    return out


class _Frozen:
    """Slots, equality and repr by fields, no assignment after ``__init__``."""

    __slots__ = ()

    def _names(self) -> tuple[str, ...]:
        names: tuple[str, ...] = type(self).__slots__
        return names

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, n) for n in self._names())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names())
        return f"{type(self).__name__}({inner})"

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise AttributeError(f"{type(self).__name__} is frozen")
        object.__setattr__(self, name, value)


class Finding(_Frozen):
    """One fact the analysis found, the built-in rule it falls under and its decision."""

    __slots__ = ("decision", "reason", "rule")

    def __init__(self, rule: str, decision: Decision, reason: str) -> None:
        self.rule = rule
        self.decision: Decision = decision
        self.reason = reason


class CommandReport(_Frozen):
    """One top-level simple command: its argv as analysed and what was found in it."""

    __slots__ = ("argv", "findings", "known_safe")

    def __init__(
        self, argv: tuple[str, ...], findings: tuple[Finding, ...], known_safe: bool
    ) -> None:
        self.argv = argv
        self.findings = findings
        self.known_safe = known_safe

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    @property
    def decision(self) -> Decision:
        return worst(tuple(f.decision for f in self.findings))


class Analysis(_Frozen):
    """The analysis of one command string."""

    __slots__ = ("commands", "decision", "findings", "scripts")

    def __init__(
        self,
        decision: Decision,
        commands: tuple[CommandReport, ...],
        findings: tuple[Finding, ...],
        scripts: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.decision: Decision = decision
        self.commands = commands
        self.findings = findings
        self.scripts = scripts  # (path, "sha256:…") of every script file read and analysed

    def all_findings(self) -> tuple[Finding, ...]:
        out = list(self.findings)
        for c in self.commands:
            out.extend(c.findings)
        return tuple(out)


SENSITIVE_HOME = (
    ".ssh",
    ".bashrc",
    ".zshrc",
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".zprofile",
    ".gitconfig",
    ".aws",
    ".gnupg",
    ".kube",
    ".netrc",
    ".config/smllm",
    ".local/share/smllm",
    ".local/state/smllm",
    ".claude",
)
SENSITIVE_ABS = (
    "/etc/passwd",
    "/etc/shadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/group",
    "/etc/hosts",
    "/etc/ssh",
    "/etc/crontab",
    "/etc/cron.d",
    "/boot",
)
SENSITIVE_PROJECT = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".smllm",
    ".git/hooks",
    ".git/config",
)
TEMP_ROOTS = ("/tmp", "/var/tmp", "/private/tmp")
HARMLESS_DEVICES = (
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class Context:
    """Where the command runs; ``cwd`` follows ``cd`` through the script (None: unknown)."""

    def __init__(  # noqa: PLR0917 - a record
        self,
        root: str,
        cwd: str | None,
        home: str,
        tmpdir: str = "/tmp",
        extra_sensitive: tuple[str, ...] = (),
        depth: int = 0,
        budget: list[int] | None = None,
        scripts: dict[str, str] | None = None,
    ) -> None:
        self.root = root
        self.cwd = cwd
        self.home = home
        self.tmpdir = tmpdir
        self.extra_sensitive = extra_sensitive
        self.depth = depth
        self.budget = budget if budget is not None else [400]
        self.scripts = scripts if scripts is not None else {}

    def child(self) -> Context:
        return Context(
            self.root,
            self.cwd,
            self.home,
            self.tmpdir,
            self.extra_sensitive,
            self.depth + 1,
            self.budget,
            self.scripts,
        )

    def resolve(self, value: str) -> str | None:
        if not os.path.isabs(value):
            if self.cwd is None:
                return None
            value = os.path.join(self.cwd, value)
        return os.path.normpath(value).replace("//", "/")

    def where(self, word: Word) -> Where:
        """Classify a path operand."""
        if word.value is None:
            return "dynamic"
        value = word.value
        if word.glob:
            cut = min((i for i, ch in enumerate(value) if ch in "*?[{"), default=len(value))
            value = value[:cut]
            if not value:
                value = "."
            elif not value.endswith("/"):
                value = os.path.dirname(value) or "."
        path = self.resolve(value)
        if path is None:
            return "dynamic"
        if word.glob and path == self.root:
            return "workspace"  # the workspace's entries, not the workspace itself
        return self.where_path(path, glob=word.glob)

    def where_path(self, path: str, *, glob: bool = False) -> Where:
        if (
            _under(path, "/dev")
            and path not in HARMLESS_DEVICES
            and not path.startswith("/dev/fd/")
        ):
            return "device"
        if self.sensitive(path):
            return "sensitive"
        if self.critical(path):
            return "critical"
        if _under(path, self.root):
            return "workspace"
        temps = (*TEMP_ROOTS, self.tmpdir)
        if any(_under(path, t) and path != t for t in temps) and not (
            self.root_in_temp() and _under(path, os.path.dirname(self.root))
        ):
            real = os.path.realpath(path)
            if not glob and any(
                _under(real, t) and real != t
                for t in (*temps, *(os.path.realpath(t) for t in temps))
            ):
                return "temp"
            return "outside"
        return "outside"

    def root_in_temp(self) -> bool:
        """A workspace in a temp folder makes its neighbours someone else's files."""
        return any(_under(self.root, t) for t in (*TEMP_ROOTS, self.tmpdir))

    def sensitive(self, path: str) -> bool:
        home = self.home.rstrip("/")
        if any(_under(path, f"{home}/{name}") for name in SENSITIVE_HOME):
            return True
        if any(_under(path, p) for p in SENSITIVE_ABS):
            return True
        if any(_under(path, os.path.join(self.root, p)) for p in SENSITIVE_PROJECT):
            return True
        return any(_under(path, p) for p in self.extra_sensitive)

    def critical(self, path: str) -> bool:
        if path == "/" or path.count("/") == 1:
            return True
        for anchor in (self.home, self.root):
            if _under(anchor, path):
                return True
        parts = path.strip("/").split("/")
        return len(parts) == 2 and parts[0] in ("home", "Users", "var", "usr", "opt", "srv")
