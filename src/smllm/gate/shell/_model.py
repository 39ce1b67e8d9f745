"""The analyser's vocabulary: decisions, findings, per-command reports, the context."""

from __future__ import annotations

from smllm.base import credentials, paths, protected
from smllm.base import osfast as os
from smllm.base.digest import tagged

TYPE_CHECKING = False  # importing typing costs milliseconds on the hook's hot path
if TYPE_CHECKING:
    import re
    from collections.abc import Iterator
    from typing import Literal

    from smllm.gate.shell._syntax import Word

    Decision = Literal["allow", "ask", "deny"]
    Where = Literal["dynamic", "device", "sensitive", "critical", "outside", "temp", "workspace"]


class _ReProxy:
    """The ``re`` module, imported on first use.

    ``import re`` (with enum, functools and collections behind it) costs about half a bare
    interpreter start; most commands are analysed without any regular expression.
    """

    def __getattr__(self, name: str) -> object:
        import re  # noqa: PLC0415 - re on first use (hot path)

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
            import re  # noqa: PLC0415 - re on first use (hot path)

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
    """One fact the analysis found, the built-in rule it falls under and its decision;
    ``path``: the resolved path a write or delete finding is about (None otherwise)."""

    __slots__ = ("decision", "path", "reason", "rule")

    def __init__(
        self, rule: str, decision: Decision, reason: str, path: str | None = None
    ) -> None:
        self.rule = rule
        self.decision: Decision = decision
        self.reason = reason
        self.path = path


class Effect(_Frozen):
    """A change to the file system the command makes: ``kind`` is ``write``, ``delete``,
    ``move`` (a source moved away), ``link`` (a link created), ``chmod``; ``path`` the
    target after ``~``, variables, ``cd`` and links are resolved, None when it is only
    known at run time; ``by`` the program (or ``>`` for a redirection)."""

    __slots__ = ("by", "kind", "path")

    def __init__(self, kind: str, path: str | None, by: str) -> None:
        self.kind = kind
        self.path = path
        self.by = by


class CommandReport(_Frozen):
    """One top-level simple command: its argv as analysed and what was found in it.
    ``scope`` is how far its effects are known to reach: ``read`` (it changes nothing:
    ``known_safe``), ``temp`` (it changes files in the temp folders only), ``workspace``
    (files in the workspace, and maybe temp), None (anything else, or not known)."""

    __slots__ = ("argv", "findings", "known_safe", "scope")

    def __init__(
        self, argv: tuple[str, ...], findings: tuple[Finding, ...], known_safe: bool,
        scope: str | None = None,
    ) -> None:
        self.argv = argv
        self.findings = findings
        self.known_safe = known_safe
        self.scope = "read" if known_safe else scope

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    @property
    def decision(self) -> Decision:
        return worst(tuple(f.decision for f in self.findings))


