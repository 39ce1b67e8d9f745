"""Programs that feed arguments to other programs: ``xargs``, ``parallel``, ``find``.

Each runs a command over items: the items are substituted when they are known (a
heredoc, ``echo … |``, ``:::``), and stand for a run-time value when they are not.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import command_name, judge_argv, nested, stdin_text, write_target
from smllm.gate.shell._flags import skip_options
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


def xargs(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    i = 0
    replace: str | None = None
    from_file = False
    while i < len(args):
        v = args[i].value
        if v is None or not v.startswith("-") or v == "-":
            break
        if v == "--":
            i += 1
            break
        if v in ("-a", "--arg-file") or v.startswith("--arg-file="):
            from_file = True
        if v == "-I":
            replace = args[i + 1].value if i + 1 < len(args) else "{}"
        elif v.startswith("-I") or v.startswith("-i") or v.startswith("--replace"):
            replace = v[2:] if v[:2] in ("-I", "-i") and len(v) > 2 else "{}"
            if "=" in v:
                replace = v.split("=", 1)[1]
        i += 2 if v in _XARGS_ARG else 1
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
    argv = _substitute(rest, replace, DYNAMIC) if replace else [*rest, DYNAMIC]
    return judge_argv(argv, cmd, ctx)


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


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "xargs": xargs,
    "parallel": parallel,
    "find": find,
}
