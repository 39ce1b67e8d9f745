"""Per-program judgement: the dispatch table, launchers, shells, xargs, parallel, find.

Every handler has the signature ``(name, args, cmd, ctx) -> (findings, known_safe)``.
Families live in sibling modules (:mod:`._fs`, :mod:`._git`, :mod:`._code`,
:mod:`._system`); this module holds the table and the programs that run other programs.
"""

from __future__ import annotations

import re

from smllm.shell import _code, _fs, _git, _system
from smllm.shell._analyse import command_name, nested, stdin_text, write_target
from smllm.shell._model import Context, Finding
from smllm.shell._parse import Simple, Word, parse

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
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (
        frozenset(
            [
                "-u",
                "-g",
                "-C",
                "-D",
                "-h",
                "-p",
                "-r",
                "-t",
                "-T",
                "-U",
                "--user",
                "--group",
                "--chdir",
                "--prompt",
                "--role",
                "--type",
                "--host",
                "--close-from",
                "--other-user",
            ]
        ),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-o", "-f", "--format", "--output"}), 0),
    "setsid": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "exec": (frozenset({"-a"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "gtimeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset({"-c"}), 1),
    "builtin": (frozenset(), 0),
    "busybox": (frozenset(), 0),
    "rtk": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "proxychains4": (frozenset({"-f"}), 0),
    "torsocks": (frozenset(), 0),
    "xvfb-run": (frozenset({"-n", "-s", "-f", "-e"}), 0),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-E"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s", "-u"}), 0),
    "then": (frozenset(), 0),
    "chronic": (frozenset(), 0),
    "ifne": (frozenset(), 0),
    "catchsegv": (frozenset(), 0),
    "pv": (frozenset(), 0),
    "sg": (frozenset(), 1),
    "runuser": (frozenset({"-u", "-g"}), 0),
}
_PRIVILEGED = frozenset({"sudo", "doas", "runuser", "sg"})
SHELLS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "ash",
        "fish",
        "tcsh",
        "csh",
        "yash",
        "posh",
        "rbash",
    }
)


def judge_argv(words: list[Word], cmd: Simple, ctx: Context) -> Result:
    """Judge an argv (the command word first)."""
    name, problem = command_name(words[0])
    if problem is not None or name is None:
        return [problem] if problem else [], False
    args = words[1:]
    if (re.fullmatch(r"[a-z_][a-z0-9_]*=.*", name, re.DOTALL) or name in _RESERVED) and args:
        return judge_argv(args, cmd, ctx)  # an assignment after a launcher (sudo FOO=1 cmd)
    handler = HANDLERS.get(name)
    if handler is None:
        handler = _family(name)
    if handler is not None:
        return handler(name, args, cmd, ctx)
    return [], name in SAFE


def _family(name: str) -> Handler | None:
    if re.fullmatch(
        r"python[0-9.]*|pypy[0-9.]*|node(js)?|deno|bun|ruby[0-9.]*|perl[0-9.]*|"
        r"php[0-9.]*|lua(jit)?[0-9.]*|rscript|tclsh|osascript|pwsh|powershell",
        name,
    ):
        return _code.interpreter
    if name.startswith(("mkfs", "mke2fs", "mkswap", "wipefs", "mkdosfs")):
        return _fs.disk_destroy
    return None


def _values(args: list[Word]) -> list[str | None]:
    return [a.value for a in args]


def _skip_options(args: list[Word], with_arg: frozenset[str], positional: int) -> list[Word]:
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            break
        if v == "--":
            i += 1
            break
        if v.startswith("-") and len(v) > 1:
            if v in with_arg:
                i += 2
                continue
            i += 1
            continue
        break
    rest = args[i:]
    return rest[positional:]