class Analysis(_Frozen):
    """The analysis of one command string."""

    __slots__ = ("commands", "decision", "effects", "findings", "scripts", "sources")

    def __init__(  # noqa: PLR0917 - a record
        self,
        decision: Decision,
        commands: tuple[CommandReport, ...],
        findings: tuple[Finding, ...],
        scripts: tuple[tuple[str, str], ...] = (),
        effects: tuple[Effect, ...] = (),
        sources: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.decision: Decision = decision
        self.commands = commands
        self.findings = findings
        self.scripts = scripts  # (path, "sha256:…") of every script file read and analysed
        self.effects = effects  # every write, delete, move, link or chmod it recognised
        self.sources = sources  # (path, text) of those scripts: what a reviewer is shown

    def all_findings(self) -> tuple[Finding, ...]:
        out = list(self.findings)
        for c in self.commands:
            out.extend(c.findings)
        return tuple(out)


SENSITIVE_HOME = (
    ".ssh",
    ".bashrc",
    ".zshrc",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".zprofile",
    ".inputrc",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".pam_environment",
    ".gitconfig",
    ".config/git",
    ".config/fish",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".config/containers/systemd",
    "Library/LaunchAgents",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
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
    "/etc/cron.hourly",
    "/etc/cron.daily",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/environment",
    "/etc/ld.so.preload",
    "/etc/rc.local",
    "/etc/init.d",
    "/etc/systemd",
    "/etc/xdg/autostart",
    "/Library/LaunchAgents",
    "/Library/LaunchDaemons",
    "/var/spool/cron",
    "/boot",
)
SENSITIVE_PROJECT = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".smllm",
    ".git/hooks",
    ".git/config",
)
#: credential stores (reading them escalates, sending them anywhere is denied) and the
#: names of files that hold secrets: one list, in smllm.base.credentials
CREDENTIAL_HOME = credentials.HOME_STORES
CREDENTIAL_ABS = credentials.ABSOLUTE_STORES
_PUBLIC_NAMES = credentials.PUBLIC_NAMES
_SECRET_FILES = credentials.SECRET_FILES
_SECRET_SUFFIXES = credentials.SECRET_SUFFIXES
_ENV_TEMPLATES = (".example", ".sample", ".template", ".dist", ".defaults")
TEMP_ROOTS = ("/tmp", "/var/tmp", "/private/tmp")  # noqa: S108 - paths judged, not files opened
#: where recipes written in another language are put for their interpreter to read
VIRTUAL = "/proc/self/smllm-recipe"
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
_WHERE_RANK = {"temp": 0, "workspace": 1, "outside": 2, "dynamic": 3, "critical": 4,
               "sensitive": 5, "device": 6}


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _own_file(real: str, roots: tuple[str, ...]) -> bool:
    """``real`` (in a temp folder) or, when it does not exist yet, its nearest existing
    folder below the temp root belongs to the current user: other users' files are not
    scratch."""
    if not hasattr(os, "getuid"):  # Windows: no owners to compare
        return True
    uid = os.getuid()
    probe = real
    while not any(probe == r for r in roots):
        try:
            return os.stat(probe).st_uid == uid
        except OSError:
            parent = os.path.dirname(probe)
            if parent == probe:
                return True
            probe = parent
    return True


class Memory:
    """What one command string has done so far, shared by every nested analysis of it:
    the budget of nested analyses, scripts read, effects, files written (with their
    content when it is known), links made, aliases, secrets read and files they tainted."""

    __slots__ = ("aliases", "budget", "effects", "links", "remotes", "scripts",
                 "secret_reads", "sources", "tainted", "written")

    def __init__(self) -> None:
        self.budget = 400
        self.scripts: dict[str, str] = {}
        self.sources: dict[str, str] = {}  # script path -> the text analysed
        self.effects: list[Effect] = []
        self.written: dict[str, str | None] = {}
        self.links: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.secret_reads: list[tuple[str, bool]] = []  # (path, in a substitution)
        self.tainted: set[str] = set()
        self.remotes: set[str] = set()  # git remotes added or re-pointed by the command

    def script(self, path: str, data: bytes, text: str) -> None:
        """Keep a script file read and analysed: the digest of ``data`` (checked after the
        run, pinned by a grant) and ``text`` (shown to a reviewer)."""
        self.scripts[path] = tagged(data)
        self.sources[path] = text


