"""Code of languages other than Python, scanned as text: Node, Ruby, Perl, PHP, Lua, R,
PowerShell, AppleScript (Python is read as Python by :mod:`._pyscan`).

* APIs that delete files escalate; with a protected path among the literals, deny;
* APIs that run shell commands have their string literals analysed as shell;
* APIs that write, copy, rename or link files (``fs.writeFileSync``, ``File.write``,
  ``FileUtils.mv``, ``rename``, ``file_put_contents``, ``open(F, '>', …)``) have their
  path argument evaluated (literals, ``~``, the home folder as each language spells it,
  ``path.join``/``File.join``, concatenation, interpolation) and judged like a shell
  write; a path that cannot be told escalates when its known part is outside the
  workspace;
* a secret read and a network API in the same code is exfiltration;
* code built at run time (``eval``, ``Function``, decoding) escalates.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import nested, write_target
from smllm.gate.shell._model import IGNORECASE, Context, Finding, LazyRe
from smllm.gate.shell._parse import Word

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
#: calls that write, copy, rename or link: (the API, the index of the path it changes)
WRITE_API = LazyRe(
    r"\b(writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream|"
    r"copyFileSync|copyFile|cpSync|renameSync|symlinkSync|linkSync|chmodSync|"
    r"outputFileSync|outputFile|moveSync|"
    r"File\.write|File\.open|IO\.write|File\.rename|File\.symlink|File\.chmod|"
    r"FileUtils\.(?:mv|move|cp|copy|cp_r|ln_s|ln_sf|ln|touch|install)|"
    r"file_put_contents|fopen|rename|symlink|copy|open|Set-Content|Add-Content|Out-File|"
    r"Copy-Item|Move-Item|New-Item)\s*\(?",
    IGNORECASE,
    hints=("write", "append", "copy", "rename", "symlink", "link", "chmod", "file", "fopen",
           "open", "set-content", "add-content", "out-file", "move", "new-item", "cpsync",
           "cp", "ln", "touch", "install", "output"),
)
_DEST_SECOND = frozenset({"copyFileSync", "copyFile", "cpSync", "renameSync", "symlinkSync",
                          "linkSync", "File.rename", "File.symlink", "rename", "symlink",
                          "copy", "moveSync", "FileUtils.mv", "FileUtils.move", "FileUtils.cp",
                          "FileUtils.copy", "FileUtils.cp_r", "FileUtils.ln_s",
                          "FileUtils.ln_sf", "FileUtils.ln", "FileUtils.install"})
_MOVES = frozenset({"renameSync", "File.rename", "rename", "moveSync", "FileUtils.mv",
                    "FileUtils.move"})
NETWORK_API = LazyRe(
    r"\bfetch\s*\(|\bhttps?\.(request|get)\b|\baxios\b|\bnet\.(connect|createConnection)|"
    r"XMLHttpRequest|Net::HTTP|URI\.open|\bLWP\b|HTTP::Tiny|IO::Socket|\bcurl_exec\b|"
    r"fsockopen|Invoke-WebRequest|Invoke-RestMethod|\bsocket\b|WebSocket|\bgot\s*\(|"
    r"superagent|\bfile_get_contents\s*\(\s*['\"]https?:",
    IGNORECASE,
    hints=("fetch", "http", "axios", "net.", "xmlhttp", "uri.open", "lwp", "socket", "curl",
           "invoke-", "websocket", "got(", "superagent", "file_get_contents"),
)
STRING = LazyRe(r"'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`")
_HOME_FORMS = ("require('os').homedir()", 'require("os").homedir()', "os.homedir()",
               "homedir()", "process.env.HOME", "process.env['HOME']", 'process.env["HOME"]',
               "Dir.home", "ENV['HOME']", 'ENV["HOME"]', "ENV.fetch('HOME')", "$ENV{HOME}",
               "$ENV{'HOME'}", '$ENV{"HOME"}', "getenv('HOME')", 'getenv("HOME")',
               "$env:HOME", "$env:USERPROFILE", "$HOME", "$_SERVER['HOME']")


def scan_text(code: str, ctx: Context, where: str) -> list[Finding]:
    """Findings for code scanned as text (any language but Python)."""
    out: list[Finding] = []
    destructive = DESTRUCTIVE_API.search(code)
    shell_call = SHELL_API.search(code)
    network = NETWORK_API.search(code)
    literals = (
        [next(g for g in m.groups() if g is not None) for m in STRING.finditer(code)]
        if destructive or shell_call or network or WRITE_API.may_match(code)
        else []
    )
    if destructive:
        worst = _protected_literal(literals, ctx)
        if worst:
            out.append(Finding("code.inline-destructive-protected", "deny",
                               f"{where} deletes the protected path {worst}"))
        else:
            out.append(Finding("code.inline-destructive", "ask",
                               f"{where} deletes or truncates files ({destructive.group(0)})"))
    if shell_call:
        out.append(Finding("code.inline-shell", "ask",
                           f"{where} runs shell commands ({shell_call.group(0)[:40]})"))
        for lit in literals:
            if " " in lit.strip() or "/" in lit:
                out += nested(lit, ctx, f"{where} runs")
    if WRITE_API.may_match(code):
        out += _writes(code, ctx, where)
    secrets = [p for p in (_literal_path(lit, ctx) for lit in literals)
               if p and ctx.secret_kind(p)]
    if network and secrets:
        out.append(Finding("exfil.secret-to-network", "deny",
                           f"{where} reads {secrets[0]} and sends data over the network "
                           f"({network.group(0).strip('( ')})", secrets[0]))
    elif secrets and any(ctx.secret_kind(p) == "store" for p in secrets):
        store = next(p for p in secrets if ctx.secret_kind(p) == "store")
        out.append(Finding("exfil.read-credentials", "ask",
                           f"{where} reads the credential store {store}", store))
    dynamic = DYNAMIC_API.search(code)
    if dynamic:
        out.append(Finding("code.dynamic", "ask",
                           f"{where} builds code at run time ({dynamic.group(0)})"))
    return out


def _literal_path(lit: str, ctx: Context) -> str | None:
    value = lit.strip()
    if value.startswith("~"):
        value = ctx.home + value[1:]
    if not value.startswith(("/", "./", "../", ".env")) or "\n" in value:
        return None
    return ctx.resolve(value)


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


def _writes(code: str, ctx: Context, where: str) -> list[Finding]:
    out: list[Finding] = []
    for m in WRITE_API.finditer(code):
        api = m.group(1)
        start = m.end()
        if code[m.end() - 1:m.end()] != "(":
            if api.startswith(("Set-", "Add-", "Out-", "Copy-", "Move-", "New-")):
                args = _powershell_args(code[start:])
            else:
                continue
        else:
            args = _arguments(code, start)
        if api in ("open", "fopen", "File.open"):
            target, writing = _open_target(api, args)
            if not writing:
                continue
        elif api in _DEST_SECOND:
            target = args[1] if len(args) > 1 else None
            if api in _MOVES and args:
                out += _judge_path("move", args[0], ctx, f"{where}: {api}")
        else:
            target = args[0] if args else None
        out += _judge_path("write", target, ctx, f"{where}: {api}")
    return out


def _arguments(code: str, start: int) -> list[str]:
    """The top-level arguments of the call whose ``(`` ends just before ``start``."""
    args: list[str] = []
    depth = 0
    cur: list[str] = []
    quote = ""
    i = start
    while i < len(code) and i - start < 2000:
        c = code[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(code):
                cur.append(code[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"`":
            quote = c
            cur.append(c)
        elif c in "([{":
            depth += 1
            cur.append(c)
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
            cur.append(c)
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    args.append("".join(cur).strip())
    return [a for a in args if a]


def _powershell_args(text: str) -> list[str]:
    line = text.split("\n", 1)[0].split("|", 1)[0].split(";", 1)[0]
    words = line.split()
    for i, w in enumerate(words):
        if w.lower() in ("-path", "-literalpath", "-filepath", "-destination") and i + 1 < len(
                words):
            return [words[i + 1]]
    return [w for w in words if not w.startswith("-")][:1]


def _open_target(api: str, args: list[str]) -> tuple[str | None, bool]:
    """(the path argument, whether it opens for writing) of open/fopen/File.open."""
    if api == "open" and len(args) >= 3:  # perl: open(my $fh, '>', $path)
        mode = _unquote(args[1]) or ""
        return args[2], mode.startswith((">", "+<", "+>", "|")) or "w" in mode
    if api == "open" and len(args) == 2 and (_unquote(args[1]) or "").startswith((">", "+>")):
        inner = _unquote(args[1]) or ""
        return repr(inner.lstrip(">+ ")), True  # perl: open(FH, ">path")
    if len(args) >= 2:
        mode = _unquote(args[1]) or ""
        return args[0], any(ch in mode for ch in "wa+x")
    return (args[0] if args else None), False


def _unquote(text: str) -> str | None:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1]
    return None


_JOINERS = ("path.join(", "path.resolve(", "File.join(", "File.expand_path(", "Join-Path ",
            "path.posix.join(")


def evaluate(expr: str | None, ctx: Context) -> tuple[str, bool] | None:
    """(the path text ``expr`` builds, whether all of it is known), or None."""
    if expr is None:
        return None
    expr = expr.strip()
    if expr in _HOME_FORMS:
        return ctx.home, True
    joiner = next((j for j in _JOINERS if expr.startswith(j)), None)
    if joiner is not None:
        inner = expr[len(joiner):]
        return _joined(_arguments(inner, 0) if joiner.endswith("(") else inner.split(), ctx)
    parts = _split_concat(expr)
    if len(parts) > 1:
        return _concatenated(parts, ctx)
    return _literal(expr, ctx)


def _joined(parts: list[str], ctx: Context) -> tuple[str, bool] | None:
    """``path.join(a, b)``: an absolute part starts again, the others join with ``/``."""
    text = ""
    for part in parts:
        value = evaluate(part, ctx)
        if value is None:
            return (text.rstrip("/") + "/", False) if text else None
        piece, complete = value
        text = piece if piece.startswith("/") or not text else text.rstrip("/") + "/" + piece
        if not complete:
            return text, False
    return text, True


def _concatenated(parts: list[str], ctx: Context) -> tuple[str, bool] | None:
    """``a + b``: the parts end to end, known up to the first unknown one."""
    text = ""
    for part in parts:
        value = evaluate(part, ctx)
        if value is None:
            return (text, False) if text else None
        text += value[0]
        if not value[1]:
            return text, False
    return text, True


def _literal(expr: str, ctx: Context) -> tuple[str, bool] | None:
    """A string literal: the home folder's spellings expanded, known up to the first
    interpolation."""
    literal = _unquote(expr)
    if literal is None:
        return None
    if expr[0] in "\"`":
        for form in _HOME_FORMS:
            for wrapped in ("${" + form + "}", "#{" + form + "}", form):
                literal = literal.replace(wrapped, ctx.home)
        if "${" in literal or "#{" in literal or (expr[0] == '"' and "$" in literal):
            head = literal.split("${", 1)[0].split("#{", 1)[0].split("$", 1)[0]
            return (head, False) if head else None
    if literal.startswith("~"):
        literal = ctx.home + literal[1:]
    return literal, True


def _split_concat(expr: str) -> list[str]:
    """``a + b`` (JavaScript, Ruby) or ``a . b`` (Perl, PHP) at the top level."""
    parts: list[str] = []
    depth = 0
    quote = ""
    cur: list[str] = []
    for i, c in enumerate(expr):
        if quote:
            cur.append(c)
            if c == quote and expr[i - 1] != "\\":
                quote = ""
            continue
        if c in "'\"`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and (c == "+" or (c == "." and expr[i - 1:i] == " "
                                          and expr[i + 1:i + 2] == " ")):
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    parts.append("".join(cur).strip())
    return [p for p in parts if p]


def _judge_path(kind: str, expr: str | None, ctx: Context, what: str) -> list[Finding]:
    value = evaluate(expr, ctx)
    if value is not None and value[1]:
        word = Word(value[0], value[0])
        if kind == "move":
            return _moved(word, ctx, what)
        return write_target(word, ctx, truncate=False, what=f"{what} writes", by="code")
    ctx.record(kind, None, "code")
    head = value[0] if value is not None else ""
    if not head.startswith("/"):
        return [] if kind == "write" else [Finding(
            "code.cannot-tell", "ask", f"{what}: cannot tell which path it moves")]
    folder = ctx.resolve(head.rsplit("/", 1)[0] or "/") or "/"
    where = ctx.where_path(folder)
    if where in ("workspace", "temp") and kind == "write":
        return []
    return [Finding("code.cannot-tell", "ask",
                    f"{what}: cannot tell which path it {'writes' if kind == 'write' else 'moves'}"
                    f" (somewhere under {folder})")]


def _moved(word: Word, ctx: Context, what: str) -> list[Finding]:
    path = ctx.record("move", word, "code")
    where = ctx.where(word, last=False)
    if where in ("critical", "sensitive", "device"):
        return [Finding("fs.move-critical", "deny",
                        f"{what} moves the protected location {word.value}", path)]
    if where in ("outside", "dynamic"):
        return [Finding("fs.delete-outside", "ask",
                        f"{what} moves {word.value} away from where it is", path)]
    return []
