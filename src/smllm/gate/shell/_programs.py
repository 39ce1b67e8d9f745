"""Per-program judgement: the dispatch table, launchers, shells, xargs, parallel, find.

Every handler has the signature ``(name, args, cmd, ctx) -> (findings, known_safe)``.
Families live in sibling modules (:mod:`._fs`, :mod:`._git`, :mod:`._code`,
:mod:`._system`); this module holds the table and the programs that run other programs.
"""

from __future__ import annotations

from smllm.gate.shell import _code, _fs, _git, _launchers, _system
from smllm.gate.shell._analyse import command_name, nested, stdin_text, write_target
from smllm.gate.shell._launchers import SHELLS, skip_options
from smllm.gate.shell._model import Context, Finding, is_lower_assignment, strip_version
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]
    Handler = Callable[[str, list[Word], Simple, Context], Result]
_RESERVED = frozenset(
    {"{", "}", "!", "(", ")", "then", "do", "else", "time", "if", "while", "until", "elif"}
)

DYNAMIC = Word("<run-time value>", None)

SAFE = frozenset(
    [
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "echo",
        "printf",
        "pwd",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "which",
        "type",
        "whereis",
        "man",
        "hash",
        "help",
        "true",
        "false",
        "test",
        "[",
        "date",
        "whoami",
        "id",
        "uname",
        "stat",
        "file",
        "du",
        "df",
        "diff",
        "cmp",
        "sort",
        "uniq",
        "cut",
        "tr",
        "less",
        "more",
        "tree",
        "realpath",
        "dirname",
        "basename",
        "readlink",
        "jq",
        "yq",
        "column",
        "nl",
        "od",
        "hexdump",
        "xxd",
        "sha256sum",
        "md5sum",
        "sha1sum",
        "cksum",
        "seq",
        "sleep",
        "tac",
        "fold",
        "fmt",
        "expand",
        "comm",
        "join",
        "paste",
        "printenv",
        "locale",
        "hostname",
        "uptime",
        "ps",
        "pgrep",
        "lsof",
        "free",
        "nproc",
        "getconf",
        "base64",
        ":",
        "exit",
        "return",
        "cd",
        "pushd",
        "popd",
        "set",
        "export",
        "unset",
        "local",
        "declare",
        "read",
        "shift",
        "wait",
        "jobs",
        "true",
    ]
)

# options (of launchers) that take a separate argument


def judge_argv(words: list[Word], cmd: Simple, ctx: Context) -> Result:
    """Judge an argv (the command word first)."""
    name, problem = command_name(words[0])
    if problem is not None or name is None:
        return [problem] if problem else [], False
    args = words[1:]
    if (is_lower_assignment(name) or name in _RESERVED) and args:
        return judge_argv(args, cmd, ctx)  # an assignment after a launcher (sudo FOO=1 cmd)
    handler = HANDLERS.get(name)
    if handler is None:
        handler = _family(name)
    if handler is not None:
        return handler(name, args, cmd, ctx)
    return [], name in SAFE


_VERSIONED_INTERPRETERS = frozenset({"python", "pypy", "ruby", "perl", "php", "lua", "luajit"})
_INTERPRETERS = frozenset({"node", "nodejs", "deno", "bun", "rscript", "tclsh", "osascript",
                           "pwsh", "powershell"})


def _family(name: str) -> Handler | None:
    # python[0-9.]*|pypy[0-9.]*|node(js)?|deno|bun|ruby[0-9.]*|perl[0-9.]*|php[0-9.]*|
    # lua(jit)?[0-9.]*|rscript|tclsh|osascript|pwsh|powershell
    if name in _INTERPRETERS or strip_version(name) in _VERSIONED_INTERPRETERS:
        return _code.interpreter
    if name.startswith(("mkfs", "mke2fs", "mkswap", "wipefs", "mkdosfs")):
        return _fs.disk_destroy
    return None


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
            found += _find_delete(paths, ctx)
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


def _find_delete(paths: list[Word], ctx: Context) -> list[Finding]:
    out = []
    for p in paths:
        where = ctx.where(p)
        shown = p.value if p.value is not None else p.raw
        if where in ("critical", "sensitive", "outside", "device"):
            out.append(
                Finding("fs.delete-recursive-outside", "deny", f"find -delete under {shown}")
            )
        elif where == "temp":
            continue
        elif where == "workspace" and ctx.resolve(p.value or ".") != ctx.root:
            continue  # a named folder inside the workspace, like rm of its files
        else:
            out.append(
                Finding("fs.find-delete", "ask", f"find -delete deletes matches under {shown}")
            )
    return out


HANDLERS: dict[str, Handler] = {
    **_launchers.HANDLERS,
    "xargs": xargs,
    "parallel": parallel,
    "find": find,
    **_fs.HANDLERS,
    **_git.HANDLERS,
    **_code.HANDLERS,
    **_system.HANDLERS,
}
