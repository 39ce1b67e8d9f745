"""The analyser's core: walk a parsed script and judge each simple command.

Each simple command is reduced to its effective argv (wrappers such as ``sudo``,
``env``, ``timeout`` or ``busybox`` stripped, ``bash -c``/``eval`` strings parsed and
analysed recursively) and handed to the handler its program has in the table of
:mod:`smllm.gate.shell._programs`. A command whose name is not known statically (a
variable, a substitution, a glob) is escalated, never allowed.

Every family module (``_fs``, ``_git``, ``_launchers``, ...) imports this module for
what handlers share (:func:`judge_argv`, :func:`nested`, :func:`write_target`, ...);
this module imports none of them: it finds a handler through the table, which loads a
family's module on first use.
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.gate.shell import _flows, _programs
from smllm.gate.shell._model import (
    VIRTUAL,
    Analysis,
    CommandReport,
    Context,
    Finding,
    LazyRe,
    is_lower_assignment,
    worst,
)
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Script, Simple, Word, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from smllm.gate.shell._model import Decision

MAX_LEN = 200_000
_CONFUSABLE_RE = LazyRe(
    "[\u2010-\u2015\u2212\ufe58\ufe63\uff0d\u00a0\u1680\u2000-\u200f"
    "\u2028\u2029\u202f\u205f\u3000\ufeff]"
)
_FORK_BOMB_RE = LazyRe(r"(\S+)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&")


def analyse_text(text: str, ctx: Context) -> Analysis:
    """Analyse one command string in ``ctx`` (never raises)."""
    if len(text) > MAX_LEN:
        f = Finding("shell.too-complex", "ask", f"command is {len(text)} characters long")
        return Analysis("ask", (), (f,))
    if ctx.depth > 8 or ctx.memory.budget <= 0:
        f = Finding("shell.too-complex", "ask", "command nests shells too deeply to analyse")
        return Analysis("ask", (), (f,))
    ctx.memory.budget -= 1
    script = parse(text, cwd=ctx.cwd or ctx.root, home=ctx.home, tmpdir=ctx.tmpdir)
    return analyse_script(script, text, ctx)


def analyse_script(script: Script, text: str, ctx: Context) -> Analysis:
    findings: list[Finding] = []
    for err in script.errors:
        findings.append(Finding("shell.syntax", "ask", f"cannot parse the command: {err}"))
    if not text.isascii() and _CONFUSABLE_RE.search(text):
        findings.append(
            Finding(
                "shell.confusable", "ask", "look-alike Unicode dashes or spaces in the command"
            )
        )
    if "()" in text and _FORK_BOMB_RE.search(text):
        findings.append(Finding("sys.destroy", "deny", "fork bomb"))
    reports: list[CommandReport] = []
    for cmd in script.commands:
        if cmd.words and cmd.words[0].value in script.functions and not cmd.nested:
            reports.append(CommandReport(_argv(cmd.words), (), False))
            continue
        before = len(ctx.memory.effects)
        found, safe, program_safe = judge_simple(cmd, ctx)
        scope = None if safe or found else _scope(cmd, ctx, before, program_safe)
        reports.append(CommandReport(_argv(cmd.words) or ("(redirection)",), tuple(found), safe,
                                     scope))
    decision = worst([f.decision for f in findings] + [r.decision for r in reports])
    return Analysis(decision, tuple(reports), tuple(findings))


def _scope(cmd: Simple, ctx: Context, before: int, program_safe: bool) -> str | None:
    """How far a command without findings that is not read-only reaches: ``temp`` or
    ``workspace`` when it is a read-only program whose redirections write (``program_safe``)
    or a file utility whose every effect the analysis records (:data:`_programs.CONFINED`),
    and each effect (from ``before`` on) names a file in the temp folders or the
    workspace; else None."""
    if cmd.nested or cmd.assigns:
        return None
    if cmd.words and not program_safe:
        first = cmd.words[0]
        if first.value is None or first.quoted or first.value not in _programs.CONFINED:
            return None
    effects = ctx.memory.effects[before:]
    if not effects:
        return None
    scope = "temp"
    for e in effects:
        if e.path is None or e.kind not in ("write", "delete", "move"):
            return None
        where = ctx.where_path(e.path)
        if where == "workspace":
            scope = "workspace"
        elif where != "temp":
            return None
    return scope


def _argv(words: list[Word]) -> tuple[str, ...]:
    return tuple(w.value if w.value is not None else w.raw for w in words)


def nested(text: str, ctx: Context, via: str) -> list[Finding]:
    """Findings of a command string run by ``via`` (``bash -c``, ``eval``, …)."""
    sub = analyse_text(text, ctx.child())
    return [Finding(f.rule, f.decision, f"{via}: {f.reason}", f.path)
            for f in sub.all_findings()]


def stdin_text(cmd: Simple) -> tuple[str | None, str]:
    """(text fed to ``cmd`` on stdin if statically known, a description of the source)."""
    for r in cmd.redirects:
        if r.op in ("<<", "<<-", "<<<"):
            return (r.body if r.body_known else None), "a heredoc"
        if r.op == "<" and r.target is not None:
            return None, f"the file {r.target.raw}"
    src = cmd.stdin
    if src is None:
        return None, "the terminal"
    text = output_of(src)
    if text is not None:
        return text, os.path.basename(src.words[0].value or "")
    first = src.words[0].value if src.words else None
    return None, f"the output of {first or 'a command'}"


def output_of(cmd: Simple) -> str | None:
    """What ``cmd`` prints, when it is a static ``echo``, ``printf`` or ``cat`` of a
    heredoc or here-string (None otherwise)."""
    if not cmd.words or any(w.value is None for w in cmd.words):
        return None
    argv = [w.value or "" for w in cmd.words]
    name = os.path.basename(argv[0])
    if name == "echo":
        args = argv[1:]
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return " ".join(args).replace("\\n", "\n") + "\n"
    if name == "printf" and len(argv) >= 2:
        return _printf(argv[1], argv[2:])
    if name in ("cat", "tee") and all(a.startswith("-") for a in argv[1:] if name == "cat"):
        for r in cmd.redirects:
            if r.op in ("<<", "<<-", "<<<"):
                return r.body if r.body_known else None
    return None


def _printf(fmt: str, args: list[str]) -> str | None:
    """``printf FMT ARGS`` for formats of plain text and ``%s`` (None: another format)."""
    text = fmt.replace("\\n", "\n").replace("\\t", "\t").replace("%%", "\0")
    if "%" in text.replace("%s", ""):
        return None
    slots = text.count("%s")
    if not slots:
        return text.replace("\0", "%")
    out = []
    for i in range(0, max(len(args), 1), slots):
        chunk = args[i:i + slots] + [""] * slots
        piece = text
        for a in chunk[:slots]:
            piece = piece.replace("%s", a, 1)
        out.append(piece)
    return "".join(out).replace("\0", "%")


def run_script_file(name: str, word: Word, ctx: Context) -> list[Finding]:
    """A shell running a script file: analyse the file when it can be read."""
    text = read_script(word, ctx)
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


def read_script(word: Word, ctx: Context) -> str | None:
    """The text of the script file ``word`` names (None: cannot be read); its digest is
    kept in ``ctx.scripts`` so that the check after the run can tell if it changed. A
    file this command string writes first is read from what it writes (None when that
    is not known statically)."""
    if word.value is None or word.glob:
        return None
    path = ctx.resolve(word.value)
    if path is None:
        return None
    written = ctx.memory.written
    if path in written:
        text = written[path]
        if text is not None and not path.startswith(VIRTUAL):
            ctx.memory.script(path, text.encode(), text)
        return text
    try:
        with open(path, "rb") as fh:
            data = fh.read(256 * 1024 + 1)
    except OSError:
        return None
    if len(data) > 256 * 1024:
        return None
    text = data.decode("utf-8", "replace")
    ctx.memory.script(path, data, text)  # what was analysed, for the check after the run
    return text


def stdin_script(name: str, cmd: Simple, ctx: Context) -> list[Finding]:
    """A shell or ``source`` reading code on stdin: analyse it when it is known."""
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


def judge_simple(cmd: Simple, ctx: Context) -> tuple[list[Finding], bool, bool]:
    """Findings for one simple command, whether it is known to be read-only, and whether
    its program is (its redirections aside: ``sort a > b``)."""
    memory = ctx.memory
    before = len(memory.effects)
    findings = _redirects(cmd, ctx)
    for name, value in cmd.assigns:
        findings += environment(name, value, ctx)
    safe = True
    if cmd.words:
        found, safe = judge_argv(list(cmd.words), cmd, ctx)
        findings += found
    _remember_writes(cmd, ctx)
    hits = _flows.reads(cmd, ctx)
    if hits:
        _flows.note(hits, cmd, ctx, before)
        store = next((path for path, kind in hits if kind == "store"), None)
        if store is not None:
            findings.append(Finding("exfil.read-credentials", "ask",
                                    f"reads the credential store {store}", store))
    return findings, safe and not findings and not _writes_a_file(cmd), safe


#: redirection targets that are not files: writing to them changes nothing on disk
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def _writes_a_file(cmd: Simple) -> bool:
    """Whether a redirection writes a file: such a command is not read-only, even when every
    finding about the write was allowed (``echo hi > notes.txt`` in the workspace)."""
    for r in cmd.redirects:
        if r.op in (">", ">|", "&>", "<>", ">>", "&>>", ">&"):
            value = r.target.value if r.target is not None else None
            if value is None or not (value in _NOT_FILES or _fd_duplication(value)):
                return True
    return False


_RESERVED = frozenset(
    {"{", "}", "!", "(", ")", "then", "do", "else", "time", "if", "while", "until", "elif"}
)
#: folders of installed programs: a command named by a path in one is that program
_SYSTEM_DIRS = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/",
                "/usr/local/sbin/", "/opt/homebrew/bin/", "/usr/libexec/", "/snap/bin/",
                "/usr/lib/git-core/")


def judge_argv(words: list[Word], cmd: Simple, ctx: Context) -> tuple[list[Finding], bool]:
    """Judge an argv (the command word first): the handler of its program, if any.

    A program without a handler runs its arguments as data: no finding, and known to
    be read-only only when the table lists it so. A command named by a path that is not
    an installed program's is a script: it is read and analysed.
    """
    first = words[0]
    if first.value is not None and not first.quoted:
        body = ctx.memory.aliases.get(first.value)
        if body is not None:
            return _expand_alias(first.value, body, words[1:], ctx), False
    if first.value is not None and "/" in first.value and not first.glob:
        found = _run_by_path(words, cmd, ctx)
        if found is not None:
            return found
    name, problem = command_name(first)
    if problem is not None or name is None:
        return [problem] if problem else [], False
    args = words[1:]
    if (is_lower_assignment(name) or name in _RESERVED) and args:
        return judge_argv(args, cmd, ctx)  # an assignment after a launcher (sudo FOO=1 cmd)
    return _judge_program(name, args, cmd, ctx)


def _judge_program(name: str, args: list[Word], cmd: Simple, ctx: Context
                   ) -> tuple[list[Finding], bool]:
    """A program by name: its handler, unless it only prints its help or version or is
    another system's program that is not installed here."""
    handler = _programs.lookup(name)
    if handler is None:
        return [], name in _programs.READ_ONLY
    if _help_form(name, args, cmd):
        return [], True
    if name in _programs.FOREIGN and not _installed(name, ctx):
        from smllm.gate.shell._decisions import finding  # noqa: PLC0415 - a rare finding (hot path)

        return [finding("shell.not-installed",
                        f"{name} is not installed (not found on PATH): it cannot act")], False
    return handler(name, args, cmd, ctx)


