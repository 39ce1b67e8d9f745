"""Programs that run code: interpreters' inline code, scripts and heredocs; awk, sed, editors.

Inline code is read, not executed: Python is parsed (:mod:`._pyscan`), other languages
are scanned as text (:mod:`._codescan`). What it deletes, moves and writes is judged
like the shell's deletes and writes, the commands it runs are analysed as shell, code
it builds at run time escalates, and a secret it sends over the network is denied.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import judge_argv, nested, read_script, stdin_text, write_target
from smllm.gate.shell._decisions import finding
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


#: the interpreters that read their program from stdin when given none
_READS_STDIN = frozenset({"python", "pypy", "node", "ruby", "perl", "php", "lua", "bun", "pwsh",
                          "powershell"})


class _Run:
    """What an interpreter's command line runs, as :func:`_read_run` reads it: inline
    code, preloaded files, a script, stdin, or a module (``python -m MODULE ARGS``);
    ``end``: where the reading stopped (the files an in-place edit changes follow)."""

    __slots__ = ("codes", "end", "in_place", "module", "preloads", "read_stdin", "script")

    def __init__(self) -> None:
        self.codes: list[Word] = []
        self.preloads: list[Word] = []
        self.in_place = False
        self.script: Word | None = None
        self.read_stdin = False
        self.module: tuple[str, list[Word]] | None = None
        self.end = 0


def interpreter(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    fam = _family(name)
    if any(a.value in _SYNTAX_ONLY.get(fam, ()) for a in args):
        return [], True
    if fam == "deno":
        return _deno(name, args, cmd, ctx)
    run = _read_run(fam, args)
    if run.module is not None:
        return _module(run.module, cmd, ctx)
    out = _run_findings(name, fam, run, args, ctx)
    if run.codes:
        return out, False
    if run.script is not None:
        return out + _script(name, run.script, ctx, fam), False
    stdin = _stdin_code(name, fam, cmd, ctx) if run.read_stdin or fam in _READS_STDIN else None
    return (out if stdin is None else stdin), False


def _module(module: tuple[str, list[Word]], cmd: Simple, ctx: Context) -> Result:
    """``python -m MODULE ARGS``: the package tools run as themselves, other modules are
    code smllm does not read."""
    name, rest = module
    if name.split(".")[0] in ("pip", "pipx", "uv", "twine", "poetry", "pdm", "hatch", "flit"):
        return judge_argv([Word(name, name), *rest], cmd, ctx)
    return [], False


def _stdin_code(name: str, fam: str, cmd: Simple, ctx: Context) -> list[Finding] | None:
    """The findings of the code an interpreter reads from stdin (None: the terminal)."""
    text, source = stdin_text(cmd)
    if text is not None:
        return scan_code(text, ctx, f"{name} reading {source}", fam)
    if source != "the terminal":
        return [Finding("shell.stdin-script", "ask", f"{name} runs code read from {source}")]
    return None


def _read_run(fam: str, args: list[Word]) -> _Run:
    run = _Run()
    i = 0
    while 0 <= i < len(args):
        run.end = i
        i = _read_word(fam, args, i, run)
    run.end = len(args) if i >= len(args) else run.end
    return run


def _read_word(fam: str, args: list[Word], i: int, run: _Run) -> int:
    """Read ``args[i]`` into ``run``: the index to read next, or -1 to stop."""
    v = args[i].value
    if v is None or not v.startswith("-"):
        run.script = args[i]
        return -1
    if fam in ("perl", "ruby") and v.startswith("-") and not v.startswith("--") and (
            "i" in v[1:].split(".", 1)[0]):
        run.in_place = True  # perl -pi -e …, ruby -i.bak: the files are edited
    if i + 1 < len(args) and _code_follows(fam, v):
        run.codes.append(args[i + 1])  # python -c CODE, perl -pe CODE, node --eval CODE
        return i + 2
    if fam in ("python", "pypy") and (v == "-m" or (v.startswith("-m") and len(v) > 2)):
        module = v[2:] or (args[i + 1].value if i + 1 < len(args) else None) or ""
        run.module = (module, args[i + (1 if len(v) > 2 else 2):])
        return -1
    if v == "-":
        run.read_stdin = True
        return -1
    if v in _WITH_ARG.get(fam, ()):
        if fam == "node" and i + 1 < len(args) and (args[i + 1].value or "").startswith(
                (".", "/")):
            run.preloads.append(args[i + 1])  # node -r ./file.js runs that file first
        return i + 2
    attached = next((o for o in _INLINE.get(fam, ())
                     if len(o) == 2 and v.startswith(o) and len(v) > 2), None)
    if attached and fam not in ("python", "pypy"):
        run.codes.append(Word(v, v[2:]))
    return i + 1


def _code_follows(fam: str, v: str) -> bool:
    """The option ``v`` takes the code to run as its next word."""
    low = v.lower() if fam in ("pwsh", "powershell") else v
    if low in _INLINE.get(fam, ()):
        return True
    if fam in ("python", "pypy"):
        return is_short_flags(v, "c")
    return fam in ("perl", "ruby") and is_short_flags(v, "e") and len(v) > 2


def _run_findings(name: str, fam: str, run: _Run, args: list[Word], ctx: Context
                  ) -> list[Finding]:
    out: list[Finding] = []
    if run.in_place and run.codes:
        for f in args[run.end:]:
            if not (f.value or "").startswith("-"):
                out += write_target(f, ctx, truncate=False, what="edits in place", by=name)
    for p in run.preloads:
        out += _script(name, p, ctx, fam)
    for c in run.codes:
        if c.value is None:
            out.append(Finding("code.dynamic", "ask", f"{name} runs code only known at run time"))
        else:
            out += scan_code(c.value, ctx, f"{name} inline code", fam)
    return out


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
    in_place, args = _awk_inplace(args)
    program, i, refused = _awk_program(name, args, ctx)
    if refused is not None:
        return [refused], False
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


def _awk_inplace(args: list[Word]) -> tuple[bool, list[Word]]:
    """gawk ``-i inplace``: whether the files named after the program are edited, and the
    arguments without that option."""
    in_place = False
    kept: list[Word] = []
    j = 0
    while j < len(args):
        v = args[j].value
        if v in ("-i", "--include") and j + 1 < len(args) and args[j + 1].value == "inplace":
            in_place, j = True, j + 2
            continue
        if v in ("--include=inplace", "-iinplace"):
            in_place, j = True, j + 1
            continue
        kept.append(args[j])
        j += 1
    return in_place, kept


def _awk_program(name: str, args: list[Word], ctx: Context
                 ) -> tuple[str | None, int, Finding | None]:
    """awk's program text (from ``-f FILE`` or its first operand), where the reading
    stopped, and the finding when the program cannot be known."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v in ("-F", "-v", "-i", "--assign", "--field-separator"):
            i += 2
            continue
        if v in ("-f", "--file") and i + 1 < len(args):
            program = read_script(args[i + 1], ctx)
            if program is None:
                return None, i, Finding("shell.unread-script", "ask",
                                        f"{name} -f program not readable")
            return program, i, None
        if v is None:
            return None, i, Finding("code.dynamic", "ask",
                                    f"{name} program only known at run time")
        if not v.startswith("-") or len(v) == 1:
            return v, i, None
        i += 1
    return None, i, None


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
    scripts, files, in_place = _sed_argv(args)
    out: list[Finding] = []
    for s in scripts:
        out += _sed_script(s, ctx)
    if in_place:
        if any(_sed_wipes(s) for s in scripts) or _sed_quiet(args):
            shown = ", ".join(f.value or f.raw for f in files[:3]) or "the files it is given"
            out.append(finding("fs.wipe-contents", f"sed -i empties what it edits ({shown})"))
        for f in files:
            out += write_target(f, ctx, truncate=False, what="edits in place")
    return out, not in_place and not out


