# ruff: noqa: PLR0911, PLR0912, PLR0915, C901 - a command line is a big case analysis
"""Programs that run code: interpreters' inline code, scripts and heredocs; awk, sed, editors.

Inline code is read, not executed: Python is parsed (:mod:`._pyscan`), other languages
are scanned as text (:mod:`._codescan`). What it deletes, moves and writes is judged
like the shell's deletes and writes, the commands it runs are analysed as shell, code
it builds at run time escalates, and a secret it sends over the network is denied.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import judge_argv, nested, read_script, stdin_text, write_target
from smllm.gate.shell._model import (
    Context,
    Finding,
    LazyRe,
    is_short_flags,
    strip_version,
)
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

# inline-code options per interpreter family, and options that take an argument
_INLINE = {
    "python": {"-c"},
    "pypy": {"-c"},
    "node": {"-e", "--eval", "-p", "--print"},
    "deno": {"eval"},
    "bun": {"-e", "--eval"},
    "ruby": {"-e"},
    "perl": {"-e", "-E"},
    "php": {"-r"},
    "lua": {"-e"},
    "rscript": {"-e"},
    "osascript": {"-e"},
    "pwsh": {"-c", "-command"},
    "powershell": {"-c", "-command"},
    "tclsh": set(),
}
_WITH_ARG = {
    "python": {"-W", "-X", "-Q"},
    "node": {"-r", "--require", "--import", "--loader", "--experimental-loader"},
    "ruby": {"-r", "-I", "-C"},
    "perl": {"-I", "-M", "-m"},
    "php": {"-d", "-c"},
}


def _family(name: str) -> str:
    base = strip_version(name)
    return "node" if base == "nodejs" else base


#: words one of which any Python code worth parsing contains (checked before ``ast``)
PYTHON_HINTS = ("import", "open(", "exec", "eval", "__", "getattr", "Path", "system",
                "remove", "unlink", "rmtree", "rename", "replace", "shutil", "subprocess",
                "write", "chmod", "symlink", "socket", "request", "urlopen", "compile",
                "globals")


def scan_code(code: str, ctx: Context, where: str, language: str = "") -> list[Finding]:
    """Findings for interpreter code: Python is parsed, other languages are scanned."""
    if language in ("python", "pypy"):
        if not any(h in code for h in PYTHON_HINTS):
            return []
        # ast costs 5 ms: imported only for Python code that mentions something to read
        from smllm.gate.shell import _pyscan  # noqa: PLC0415 - ast, for Python code only

        found = _pyscan.scan(code, ctx, where)
        if found is not None:
            return found
    # text scanning is for other languages: a Python script's run does not load it
    from smllm.gate.shell._codescan import scan_text  # noqa: PLC0415 - not for Python code

    return scan_text(code, ctx, where)


#: options that only check syntax: the code is not run
_SYNTAX_ONLY = {"php": ("-l", "--syntax-check"), "node": ("--check", "-c"), "ruby": ("-c",)}
#: deno's subcommands that run a file, and the ones that run code given inline
_DENO_RUN = frozenset({"run", "serve"})


def interpreter(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    fam = _family(name)
    if any(a.value in _SYNTAX_ONLY.get(fam, ()) for a in args):
        return [], True
    if fam == "deno":
        return _deno(name, args, cmd, ctx)
    inline = _INLINE.get(fam, set())
    with_arg = _WITH_ARG.get(fam, set())
    codes: list[Word] = []
    preloads: list[Word] = []
    in_place = False
    i = 0
    script: Word | None = None
    read_stdin = False
    while i < len(args):
        a = args[i]
        v = a.value
        if v is None:
            script = a
            break
        low = v.lower() if fam in ("pwsh", "powershell") else v
        if low in inline and i + 1 < len(args):
            codes.append(args[i + 1])
            i += 2
            continue
        if fam in ("python", "pypy") and is_short_flags(v, "c") and i + 1 < len(args):
            codes.append(args[i + 1])
            i += 2
            continue
        if fam in ("perl", "ruby") and v.startswith("-") and not v.startswith("--") and (
                "i" in v[1:].split(".", 1)[0]):
            in_place = True  # perl -pi -e …, ruby -i.bak: the files are edited
        if fam in ("perl", "ruby") and is_short_flags(v, "e") and len(v) > 2 and (
                i + 1 < len(args)):
            codes.append(args[i + 1])  # perl -pe CODE, -ne CODE
            i += 2
            continue
        if fam in ("python", "pypy") and (v == "-m" or (v.startswith("-m") and len(v) > 2)):
            module = v[2:] or (args[i + 1].value if i + 1 < len(args) else None) or ""
            rest = args[i + (1 if len(v) > 2 else 2):]
            if module.split(".")[0] in ("pip", "pipx", "uv", "twine", "poetry", "pdm", "hatch",
                                        "flit"):
                return judge_argv([Word(module, module), *rest], cmd, ctx)
            return [], False
        if v == "-":
            read_stdin = True
            break
        if v in with_arg:
            if fam == "node" and i + 1 < len(args) and (args[i + 1].value or "").startswith(
                    (".", "/")):
                preloads.append(args[i + 1])  # node -r ./file.js runs that file first
            i += 2
            continue
        if v.startswith("-") and len(v) > 1:
            attached = next(
                (o for o in inline if len(o) == 2 and v.startswith(o) and len(v) > 2), None
            )
            if attached and fam not in ("python", "pypy"):
                codes.append(Word(v, v[2:]))
            i += 1
            continue
        script = a
        break
    out: list[Finding] = []
    if in_place and codes:
        for f in args[i:]:
            if not (f.value or "").startswith("-"):
                out += write_target(f, ctx, truncate=False, what="edits in place", by=name)
    for p in preloads:
        out += _script(name, p, ctx, fam)
    for c in codes:
        if c.value is None:
            out.append(Finding("code.dynamic", "ask", f"{name} runs code only known at run time"))
        else:
            out += scan_code(c.value, ctx, f"{name} inline code", fam)
    if codes:
        return out, False
    if script is not None:
        return out + _script(name, script, ctx, fam), False
    if read_stdin or fam in (
        "python",
        "pypy",
        "node",
        "ruby",
        "perl",
        "php",
        "lua",
        "bun",
        "pwsh",
        "powershell",
    ):
        text, source = stdin_text(cmd)
        if text is not None:
            return scan_code(text, ctx, f"{name} reading {source}", fam), False
        if source != "the terminal":
            return [
                Finding("shell.stdin-script", "ask", f"{name} runs code read from {source}")
            ], False
    return out, False


def _deno(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """deno SUBCOMMAND: ``run``/``serve`` run a file, ``eval`` runs code, ``task`` runs a
    task of deno.json; the others (test, fmt, lint, check, ...) work on the project."""
    sub = next((a.value for a in args if a.value and not a.value.startswith("-")), None)
    rest = args[[a.value for a in args].index(sub) + 1:] if sub else []
    if sub in _DENO_RUN:
        script = next((a for a in rest if not (a.value or "").startswith("-")), None)
        return (_script(name, script, ctx, "node") if script is not None else []), False
    if sub == "eval":
        code = next((a for a in rest if not (a.value or "").startswith("-")), None)
        if code is None or code.value is None:
            return [Finding("code.dynamic", "ask", f"{name} eval of a run-time string")], False
        return scan_code(code.value, ctx, f"{name} eval", "node"), False
    if sub == "task":
        # task files are read only for deno task, off the path of every other run
        from smllm.gate.shell import _tasks  # noqa: PLC0415 - task files: deno task only

        task = next((a.value for a in rest if a.value and not a.value.startswith("-")), None)
        path = _tasks.find_up(ctx.cwd, ("deno.json", "deno.jsonc"), ctx.root, ctx)
        body = _tasks.table(_tasks.json_file(path, ctx) if path else None, "tasks").get(
            task or "")
        if isinstance(body, str):
            return _tasks.run_lines(f"{name} task {task}", [body], ctx), False
        return ([] if task is None else _tasks.unread(name, f"the task {task!r}")), False
    return [], sub in ("fmt", "lint", "check", "info", "doc", "--version")


def _script(name: str, word: Word, ctx: Context, fam: str) -> list[Finding]:
    text = read_script(word, ctx)
    if text is None:
        if word.value is None:
            return [
                Finding(
                    "shell.unread-script", "ask", f"{name} runs a script only known at run time"
                )
            ]
        return [Finding("shell.unread-script", "ask",
                        f"{name} runs {word.value}, which smllm cannot read (yet)")]
    return scan_code(text, ctx, f"{name} {word.value}", fam)


_AWK_EXEC = LazyRe(r"system\s*\(|\|\s*&|\|\s*getline|\|\s*\"|print[^;}]*\|")


def awk(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    program: str | None = None
    in_place = False
    kept: list[Word] = []
    j = 0
    while j < len(args):  # gawk -i inplace: the files named after the program are edited
        v = args[j].value
        if v in ("-i", "--include") and j + 1 < len(args) and args[j + 1].value == "inplace":
            in_place, j = True, j + 2
            continue
        if v in ("--include=inplace", "-iinplace"):
            in_place, j = True, j + 1
            continue
        kept.append(args[j])
        j += 1
    args = kept
    i = 0
    while i < len(args):
        v = args[i].value
        if v in ("-F", "-v", "-i", "--assign", "--field-separator"):
            i += 2
            continue
        if v in ("-f", "--file") and i + 1 < len(args):
            program = read_script(args[i + 1], ctx)
            if program is None:
                return [
                    Finding("shell.unread-script", "ask", f"{name} -f program not readable")
                ], False
            break
        if v is None:
            return [
                Finding("code.dynamic", "ask", f"{name} program only known at run time")
            ], False
        if v.startswith("-") and len(v) > 1:
            i += 1
            continue
        program = v
        break
    out: list[Finding] = []
    if in_place:
        for f in args[i + 1:]:
            if not (f.value or "").startswith("-"):
                out += write_target(f, ctx, truncate=False, what="edits in place", by=name)
    if program is None or not _AWK_EXEC.search(program):
        return out, not in_place
    out.append(Finding("code.inline-shell", "ask", f"{name} program runs shell commands"))
    from smllm.gate.shell._codescan import STRING  # noqa: PLC0415 - awk that runs commands

    for m in STRING.finditer(program):
        lit = next(g for g in m.groups() if g is not None)
        out += nested(lit, ctx, f"{name} system()")
    return out, False


_SED_ADDR = r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/)"
_SED_E = LazyRe(
    rf"(?:^|[;\n{{}}])\s*(?:{_SED_ADDR}(?:\s*,\s*{_SED_ADDR})?)?\s*!?\s*e"
    r"(?:\s+([^;\n}]*)|\s*$|(?=[;\n}]))"
)
_SED_S_E = LazyRe(
    r"(?:^|[;\n{}])\s*[^sy;\n]*s(.)(?:(?!\1).|\\.)*\1(?:(?!\1).|\\.)*\1"
    r"[gpiImM0-9w]*e"
)
_SED_W = LazyRe(r"(?:^|[;\n{}]|\s)[wW]\s+(\S+)|s(.).*?\2.*?\2[gpiImM0-9]*w\s+(\S+)")


def sed(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    scripts: list[str | None] = []
    files: list[Word] = []
    in_place = False
    i = 0
    while i < len(args):
        v = args[i].value
        if v in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1].value)
            i += 2
            continue
        if v in ("-f", "--file", "-l", "--line-length") and i + 1 < len(args):
            if v in ("-f", "--file"):
                scripts.append(None)
            i += 2
            continue
        if v is not None and v.startswith("--expression="):
            scripts.append(v.split("=", 1)[1])
        elif v is not None and (
            v.startswith("-i") or v.startswith("--in-place") or re.fullmatch(r"-[nrsuzE]*i\S*", v)
        ):
            in_place = True
        elif v is not None and v.startswith("-") and len(v) > 1:
            pass
        elif not scripts and not files and (v is not None or not scripts):
            scripts.append(v)
        else:
            files.append(args[i])
        i += 1
    out: list[Finding] = []
    for s in scripts:
        if s is None:
            out.append(Finding("code.dynamic", "ask", "sed script only known at run time"))
            continue
        for m in _SED_E.finditer(s):
            out.append(Finding("code.inline-shell", "ask", "sed 'e' runs a shell command"))
            if m.group(1):
                out += nested(m.group(1), ctx, "sed e")
        if _SED_S_E.search(s):
            out.append(
                Finding("code.inline-shell", "ask", "sed s///e runs the result as a command")
            )
        for m in _SED_W.finditer(s):
            target = m.group(1) or m.group(3)
            if target and target not in ("/dev/stdout", "/dev/stderr"):
                out += write_target(Word(target, target), ctx, truncate=True, what="sed writes")
    if in_place:
        for f in files:
            out += write_target(f, ctx, truncate=False, what="edits in place")
    return out, not in_place and not out


def editor(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    for i, a in enumerate(args):
        v = a.value or ""
        cmd_text = None
        if v in ("-c", "--cmd", "--eval", "-eval") and i + 1 < len(args):
            cmd_text = args[i + 1].value or "!"
        elif v.startswith("+"):
            cmd_text = v[1:]
        if cmd_text is not None and re.search(
            r"!|system\s*\(|shell-command|call-process", cmd_text
        ):
            return [
                Finding(
                    "code.editor-shell",
                    "ask",
                    f"{name} runs a shell command from its command line",
                )
            ], False
    return [], False


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    **{a: awk for a in ("awk", "gawk", "mawk", "nawk", "busybox-awk")},
    "sed": sed,
    "gsed": sed,
    **{e: editor for e in ("vim", "vi", "nvim", "ex", "view", "emacs", "nano", "gvim")},
    "python": interpreter,  # every interpreter name the table matches by pattern
}