def _help_form(name: str, args: list[Word], cmd: Simple) -> bool:
    """``prog --help``, ``prog --version`` or ``prog -h`` alone, reading no stdin: it prints
    and stops (not for the programs of :data:`_programs.NOT_HELP` and the shells)."""
    return (len(args) == 1 and args[0].value in _programs.HELP_FORMS and cmd.stdin is None
            and not any(r.op in ("<", "<<", "<<-", "<<<") for r in cmd.redirects)
            and name not in _programs.NOT_HELP and name not in _programs.SHELLS)


#: where installed programs live besides the folders of ``PATH`` (the hook's ``PATH`` may
#: be shorter than the agent's shell's)
_PROGRAM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
                 "/opt/homebrew/bin", "/opt/homebrew/sbin")


#: noted among the aliases (a name no alias can have) once the command sets ``PATH``
_PATH_SET = " PATH"


def _installed(name: str, ctx: Context) -> bool:
    """Whether ``name`` resolves to a program on ``PATH`` (or a usual program folder).
    A command that sets ``PATH`` or has written files before can have put one there: it
    counts as installed."""
    memory = ctx.memory
    if _PATH_SET in memory.aliases or memory.effects or memory.written:
        return True
    home = ctx.home.rstrip("/")
    folders = [*os.environ.get("PATH", "").split(os.pathsep), *_PROGRAM_DIRS,
               f"{home}/.local/bin", f"{home}/bin"]
    return any(folder and os.access(os.path.join(folder, name), os.X_OK) for folder in folders)