class Context:
    """Where the command runs; ``cwd`` follows ``cd`` through the script (None: unknown)."""

    def __init__(  # noqa: PLR0917 - a record
        self,
        root: str,
        cwd: str | None,
        home: str,
        tmpdir: str = "/tmp",  # noqa: S108 - bash's default $TMPDIR
        extra_sensitive: tuple[str, ...] = (),
        depth: int = 0,
        memory: Memory | None = None,
    ) -> None:
        self.root = root
        self.cwd = cwd
        self.home = home
        self.tmpdir = tmpdir
        self.extra_sensitive = extra_sensitive
        self.depth = depth
        self.memory = memory if memory is not None else Memory()
        self._real: tuple[str, str] | None = None
        self._own: tuple[str, ...] | None = None

    @property
    def own(self) -> tuple[str, ...]:
        """smllm's own folders and Claude Code's user folder and state file, wherever
        ``SMLLM_HOME``, ``CLAUDE_CONFIG_DIR`` or the platform put them (and Claude Code's
        under this context's home, which an analysis may be given)."""
        if self._own is None:
            home = self.home.rstrip("/")
            self._own = (*protected.own_folders(), paths.claude_root(), paths.claude_json(),
                         f"{home}/.claude", f"{home}/.claude.json")
        return self._own

    @property
    def scripts(self) -> dict[str, str]:
        return self.memory.scripts

    def child(self) -> Context:
        return Context(self.root, self.cwd, self.home, self.tmpdir, self.extra_sensitive,
                       self.depth + 1, self.memory)

    def resolve(self, value: str) -> str | None:
        if not os.path.isabs(value):
            if self.cwd is None:
                return None
            value = os.path.join(self.cwd, value)
        return os.path.normpath(value).replace("//", "/")

    def follow(self, path: str, *, last: bool = True) -> str:
        """``path`` with the links made earlier in this command and the links on disk
        followed (``last=False``: not the final component, which ``rm`` removes itself)."""
        links = self.memory.links
        if links:
            for _ in range(8):
                for link, target in links.items():
                    if (path == link and last) or path.startswith(link + "/"):
                        path = target + path[len(link):]
                        break
                else:
                    break
        if last:
            return os.path.realpath(path)
        head, tail = os.path.split(path)
        return os.path.join(os.path.realpath(head), tail) if head else path

    def where(self, word: Word, *, last: bool = True) -> Where:
        """Classify a path operand (links followed: the worse of the path and its target)."""
        path = self.path_of(word)
        if path is None:
            return "dynamic"
        if word.glob and path == self.root:
            return "workspace"  # the workspace's entries, not the workspace itself
        value = word.value or ""
        real = self.follow(path, last=last or value.endswith(("/", "/.")) or word.glob)
        return self.where_linked(path, real, glob=word.glob)

    def where_linked(self, path: str, real: str, *, glob: bool = False) -> Where:
        """Classify ``path`` whose links lead to ``real`` (:meth:`follow`): the worse of the
        two, unless they are the same place seen through a linked workspace or home."""
        where = self.where_path(path, glob=glob)
        if real != path:
            other = self.where_path(real, glob=glob)
            if _WHERE_RANK[other] > _WHERE_RANK[where] and not self._same_place(path, real):
                return other
        return where

    def path_of(self, word: Word) -> str | None:
        """The absolute path ``word`` names (for a glob: the folder it expands in)."""
        if word.value is None:
            return None
        value = word.value
        if word.glob:
            cut = min((i for i, ch in enumerate(value) if ch in "*?[{"), default=len(value))
            value = value[:cut]
            if not value:
                value = "."
            elif not value.endswith("/"):
                value = os.path.dirname(value) or "."
        return self.resolve(value)

    def _same_place(self, path: str, real: str) -> bool:
        """A path whose real location is the same place seen through a linked workspace
        or home (``/work/link`` -> ``/srv/work``)."""
        if self._real is None:
            self._real = (os.path.realpath(self.root), os.path.realpath(self.home))
        for anchor, real_anchor in ((self.root, self._real[0]), (self.home, self._real[1])):
            if _under(path, anchor) and _under(real, real_anchor):
                return path[len(anchor):] == real[len(real_anchor):]
        return False

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
        return self._temp_or_outside(path, glob=glob)

    def _temp_or_outside(self, path: str, *, glob: bool) -> Where:
        """A path outside the workspace: ``temp`` inside a temporary folder (links
        followed, the temp root itself excluded), unless it is in the home folder, the
        workspace's own neighbourhood (:meth:`_neighbour`) or someone else's file."""
        temps = (*TEMP_ROOTS, self.tmpdir)
        roots = {t.rstrip("/") or "/" for t in temps}  # a temp root itself is not scratch
        if path in roots or not any(_under(path, t) for t in temps) or self._neighbour(path):
            return "outside"
        real = os.path.realpath(path)
        reals = (*temps, *(os.path.realpath(t) for t in temps))
        if glob or real in roots.union(reals) or not any(_under(real, t) for t in reals):
            return "outside"
        if _under(path, self.home) or _under(real, os.path.realpath(self.home)):
            return "outside"
        return "temp" if _own_file(real, reals) else "outside"

    def _neighbour(self, path: str) -> bool:
        """A workspace in a folder of its own inside a temp folder (``/tmp/run/proj``)
        makes the rest of that folder someone else's files (a harness's fixtures); a
        workspace straight in a temp root (``/tmp/proj``) leaves the root scratch. The
        agent's own ``$TMPDIR`` stays scratch when it is a folder of its own beside the
        workspace (``/tmp/run/tmp`` next to ``/tmp/run/proj``): it was named for the work."""
        if not self.root_in_temp():
            return False
        parent = os.path.dirname(self.root)
        tmpdir = self.tmpdir.rstrip("/") or "/"
        if tmpdir not in TEMP_ROOTS and _under(path, tmpdir) and not _under(parent, tmpdir) \
                and not _under(tmpdir, self.root):
            return False
        temps = (*TEMP_ROOTS, self.tmpdir)
        if parent in temps or os.path.realpath(parent) in {os.path.realpath(t) for t in temps}:
            return False
        return _under(path, parent)

    def root_in_temp(self) -> bool:
        """A workspace in a temp folder makes its neighbours someone else's files."""
        return any(_under(self.root, t) for t in (*TEMP_ROOTS, self.tmpdir))

    def sensitive(self, path: str) -> bool:
        home = self.home.rstrip("/")
        if any(_under(path, f"{home}/{name}") for name in SENSITIVE_HOME):
            return True
        if any(_under(path, p) for p in SENSITIVE_ABS):
            return True
        if any(_under(path, p) for p in self.own):
            return True
        if any(_under(path, os.path.join(self.root, p)) for p in SENSITIVE_PROJECT):
            return True
        return any(_under(path, p) for p in self.extra_sensitive)

    def secret_kind(self, path: str) -> str | None:
        """What secret ``path`` holds: ``store`` (a credential store, a private key,
        smllm's journals: reading one escalates), ``file`` (an ``.env`` file, a path the
        policy lists as sensitive: a source that must not reach the network), or None."""
        name = os.path.basename(path)
        if name in _SECRET_FILES or name.endswith(_SECRET_SUFFIXES):
            return "store"
        home = self.home.rstrip("/")
        if any(_under(path, f"{home}/{n}") for n in CREDENTIAL_HOME) or any(
            _under(path, p) for p in (*CREDENTIAL_ABS, *self.own[:2])  # journals, audit
        ):
            if name.endswith(".pub") or name in _PUBLIC_NAMES:
                return None
            return "store"
        if name.startswith(".env") and (name == ".env" or name[4] in ".-_") and not (
            name.endswith(_ENV_TEMPLATES)
        ):
            return "file"
        if any(_under(path, p) for p in self.extra_sensitive):
            return "file"
        return None

    def holds_secrets(self, path: str) -> bool:
        """``path`` is a credential store or a folder holding one (a search through it
        reads them)."""
        if self.secret_kind(path) == "store":
            return True
        home = self.home.rstrip("/")
        return any(_under(f"{home}/{n}", path) for n in CREDENTIAL_HOME) or any(
            _under(p, path) for p in (*CREDENTIAL_ABS, *self.own[:2]))

    def critical(self, path: str) -> bool:
        if path == "/" or path.count("/") == 1:
            return True
        for anchor in (self.home, self.root):
            if _under(anchor, path):
                return True
        parts = path.strip("/").split("/")
        return len(parts) == 2 and parts[0] in ("home", "Users", "var", "usr", "opt", "srv")

    def record(self, kind: str, word: Word | str | None, by: str) -> str | None:
        """Note an effect on ``word`` (a path operand or an absolute path) and return
        its resolved path (None: only known at run time)."""
        if word is None or isinstance(word, str):
            path = word
        else:
            path = self.path_of(word)
            if path is not None:
                value = word.value or ""
                last = kind != "delete" or value.endswith(("/", "/.")) or word.glob
                path = self.follow(path, last=last)
        self.memory.effects.append(Effect(kind, path, by))
        return path