#: sed scripts that delete every line (``d``, ``1,$d``, ``/./d``) or empty it (``s/.*//``)
#: (a pattern, compiled on first use: ``re`` loads only for a sed script)
_SED_WIPE = (r"\s*(?:(?:1\s*,\s*\$|/\^?\.[*+]?\$?/|/\^/)\s*)?d\s*"
             r"|\s*s(.)\^?\.[*+]\$?\1\1g?\s*")


def _sed_wipes(script: str | None) -> bool:
    return script is not None and any(re.fullmatch(_SED_WIPE, part)
                                      for part in re.split(r"[;\n]", script) if part.strip())


def _sed_quiet(args: list[Word]) -> bool:
    """``-n`` with ``-i``: each file keeps only what the script prints (``-n 1p``: one
    line)."""
    return any(v in ("-n", "--quiet", "--silent") or re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", v)
               is not None for v in (a.value or "" for a in args) if not v.startswith("--in"))


def _sed_argv(args: list[Word]) -> tuple[list[str | None], list[Word], bool]:
    """sed's scripts (None: only known at run time, or in a file), its files, and
    whether it edits them in place."""
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
        elif v is not None and _sed_in_place(v):
            in_place = True
        elif v is not None and v.startswith("-") and len(v) > 1:
            pass
        elif not scripts and not files and (v is not None or not scripts):
            scripts.append(v)
        else:
            files.append(args[i])
        i += 1
    return scripts, files, in_place


def _sed_in_place(v: str) -> bool:
    return v.startswith(("-i", "--in-place")) or re.fullmatch(r"-[nrsuzE]*i\S*", v) is not None


def _sed_script(s: str | None, ctx: Context) -> list[Finding]:
    """What one sed script runs (``e``, ``s///e``) and writes (``w FILE``)."""
    if s is None:
        return [Finding("code.dynamic", "ask", "sed script only known at run time")]
    out: list[Finding] = []
    for m in _SED_E.finditer(s):
        out.append(Finding("code.inline-shell", "ask", "sed 'e' runs a shell command"))
        if m.group(1):
            out += nested(m.group(1), ctx, "sed e")
    if _SED_S_E.search(s):
        out.append(Finding("code.inline-shell", "ask", "sed s///e runs the result as a command"))
    for m in _SED_W.finditer(s):
        target = m.group(1) or m.group(3)
        if target and target not in ("/dev/stdout", "/dev/stderr"):
            out += write_target(Word(target, target), ctx, truncate=True, what="sed writes")
    return out


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