def _expand_alias(name: str, body: str, args: list[Word], ctx: Context) -> list[Finding]:
    text = " ".join([body, *(a.raw for a in args)])
    return nested(text, ctx, f"alias {name}")


def _run_by_path(words: list[Word], cmd: Simple, ctx: Context
                 ) -> tuple[list[Finding], bool] | None:
    """A program named by a path: None for an installed program (judged by its name);
    otherwise the script is read and run through the interpreter its first line names
    (a file without one is a shell script), and a compiled program runs its arguments
    as data. A file that cannot be read escalates."""
    first = words[0]
    value = first.value or ""
    path = ctx.resolve(value)
    if path is None:
        return [Finding("shell.unread-script", "ask",
                        f"runs {value}, a path only known at run time")], False
    written = ctx.memory.written
    if path.startswith(_SYSTEM_DIRS) and path not in written:
        return None
    if path in written:
        text = written[path]
        if text is None:
            return [Finding("shell.unread-script", "ask",
                            f"runs {value}, written by this command with content smllm "
                            "cannot see", path)], False
        head = text[:256].encode()
    else:
        try:
            with open(path, "rb") as fh:
                head = fh.read(256)
        except OSError as exc:
            return [Finding("shell.unread-script", "ask",
                            f"runs {value}, which smllm cannot read "
                            f"({exc.strerror or type(exc).__name__})", path)], False
    if b"\0" in head or head.startswith((b"\x7fELF", b"\xcf\xfa\xed\xfe", b"MZ")):
        return [], False  # a compiled program: its arguments are data
    interpreter = ["sh"]
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if line and os.path.basename(line[0]) == "env":
            line = [w for w in line[1:] if not w.startswith("-")] or ["sh"]
        interpreter = line or ["sh"]
    argv = [Word(w, w) for w in (os.path.basename(interpreter[0]), *interpreter[1:])]
    return judge_argv([*argv, Word(first.raw, value), *words[1:]], cmd, ctx)