def wrapper(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    with_arg, positional = _WRAPPERS[name]
    rest = _skip_options(args, with_arg, positional)
    if name == "busybox" and rest and rest[0].value in ("--list", "--help"):
        return [], True
    extra: list[Finding] = []
    if name in _PRIVILEGED:
        extra.append(Finding("sys.privileged", "ask", f"runs with elevated privileges ({name})"))
    if not rest:
        return extra, name not in _PRIVILEGED
    found, safe = judge_argv(rest, cmd, ctx)
    return extra + found, safe and not extra


def command_builtin(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    i = 0
    while i < len(args) and args[i].value in ("-p", "--"):
        i += 1
    if i < len(args) and args[i].value in ("-v", "-V"):
        return [], True
    return judge_argv(args[i:], cmd, ctx) if args[i:] else ([], True)


def env(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    i = 0
    run_ctx = ctx
    while i < len(args):
        v = args[i].value
        if v is None:
            break
        if v == "--":
            i += 1
            break
        if v == "-":
            i += 1
            continue
        if v in ("-u", "--unset", "-P"):
            i += 2
        elif v in ("-C", "--chdir") or (v.startswith(("--chdir=", "-C")) and v != "-C"):
            target = (
                args[i + 1]
                if v in ("-C", "--chdir") and i + 1 < len(args)
                else Word(v, v.split("=", 1)[1] if "=" in v else v[2:])
            )
            run_ctx = _chdir(ctx, target)
            i += 2 if v in ("-C", "--chdir") else 1
        elif v in ("-S", "--split-string") or v.startswith(("--split-string=", "-S")):
            text = (
                args[i + 1].value
                if v in ("-S", "--split-string") and i + 1 < len(args)
                else v.split("=", 1)[1]
                if "=" in v
                else v[2:]
            )
            if text is None:
                return [
                    Finding("shell.dynamic-command", "ask", "env -S splits a run-time string")
                ], False
            split = [
                w
                for c in parse(text, cwd=ctx.cwd or ctx.root, home=ctx.home).commands
                for w in c.words
            ]
            skip = 2 if v in ("-S", "--split-string") else 1
            return env(name, split + args[i + skip :], cmd, run_ctx)
        elif (v.startswith("-") and len(v) > 1) or re.match(r"[A-Za-z_][A-Za-z0-9_]*=", v):
            i += 1
        else:
            break
    rest = args[i:]
    if not rest:
        return [], True
    return judge_argv(rest, cmd, run_ctx)


def _chdir(ctx: Context, target: Word) -> Context:
    new = ctx.child()
    new.depth = ctx.depth
    new.cwd = ctx.resolve(target.value) if target.value is not None else None
    return new


def cd(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``cd``/``pushd`` change where later relative paths point."""
    operands = [a for a in args if not (a.value or "").startswith("-") or a.value == "-"]
    if not operands:
        ctx.cwd = ctx.home
    elif operands[0].value in (None, "-") or operands[0].glob:
        ctx.cwd = None
    else:
        ctx.cwd = ctx.resolve(operands[0].value or "")
    return [], True


def shell(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    i = 0
    command_mode = False
    while i < len(args):
        v = args[i].value
        if v is None:
            break
        if v in {"--", "-"}:
            i += 1
            break
        if v in ("-o", "+o", "--rcfile", "--init-file", "-O", "+O"):
            i += 2
            continue
        if re.fullmatch(r"[-+][a-zA-Z]+", v):
            command_mode = command_mode or (v[0] == "-" and "c" in v)
            i += 1
            continue
        if v.startswith("--"):
            i += 1
            continue
        break
    rest = args[i:]
    if command_mode:
        if not rest:
            return [Finding("shell.syntax", "ask", f"{name} -c without a command")], False
        if rest[0].value is None:
            return [
                Finding(
                    "shell.dynamic-command",
                    "ask",
                    f"{name} -c runs a string only known at run time",
                )
            ], False
        return nested(rest[0].value, ctx, f"{name} -c"), False
    if rest:
        return run_script_file(name, rest[0], ctx), False
    return _stdin_script(name, cmd, ctx), False


def run_script_file(name: str, word: Word, ctx: Context) -> list[Finding]:
    """A shell running a script file: analyse the file when it can be read."""
    text = _read_script(word, ctx)
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


def _read_script(word: Word, ctx: Context) -> str | None:
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
    return data.decode("utf-8", "replace")


def _stdin_script(name: str, cmd: Simple, ctx: Context) -> list[Finding]:
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


def eval_(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    if any(v is None for v in values):
        return [
            Finding("shell.eval-dynamic", "ask", "eval runs a string only known at run time")
        ], False
    return nested(" ".join(v for v in values if v is not None), ctx, "eval"), False


def source(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    if not args:
        return [], True
    if args[0].value in ("/dev/stdin", "-", "/proc/self/fd/0"):
        return _stdin_script(name, cmd, ctx), False
    return run_script_file(name, args[0], ctx), False


def su(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    out = [Finding("sys.privileged", "ask", "runs as another user (su)")]
    for i, a in enumerate(args):
        if a.value in ("-c", "--command") and i + 1 < len(args):
            text = args[i + 1].value
            if text is None:
                return [
                    *out,
                    Finding("shell.dynamic-command", "ask", "su -c runs a run-time string"),
                ], False
            return out + nested(text, ctx, "su -c"), False
        if a.value and a.value.startswith("--command="):
            return out + nested(a.value.split("=", 1)[1], ctx, "su -c"), False
    return out, False


def watch(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    rest = _skip_options(args, frozenset({"-n", "--interval", "-d", "-g"}), 0)
    values = _values(rest)
    if any(v is None for v in values):
        return [Finding("shell.dynamic-command", "ask", "watch runs a run-time string")], False
    return nested(" ".join(v for v in values if v is not None), ctx, "watch"), False


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
    rest = _skip_options(
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
    **{w: wrapper for w in _WRAPPERS},
    **{s: shell for s in SHELLS},
    "command": command_builtin,
    "env": env,
    "eval": eval_,
    "source": source,
    ".": source,
    "su": su,
    "watch": watch,
    "xargs": xargs,
    "parallel": parallel,
    "find": find,
    "cd": cd,
    "pushd": cd,
    **_fs.HANDLERS,
    **_git.HANDLERS,
    **_code.HANDLERS,
    **_system.HANDLERS,
}
