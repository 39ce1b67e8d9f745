# ruff: noqa: PLR0912, C901 - a shell grammar is a big case analysis; /tmp is data here
"""Programs that run code: interpreters' inline code, scripts and heredocs; awk, sed, editors.

Inline code is scanned, not executed: file-destroying APIs escalate, shell-running APIs
have their string literals analysed as shell, and dynamic code (``eval``, ``exec``,
``__import__``, decoding) escalates. A string literal naming a protected path next to a
destroying API is denied.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import nested, read_script, stdin_text, write_target
from smllm.gate.shell._model import (
    IGNORECASE,
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

DESTRUCTIVE_API = LazyRe(
    r"rmtree|os\s*\.\s*(remove|unlink|rmdir|removedirs|truncate)\b|\.unlink\s*\(|rmSync|"
    r"rmdirSync|unlinkSync|\bfs\s*\.\s*(rm|rmdir|unlink)\b|promises\s*\.\s*rm|rm_rf|rm_r\b|"
    r"FileUtils\s*\.\s*(rm|remove)|remove_tree|rmtree|\bunlink\b|File\s*\.\s*delete|"
    r"Dir\s*\.\s*delete|Remove-Item|Clear-Content|Format-Volume|\bdel\s+/|send2trash|"
    r"\.rmdir\s*\(|truncate\s*\(|\bshred\b",
    IGNORECASE,
    hints=("rmtree", "remove", "unlink", "rmdir", "truncate", "rmsync", "fs", "promises",
           "rm_r", "fileutils", "delete", "clear-content", "format-volume", "del", "send2trash",
           "shred"),
)
SHELL_API = LazyRe(
    r"os\s*\.\s*(system|popen|exec\w*|spawn\w*)|subprocess|pty\s*\.\s*spawn|commands\s*\.|"
    r"child_process|execSync|spawnSync|execFile|\bexec\s*\(|\bsystem\s*\(|%x[\{\(\[]|"
    r"IO\s*\.\s*popen|Open3|\bqx[\{\(\[/]|passthru|shell_exec|proc_open|\bpopen\s*\(|"
    r"Start-Process|Invoke-Expression|\biex\b|`[^`]+`|\bspawn\s*\(",
    hints=("system", "popen", "exec", "spawn", "subprocess", "commands", "child_process", "%x",
           "Open3", "qx", "passthru", "proc_open", "Start-Process", "Invoke-Expression", "iex",
           "`"),
)
DYNAMIC_API = LazyRe(
    r"__import__|\beval\s*\(|\bexec\s*\(|\bcompile\s*\(|getattr\s*\(|importlib|b64decode|"
    r"base64|codecs\s*\.\s*decode|marshal|pickle\s*\.\s*loads|\bFunction\s*\(|"
    r"\brequire\s*\(\s*[^'\"\s]|\bsend\s*\(|instance_eval|class_eval|\bString\.fromCharCode",
    hints=("__import__", "eval", "exec", "compile", "getattr", "importlib", "b64decode",
           "base64", "codecs", "marshal", "pickle", "Function", "require", "send",
           "fromCharCode"),
)
_STRING = LazyRe(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`")

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
    "node": {"-r", "--require", "--import"},
    "ruby": {"-r", "-I", "-C"},
    "perl": {"-I", "-M", "-m"},
    "php": {"-d", "-c"},
}


def _family(name: str) -> str:
    base = strip_version(name)
    return "node" if base == "nodejs" else base


def scan_code(code: str, ctx: Context, where: str) -> list[Finding]:
    """Findings for interpreter code (any language)."""
    out: list[Finding] = []
    destructive = DESTRUCTIVE_API.search(code)
    shell_call = SHELL_API.search(code)
    literals = (
        [next(g for g in m.groups() if g is not None) for m in _STRING.finditer(code)]
        if destructive or shell_call
        else []
    )
    if destructive:
        worst = _protected_literal(literals, ctx)
        if worst:
            out.append(
                Finding(
                    "code.inline-destructive-protected",
                    "deny",
                    f"{where} deletes the protected path {worst}",
                )
            )
        else:
            out.append(
                Finding(
                    "code.inline-destructive",
                    "ask",
                    f"{where} deletes or truncates files ({destructive.group(0)})",
                )
            )
    if shell_call:
        out.append(
            Finding(
                "code.inline-shell",
                "ask",
                f"{where} runs shell commands ({shell_call.group(0)[:40]})",
            )
        )
        for lit in literals:
            if " " in lit.strip() or "/" in lit:
                out += nested(lit, ctx, f"{where} runs")
    dynamic = DYNAMIC_API.search(code)
    if dynamic:
        out.append(
            Finding("code.dynamic", "ask", f"{where} builds code at run time ({dynamic.group(0)})")
        )
    return out


def _protected_literal(literals: list[str], ctx: Context) -> str | None:
    for lit in literals:
        value = lit.strip()
        if value.startswith("~"):
            value = ctx.home + value[1:]
        if value.startswith("/") and ctx.where_path(ctx.resolve(value) or value) in (
            "critical",
            "sensitive",
            "outside",
            "device",
        ):
            return lit
    return None


def interpreter(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    fam = _family(name)
    inline = _INLINE.get(fam, set())
    with_arg = _WITH_ARG.get(fam, set())
    codes: list[Word] = []
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
        if fam in ("python", "pypy") and v == "-m":
            return [], False
        if v == "-":
            read_stdin = True
            break
        if v in with_arg:
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
    for c in codes:
        if c.value is None:
            out.append(Finding("code.dynamic", "ask", f"{name} runs code only known at run time"))
        else:
            out += scan_code(c.value, ctx, f"{name} inline code")
    if codes:
        return out, False
    if script is not None:
        return out + _script(name, script, ctx), False
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
            return scan_code(text, ctx, f"{name} reading {source}"), False
        if source != "the terminal":
            return [
                Finding("shell.stdin-script", "ask", f"{name} runs code read from {source}")
            ], False
    return out, False


def _script(name: str, word: Word, ctx: Context) -> list[Finding]:
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
    return scan_code(text, ctx, f"{name} {word.value}")


_AWK_EXEC = LazyRe(r"system\s*\(|\|\s*&|\|\s*getline|\|\s*\"|print[^;}]*\|")


def awk(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    program: str | None = None
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
    if program is None or not _AWK_EXEC.search(program):
        return [], True
    out = [Finding("code.inline-shell", "ask", f"{name} program runs shell commands")]
    for m in _STRING.finditer(program):
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