def environment(name: str, value: str | None, ctx: Context) -> list[Finding]:
    """Findings for setting the variable ``name`` to ``value`` for the programs run
    (``NAME=value cmd``, ``export``, ``env``): a variable that makes programs run code
    has its code analysed (see :mod:`._environ`)."""
    if name == "PATH":
        ctx.memory.aliases.setdefault(_PATH_SET, value or "")  # programs may be elsewhere now
    from smllm.gate.shell import _environ  # noqa: PLC0415 - a command setting a variable only

    kind = _environ.kind_of(name)
    if kind is None:
        return []
    if value is None:
        return [Finding("exec.code-option", "ask",
                        f"{name}, which makes programs run code, is set to a run-time value")]
    return _SETTING_KINDS.get(kind, _loads_code)(name, value, ctx)


def _shell_setting(name: str, value: str, ctx: Context) -> list[Finding]:
    text = value.lstrip("|").replace("%s", "FILE") if name.startswith("LESS") else value
    return nested(text, ctx, name) if text.strip() else []


def _script_setting(name: str, value: str, ctx: Context) -> list[Finding]:
    return run_script_file(name, Word(value, value), ctx) if value else []


def _options_setting(name: str, value: str, ctx: Context) -> list[Finding]:
    from smllm.gate.shell import _environ  # noqa: PLC0415 - a command setting a variable only

    if _environ.loads_code(value):
        return [Finding("exec.code-option", "ask", f"{name}={value} loads code")]
    return []


