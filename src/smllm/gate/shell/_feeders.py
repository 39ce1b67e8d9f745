"""Programs that feed arguments to other programs: ``xargs``, ``parallel``, ``find``.

Each runs a command over items: the items are substituted when they are known (a
heredoc, ``echo … |``, ``:::``), and stand for a run-time value when they are not.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import command_name, judge_argv, nested, stdin_text, write_target
from smllm.gate.shell._flags import Options, read, skip_options
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word
from smllm.gate.shell._programs import SHELLS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

DYNAMIC = Word("<run-time value>", None)


def _values(args: list[Word]) -> list[str | None]:
    return [a.value for a in args]


_XARGS_ARG = frozenset(
    [
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--max-args",
        "--max-procs",
        "--delimiter",
        "--eof",
        "--max-lines",
        "--max-chars",
        "--process-slot-var",
    ]
)


#: xargs reads its options in POSIX order: the command starts at the first operand
_XARGS = Options(_XARGS_ARG)


def _xargs_replace(v: str, value: Word | None, replace: str | None) -> str | None:
    """The replace string ``-I R``, ``-iR``, ``--replace[=R]`` set (``{}`` by default)."""
    if v == "-I":
        return value.value if value is not None else "{}"
    if v.startswith(("-I", "-i", "--replace")):
        if "=" in v:
            return v.split("=", 1)[1]
        return v[2:] if v[:2] in ("-I", "-i") and len(v) > 2 else "{}"
    return replace


def xargs(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value for a in args]
    i = len(args)
    replace: str | None = None
    from_file = False
    for arg in read(values, _XARGS):
        v = values[arg.at] or ""
        if arg.name == "":
            i = arg.at
        elif arg.name != "--":
            from_file = from_file or v in ("-a", "--arg-file") or v.startswith("--arg-file=")
            replace = _xargs_replace(v, arg.word(args), replace)
    rest = args[i:] or [Word("echo", "echo")]
    head, _ = command_name(rest[0])
    if head in SHELLS or head in ("eval", "source", "."):
        return [
            Finding("shell.stdin-script", "ask", f"xargs feeds run-time data to {head} as code")
        ], False
    text, _ = stdin_text(cmd)
    if text is not None and not from_file:
        items = text.split("\n") if replace else text.split()
        items = [it for it in items if it] or [""]
        found: list[Finding] = []
        safe = True
        for item in items[:16]:
            argv = (
                _substitute(rest, replace, Word(item, item))
                if replace
                else [*rest, Word(item, item)]
            )
            f, s = judge_argv(argv, cmd, ctx)
            found += f
            safe = safe and s
        return found, safe
    listed = _listed_item(cmd) or DYNAMIC
    argv = _substitute(rest, replace, listed) if replace else [*rest, listed]
    return judge_argv(argv, cmd, ctx)


#: programs that pass lines through, filtering or reordering them but not rewriting them
_FILTERS = frozenset({"sort", "uniq", "head", "tail", "grep", "egrep", "fgrep", "rg", "tee",
                      "cat"})


def _listed_item(cmd: Simple) -> Word | None:
    """What one item is when a pipeline lists paths under known folders (``find DIR``,
    ``grep -rl X DIR``, ``rg -l``, ``fd``, ``git ls-files``, ``ls``): a glob under the
    folder, so that a delete or write of it is judged by where the folder is."""
    up = cmd.stdin
    hops = 0
    while up is not None and hops < 8:
        values = [w.value for w in up.words]
        if not values or any(v is None for v in values):
            return None
        argv = [v for v in values if v is not None]
        name = argv[0].rsplit("/", 1)[-1]
        folders = _lister_folders(name, argv[1:])
        if folders is not None:
            if len(folders) != 1:
                return None
            folder = folders[0].rstrip("/") or "/"
            return Word(f"{folder}/*", f"{folder}/*", glob=True)
        if name not in _FILTERS or (name in ("grep", "egrep", "fgrep", "rg") and any(
                v.startswith("-") and ("l" in v or "o" in v) for v in argv[1:])):
            return None
        up = up.stdin
        hops += 1
    return None


def _lister_folders(name: str, args: list[str]) -> list[str] | None:
    """The folders whose paths a lister prints (None: not a lister, or it prints more)."""
    lister = _LISTERS.get(name)
    if lister is None:
        return None
    operands = [a for a in args if not a.startswith("-")]
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    longs = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    return lister(args, operands, flags, longs)


def _find_folders(args: list[str], operands: list[str], flags: str, longs: set[str]
                  ) -> list[str] | None:
    lead = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        lead.append(a)
    if any(a in ("-exec", "-execdir", "-printf", "-fprint", "-ok") for a in args):
        return None
    return lead or ["."]


def _grep_folders(args: list[str], operands: list[str], flags: str, longs: set[str]
                  ) -> list[str] | None:
    if not ("l" in flags or "L" in flags or longs & {"--files-with-matches",
                                                       "--files-without-match"}):
        return None
    pattern_given = "e" in flags or "f" in flags or bool(longs & {"--regexp", "--file"})
    return (operands if pattern_given else operands[1:]) or ["."]


def _rg_folders(args: list[str], operands: list[str], flags: str, longs: set[str]
                ) -> list[str] | None:
    if not ("l" in flags or longs & {"--files", "--files-with-matches"}):
        return None
    return (operands if "--files" in longs else operands[1:]) or ["."]


def _fd_folders(args: list[str], operands: list[str], flags: str, longs: set[str]
                ) -> list[str] | None:
    return operands[1:] or ["."]


def _git_folders(args: list[str], operands: list[str], flags: str, longs: set[str]
                 ) -> list[str] | None:
    if args[:1] == ["ls-files"] or (args[:1] == ["diff"] and "--name-only" in args):
        return ["."]
    return None


def _ls_folders(args: list[str], operands: list[str], flags: str, longs: set[str]
                ) -> list[str] | None:
    return None if operands else ["."]


#: the programs that list paths, and how each says which folders (see _listed_item)
_LISTERS: dict[str, Callable[[list[str], list[str], str, set[str]], list[str] | None]] = {
    "find": _find_folders,
    "grep": _grep_folders,
    "egrep": _grep_folders,
    "fgrep": _grep_folders,
    "rg": _rg_folders,
    "fd": _fd_folders,
    "fdfind": _fd_folders,
    "git": _git_folders,
    "ls": _ls_folders,
}


def _substitute(words: list[Word], token: str | None, item: Word) -> list[Word]:
    if not token:
        return words
    out = []
    for w in words:
        if w.value is not None and token in w.value:
            out.append(
                Word(w.raw, w.value.replace(token, item.value) if item.value is not None else None)
            )
        else:
            out.append(w)
    return out


def parallel(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    seps = [i for i, v in enumerate(values) if v in (":::", "::::", ":::+", "::::+")]
    head = args[: seps[0]] if seps else args
    rest = skip_options(
        head,
        frozenset(
            {
                "-j",
                "--jobs",
                "-S",
                "--sshlogin",
                "--joblog",
                "-N",
                "-n",
                "-L",
                "--delay",
                "--timeout",
                "-I",
            }
        ),
        0,
    )
    if not seps or any(values[i] in ("::::", "::::+") for i in seps):
        items: list[Word] = [DYNAMIC]
    else:
        items = [a for a in args[seps[0] + 1 :] if a.value not in (":::", ":::+")]
    found: list[Finding] = []
    for item in items[:16]:
        if not rest:
            if item.value is None:
                found.append(
                    Finding(
                        "shell.dynamic-command",
                        "ask",
                        "parallel runs commands only known at run time",
                    )
                )
            else:
                found += nested(item.value, ctx, "parallel")
            continue
        if any(w.value is not None and "{}" in w.value for w in rest):
            argv = _substitute(rest, "{}", item)
        else:
            argv = [*rest, item]
        found += judge_argv(argv, cmd, ctx)[0]
    return found, False


_FIND_ARG = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-type",
        "-xtype",
        "-newer",
        "-anewer",
        "-cnewer",
        "-perm",
        "-size",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-mtime",
        "-atime",
        "-ctime",
        "-mmin",
        "-amin",
        "-cmin",
        "-maxdepth",
        "-mindepth",
        "-links",
        "-inum",
        "-samefile",
        "-fstype",
        "-lname",
        "-ilname",
        "-printf",
        "-used",
        "-context",
        "-regextype",
        "-newermt",
        "-newerct",
        "-newerat",
        "-D",
        "-O",
    ]
)


def find(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    i = 0
    paths: list[Word] = []
    while i < len(args) and not (values[i] or "-").startswith(("-", "(", "!", ")")):
        paths.append(args[i])
        i += 1
    paths = paths or [Word(".", ".")]
    found: list[Finding] = []
    safe = True
    while i < len(args):
        v = values[i]
        if v in _FIND_ARG:
            i += 2
            continue
        if v == "-delete":
            safe = False
            found += _find_delete(paths, _filtered(values), ctx)
        elif v in ("-exec", "-execdir", "-ok", "-okdir"):
            safe = False
            j = i + 1
            while j < len(args) and values[j] not in (";", "+", "\\;"):
                j += 1
            inner = [
                DYNAMIC if (w.value is None or "{}" in w.value) else w for w in args[i + 1 : j]
            ]
            if inner:
                found += judge_argv(inner, cmd, ctx)[0]
            i = j + 1
            continue
        elif v in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            safe = False
            found += write_target(args[i + 1], ctx, truncate=True, what="find writes")
            i += 3 if v == "-fprintf" else 2
            continue
        i += 1
    return found, safe


_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-regex", "-iregex",
                         "-wholename", "-iwholename"})
_EVERYTHING = frozenset({"*", "*.*", ".*", ".*/*", "./*", "*/*", ".+", ".*.*"})


def _filtered(values: list[str | None]) -> bool:
    """The expression selects by name (a pattern that is not everything) or emptiness."""
    for i, v in enumerate(values):
        if v == "-empty":
            return True
        if v in _NAME_TESTS and i + 1 < len(values):
            pattern = values[i + 1]
            if pattern is not None and pattern not in _EVERYTHING:
                return True
    return False


def _find_delete(paths: list[Word], filtered: bool, ctx: Context) -> list[Finding]:
    """``find PATH… -delete``: a temp folder or a named folder of the workspace is like
    ``rm`` of its files; the workspace itself only with a name test (``-name '*.pyc'``)."""
    out = []
    for p in paths:
        path = ctx.record("delete", p, "find -delete")
        where = ctx.where(p)
        shown = p.value if p.value is not None else p.raw
        resolved = ctx.resolve(p.value) if p.value is not None else None
        if resolved is not None and resolved == ctx.root:
            if not filtered:
                out.append(Finding("fs.find-delete", "ask",
                                   f"find -delete deletes everything it matches under {shown}",
                                   path))
            continue
        if where in ("critical", "sensitive", "outside", "device"):
            out.append(
                Finding("fs.delete-recursive-outside", "deny", f"find -delete under {shown}",
                        path)
            )
        elif where in ("temp", "workspace"):
            continue
        else:
            out.append(
                Finding("fs.find-delete", "ask", f"find -delete deletes matches under {shown}")
            )
    return out


#: fd's options that run a command per found file (``-x``) or once for all (``-X``)
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})


def fd(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``fd PATTERN -x CMD`` / ``-X CMD``: CMD is judged with a run-time file (each of
    ``{}``, ``{/}``, ``{//}``, ``{.}``, ``{/.}``, or appended); fd alone only lists."""
    values = _values(args)
    found: list[Finding] = []
    ran = False
    i = 0
    while i < len(args):
        if values[i] not in _FD_EXEC:
            i += 1
            continue
        ran = True
        j = i + 1
        while j < len(args) and values[j] not in (";", "\\;") and values[j] not in _FD_EXEC:
            j += 1
        inner = [DYNAMIC if (w.value is None or "{" in w.value) else w for w in args[i + 1 : j]]
        if inner:
            if not any(w is DYNAMIC for w in inner[1:]):
                inner.append(DYNAMIC)  # fd appends the path when no placeholder is given
            found += judge_argv(inner, cmd, ctx)[0]
        i = j + 1 if j < len(args) and values[j] in (";", "\\;") else j
    return found, not ran


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "fd": fd,
    "fdfind": fd,
    "xargs": xargs,
    "parallel": parallel,
    "find": find,
}