def _loads_code(name: str, value: str, ctx: Context) -> list[Finding]:
    return [Finding("exec.code-option", "ask",
                    f"{name}={value} loads code into the programs it starts")]


def _git_environment(name: str, value: str, ctx: Context) -> list[Finding]:
    if name.startswith("GIT_CONFIG_VALUE_") or name == "GIT_CONFIG_COUNT":
        return []
    if name.startswith("GIT_CONFIG_KEY_"):
        from smllm.gate.shell import _environ  # noqa: PLC0415 - a command setting a variable only

        if _environ.git_key(value, None):
            return [Finding("exec.code-option", "ask",
                            f"{name} sets {value}, which makes git run a command")]
        return []
    if name == "GIT_CONFIG_PARAMETERS":
        out: list[Finding] = []
        for item in value.replace("'", " ").split():
            key, _, setting = item.partition("=")
            out += git_setting(key, setting, ctx, f"{name} {key}")
        return out
    if value in ("/dev/null", ""):
        return []
    return [Finding("exec.code-option", "ask",
                    f"{name}={value}: git reads a configuration smllm does not check")]


#: what a variable's kind (:func:`._environ.kind_of`) makes of its value; any other kind
#: loads code into the programs started
_SETTING_KINDS: dict[str, Callable[[str, str, Context], list[Finding]]] = {
    "shell": _shell_setting,
    "script": _script_setting,
    "options": _options_setting,
    "git-config": _git_environment,
}


def git_setting(key: str, value: str | None, ctx: Context, via: str) -> list[Finding]:
    """Findings for the git setting ``key`` = ``value`` (``git -c``, ``git config``)."""
    from smllm.gate.shell import _environ  # noqa: PLC0415 - a command giving git a setting only

    kind = _environ.git_key(key, value)
    if kind is None:
        return []
    if value is None:
        return [Finding("exec.code-option", "ask", f"{via} runs a command only known at run "
                        "time")]
    if kind == "code":
        return [Finding("exec.code-option", "ask",
                        f"{via}: git runs code from {value}, which smllm does not check")]
    text = value[1:] if value.startswith("!") else value
    return nested(text, ctx, via) if text.strip() else []


def _remember_writes(cmd: Simple, ctx: Context) -> None:
    """Note the files ``cmd`` writes through redirections, with their content when it
    is known (a script written and then run is analysed from it)."""
    written = ctx.memory.written
    content: str | bool | None = False  # False: not computed yet
    for r in cmd.redirects:
        if r.op not in (">", ">|", "&>", ">>", "&>>") or r.target is None:
            continue
        path = ctx.resolve(r.target.value) if r.target.value is not None else None
        if path is None:
            continue
        if content is False:
            content = output_of(cmd)
        text = content if isinstance(content, str) else None
        if r.op in (">>", "&>>"):
            before = written.get(path, _disk_text(path)) if path not in written else written[path]
            text = before + text if before is not None and text is not None else None
        written[path] = text


def _disk_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(256 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""  # appending to a file that does not exist yet


def command_name(word: Word) -> tuple[str | None, Finding | None]:
    """The program a command word names, or why it cannot be known."""
    if word.value is None:
        return None, Finding(
            "shell.dynamic-command",
            "ask",
            f"the command name {word.raw!r} is only known at run time",
        )
    if word.glob:
        return None, Finding(
            "shell.dynamic-command", "ask", f"the command name {word.raw!r} is a glob pattern"
        )
    if not word.value:
        return None, Finding("shell.dynamic-command", "ask", "empty command name")
    name = os.path.basename(word.value)
    if not name.isascii():
        import unicodedata  # noqa: PLC0415 - rare

        name = unicodedata.normalize("NFKC", name)
    name = name.lower()
    return name, None


#: a write by where it lands (the rule, its decision, the reason)
_WRITES: dict[str, tuple[str, Decision, str]] = {
    "device": ("fs.destroy", "deny", "{what} the device {shown}"),
    "sensitive": ("fs.write-sensitive", "deny", "{what} the protected path {shown}"),
    "critical": ("fs.write-sensitive", "deny", "{what} the protected path {shown}"),
    "outside": ("fs.write-outside", "ask", "{what} {shown}, outside the workspace"),
}


def write_target(
    word: Word | None, ctx: Context, *, truncate: bool, what: str, by: str = ">"
) -> list[Finding]:
    """Judge a write to ``word`` (redirection, tee, cp/mv destination, in-place edit);
    the write is recorded as an effect with its resolved path (links followed)."""
    if word is None or _not_a_file(word):
        return []
    path = ctx.record("write", word, by)
    written_before = path in ctx.memory.written
    if path is not None:
        ctx.memory.written.setdefault(path, None)  # its content: unknown unless told
    where = ctx.where(word)
    shown = word.value if word.value is not None else word.raw
    if where == "dynamic":
        return [
            Finding(
                "fs.write-unresolved", "ask", f"{what} a path only known at run time ({shown})"
            )
        ]
    if where in _WRITES:
        rule, decision, how = _WRITES[where]
        return [Finding(rule, decision, how.format(what=what, shown=shown), path)]
    if (
        where == "workspace"
        and truncate
        and path is not None
        and not written_before
        and os.path.isfile(path)
        and os.path.getsize(path) > 0
    ):
        return [Finding("fs.overwrite", "ask", f"{what} the existing file {shown}", path)]
    return []


def _not_a_file(word: Word) -> bool:
    """A write to a stream (``/dev/null``, ``/dev/fd/N``, the terminal) or to a process
    substitution (a pipe to a command analysed on its own)."""
    if word.value is None:
        return word.raw.startswith((">(", "<("))
    return word.value.startswith("/dev/fd/") or word.value in (
        "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


def into_folder(target: Word, sources: list[Word], ctx: Context) -> list[Word]:
    """The paths ``cp``/``mv``/``scp SOURCES TARGET`` write: TARGET itself, or, when it is
    a folder (it exists as one or ends in ``/``), each source's name inside it."""
    value = target.value
    if value is None:
        return [target]
    path = ctx.resolve(value)
    folder = value.endswith("/") or (path is not None and os.path.isdir(path))
    if not folder or not sources:
        return [target]
    out = []
    for src in sources:
        name = os.path.basename((src.value or "").rstrip("/").split(":")[-1])
        if src.value is None or not name or src.glob:
            out.append(Word(value.rstrip("/") + "/*", value.rstrip("/") + "/*", glob=True))
        else:
            joined = value.rstrip("/") + "/" + name
            out.append(Word(joined, joined))
    return out


def patched_files(text: str, strip: int) -> list[str]:
    """The files a unified diff changes (``+++ b/path``, ``strip`` leading components
    removed, as ``patch -pN`` does)."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("+++ "):
            name = line[4:].split("\t", 1)[0].strip()
            if name == "/dev/null":
                continue
            parts = name.split("/")
            stripped = "/".join(parts[strip:]) if strip < len(parts) else parts[-1]
            out.append(stripped or name)
    return out


#: a delete by (where it lands, recursive): the rule, its decision, the reason; none for
#: the temporary folders and a plain delete in the workspace
_DELETES: dict[tuple[str, bool], tuple[str, Decision, str]] = {
    ("device", True): ("fs.destroy", "deny", "{what} the device {shown}"),
    ("device", False): ("fs.destroy", "deny", "{what} the device {shown}"),
    ("critical", True): ("fs.delete-recursive-critical", "deny",
                         "{what} {shown}, a protected location"),
    ("critical", False): ("fs.write-sensitive", "deny", "{what} {shown}, a protected location"),
    ("sensitive", True): ("fs.delete-recursive-critical", "deny",
                          "{what} {shown}, a protected location"),
    ("sensitive", False): ("fs.write-sensitive", "deny", "{what} {shown}, a protected location"),
    ("dynamic", True): ("fs.delete-recursive-unresolved", "ask",
                        "{what} {shown}, a path only known at run time"),
    ("dynamic", False): ("fs.delete-unresolved", "ask",
                         "{what} {shown}, a path only known at run time"),
    ("outside", True): ("fs.delete-recursive-outside", "deny",
                        "{what} {shown}, outside the workspace"),
    ("outside", False): ("fs.delete-outside", "ask", "{what} {shown}, outside the workspace"),
    ("workspace", True): ("fs.delete-recursive-workspace", "ask", "{what} {shown}"),
}


def delete_target(word: Word, recursive: bool, ctx: Context, what: str, by: str = "rm"
                  ) -> list[Finding]:
    """Judge a delete of ``word`` (``rm``, ``find -delete``, code deleting a path); the
    delete is recorded as an effect. A link is removed itself unless the path ends in
    ``/`` (or is a glob), which reaches into its target."""
    path = ctx.record("delete", word, by)
    where = ctx.where(word, last=False)
    shown = word.value if word.value is not None else word.raw
    plain = ctx.path_of(word)
    if path is not None and plain is not None and path != plain and not word.glob:
        shown = f"{shown} (a link to {path})"
    row = _DELETES.get((where, recursive))
    if row is None:
        return []
    rule, decision, how = row
    return [Finding(rule, decision, how.format(what=what, shown=shown),
                    None if where == "dynamic" else path)]


def _redirects(cmd: Simple, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    for r in cmd.redirects:
        if r.op in (">", ">|", "&>", "<>"):
            out += write_target(r.target, ctx, truncate=True, what="overwrites")
        elif r.op in (">>", "&>>"):
            out += write_target(r.target, ctx, truncate=False, what="appends to")
        elif (
            r.op in (">&", "<&")
            and r.target is not None
            and r.target.value is not None
            and not _fd_duplication(r.target.value)
        ):
            out += write_target(r.target, ctx, truncate=True, what="overwrites")
    return out


def _fd_duplication(value: str) -> bool:
    r"""``\d+-?|-``: the target of ``>&`` / ``<&`` is a descriptor (or closes one)."""
    digits = value[:-1] if value.endswith("-") else value
    return value == "-" or (digits.isascii() and digits.isdigit())


def decide(findings: list[Finding]) -> Decision:
    return worst([f.decision for f in findings])
