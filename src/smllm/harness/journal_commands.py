"""The agent's read-only journal commands, run by smllm's PreToolUse hook on its own session.

With smllm's sandbox the journals of every session (and their index) are unreadable from
the agent's commands (:func:`smllm.base.protected.unreadable`): one project's agent must
not read another's commands and outputs. Yet the agent may read the session it runs in:
``smllm ledger --last``, ``smllm export --last`` and ``smllm verify`` (issue 20). Claude
Code's sandbox cannot show one session while hiding the others, but smllm's hooks run
outside it and know which session a call belongs to. So when a Bash call is exactly one of
these commands, the PreToolUse hook runs it itself, on the journal of the session the call
belongs to and no other, and denies the call with what the command printed: the model
reads a deny's reason as the tool's result (measured on Claude Code 2.1.332: a reason of
20,000 characters arrives whole; a longer one is cut by the host, so the output is cut at
:data:`LIMIT` with a note saying how to get the rest).

"Exactly" is read as for a plain ``smllm fire`` on the Codex route
(:func:`smllm.harness.codex_fire.literal_words`): one simple command of literal words, the
program ``smllm`` (or this installation's), and only these forms:

>>> parse("smllm ledger --last --plain")
Plain(command='ledger', journal='last', flags=('--plain',), out=None, refused=None)
>>> parse("smllm verify")
Plain(command='verify', journal=None, flags=(), out=None, refused=None)
>>> parse("smllm export --last --out t.json --redacted")
Plain(command='export', journal='last', flags=('--redacted',), out='t.json', refused=None)
>>> parse("smllm ledger --last --html x.html").refused
'--html'
>>> [parse(c) for c in ("smllm ledger t.json", "smllm verify --export t.json",
...                     "smllm ledger --last | head", "smllm fire done")]
[None, None, None, None]

A form that reads no journal (``smllm ledger EXPORT``, ``verify --export FILE``) reads a
file of the project, which the sandbox shows: it runs there as any command. A journal
named other than as ``--last`` or by this session's own id is refused, and so is an
option the hook does not run (``--html``, ``--store``): the deny's reason says which forms
it runs.

``export`` writes its document where the command would (``--out FILE``, else
``trajectory-<timestamp>.json`` in the call's folder), but only inside the project,
outside the protected set and through no link: the hook walks to the folder one component
at a time without following links (:func:`open_folder`), so a folder swapped for a link
while the hook works leads nowhere.

Hot path: nothing here loads unless a Bash call names ``smllm``.
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from smllm.base import osfast as os
from smllm.base import paths, protected
from smllm.base.errors import SmllmError
from smllm.harness.codex_fire import Ran, literal_words, programs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.base.catalogue import ToolCall

#: the intent's rule for a journal command the hook ran
RULE = "journal.command-in-hook"
#: the intent's rule for one it refused (another session, an option it does not run)
RULE_REFUSED = "journal.command-refused"
#: what the hook runs, and the flags it passes on (``--out`` is handled apart)
COMMANDS: dict[str, tuple[str, ...]] = {
    "ledger": ("--plain", "--effects", "--json"),
    "export": ("--redacted",),
    "verify": ("--json",),
}
#: the options that take a value, per command (besides the journal's)
_VALUED: dict[str, tuple[str, ...]] = {"ledger": ("--html",), "export": ("--out",),
                                       "verify": ("--store", "--host", "--export")}
#: the options whose presence means the command reads no journal (a file of the project)
_NOT_A_JOURNAL: dict[str, tuple[str, ...]] = {"export": ("--schema",),
                                              "verify": ("--export",)}
#: the longest output the deny's reason carries (measured whole on Claude Code 2.1.332)
LIMIT = 20_000
#: the first line of the reason: why the output comes this way
HEAD = ("smllm ran this command itself, from its PreToolUse hook, on the session you run in "
        "(the journals are unreadable from your sandbox). Its output:\n")
FORMS = ("smllm ledger --last [--plain] [--effects] [--json]; smllm export --last "
         "[--out FILE] [--redacted]; smllm verify [--json] (each on this session only, "
         "named by --last, by nothing, or by its own id)")


class Plain(NamedTuple):
    """A plain journal command, as its words say."""

    command: str
    journal: str | None  #: ``last``, a session named by the command, or None (none named)
    flags: tuple[str, ...]
    out: str | None  #: ``export --out FILE``
    refused: str | None  #: an option the hook does not run


def _journal_option(word: str) -> bool:
    return word in ("--journal", "--session")


def parse(command: str, allowed: tuple[str, ...] | None = None) -> Plain | None:
    """The plain journal command ``command`` is, or None (see the module's examples)."""
    words = literal_words(command) if "smllm" in command else None
    if words is None or len(words) < 2 or words[1] not in COMMANDS \
            or words[0] not in (programs() if allowed is None else allowed):
        return None
    name, args = words[1], words[2:]
    if any(a.partition("=")[0] in _NOT_A_JOURNAL.get(name, ()) for a in args):
        return None
    return _options(name, args)


def _options(name: str, args: list[str]) -> Plain | None:
    """The options of a journal command (``args`` after its name); None when it names no
    journal but a file (``ledger EXPORT``)."""
    journal: str | None = None
    flags: list[str] = []
    out: str | None = None
    refused: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        flag, eq, inline = arg.partition("=")
        value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
        step = 1 if eq else 2
        if arg == "--last":
            journal, step = "last", 1
        elif _journal_option(flag) and value is not None:
            journal = value
        elif flag == "--out" and name == "export" and value is not None:
            out = value
        elif arg in COMMANDS[name]:
            flags.append(arg)
            step = 1
        elif not arg.startswith("-") and name == "verify" and journal is None:
            journal, step = arg, 1
        elif not arg.startswith("-") and name == "ledger":
            return None  # an export file of the project: the sandbox shows it
        else:
            refused = refused or flag
            step = 2 if flag in _VALUED.get(name, ()) and not eq else 1
        i += step
    return Plain(name, journal, tuple(dict.fromkeys(flags)), out, refused)


def refusal(plain: Plain, session_id: str, log: str) -> str | None:
    """Why the hook will not run ``plain`` for the session ``session_id`` (main journal
    ``log``), or None."""
    if plain.refused is not None:
        return (f"smllm runs `smllm {plain.command}` for you from its hook, and {plain.refused} "
                f"is not among what it runs there: {FORMS}")
    if plain.journal not in (None, "last", session_id, log):
        return ("smllm reads you only the journal of the session you run in, and "
                f"{plain.journal!r} names another one (from inside a session, the others "
                "are not yours to read: a person runs such a command in a shell outside "
                "the agent)")
    return None


# ------------------------------------------------------------------ running one


def _captured(argv: list[str]) -> tuple[int, str]:
    """``smllm ARGV`` in this process, its output (stdout, then stderr) as text."""
    from smllm import cli  # noqa: PLC0415 - a journal command only

    saved = sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    try:
        code = cli.main(argv)
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue() + err.getvalue()


def run(plain: Plain, call: ToolCall, log: str) -> Ran:
    """Run ``plain`` on the journal ``log`` as the command would have run in the call's
    folder (an error is printed as the command line prints it)."""
    if plain.command == "export":
        return _export(plain, call, log)
    argv = [plain.command, *(["--journal", log] if plain.command == "ledger" else [log]),
            *plain.flags]
    code, text = _captured(argv)
    return Ran(code == 0, code, text, None)


def _export(plain: Plain, call: ToolCall, log: str) -> Ran:
    """``smllm export``: the document is written to a private folder of smllm's, then
    copied where the command would have written it (:func:`write_into_project`)."""
    folder = paths.ensure_private_tree(os.path.join(paths.state_root(), "tmp"),
                                       paths.state_root())
    scratch = tempfile.mkdtemp(dir=folder)
    try:
        code, text = _captured(["export", "--journal", log, "--out",
                                os.path.join(scratch, "export.json"), *plain.flags])
        if code != 0:
            return Ran(False, code, text, None)
        from smllm.audit import export  # noqa: PLC0415 - an export only

        name = plain.out or export.default_name(export.header(export.streams(Path(log)),
                                                              "raw"))
        try:
            where = write_into_project(os.path.join(scratch, "export.json"), name, call)
        except SmllmError as exc:
            return Ran(False, exc.exit_code, f"smllm: error: {exc.render()}\n", None)
        return Ran(True, 0, f"{where}\n", None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def open_folder(project: str, parts: list[str]) -> int:
    """A descriptor of ``project/parts...``, opened one component at a time, never through
    a link (``O_NOFOLLOW``): a folder swapped for a link meanwhile fails the walk."""
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(project, flags)
    try:
        for part in parts:
            nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _place(name: str, call: ToolCall) -> tuple[list[str], str]:
    """The folders under the project and the file name ``name`` (from the call's folder)
    lands in; refused when it leaves the project or enters the protected set."""
    from smllm.base.errors import ExportError  # noqa: PLC0415 - an export only

    project = os.path.abspath(call.project)
    full = os.path.normpath(os.path.join(call.cwd, os.path.expanduser(name)))
    rel = os.path.relpath(full, project)
    if rel == "." or rel.startswith(os.pardir) or os.path.isabs(rel):
        raise ExportError(f"export: {full} is outside the project {project}",
                          "from inside a session smllm writes the export into the project "
                          "only: --out ./trajectory.json")
    guarded = protected.with_policy(project, [])
    if any(full == p or full.startswith(p.rstrip(os.sep) + os.sep) for p in guarded):
        raise ExportError(f"export: {full} is in smllm's protected set",
                          "choose a file elsewhere in the project: --out ./trajectory.json")
    *folders, file = rel.split(os.sep)
    return folders, file


def write_into_project(source: str, name: str, call: ToolCall) -> str:
    """Copy ``source`` to ``name`` (relative to the call's folder) inside the project:
    through no link, replacing a regular file whole; return the absolute path."""
    from smllm.base.errors import ExportError  # noqa: PLC0415 - an export only

    folders, file = _place(name, call)
    target = os.path.join(os.path.abspath(call.project), *folders, file)
    try:
        dfd = open_folder(os.path.abspath(call.project), folders)
    except OSError as exc:
        raise ExportError(f"export: cannot reach the folder of {target}: "
                          f"{exc.strerror or exc} (smllm follows no link there)",
                          "give a path inside the project whose folders exist") from None
    tmp = f".{file}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     paths.FILE_MODE, dir_fd=dfd)
        try:
            with open(source, "rb") as src:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        _refuse_special(dfd, file, target)
        os.replace(tmp, file, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError as exc:
        _unlink_quietly(tmp, dfd)
        raise ExportError(f"export failed: could not write {target}: {exc.strerror or exc}",
                          "write inside a folder of the project you can write to") from None
    except BaseException:
        _unlink_quietly(tmp, dfd)
        raise
    finally:
        os.close(dfd)
    return target


def _refuse_special(dfd: int, file: str, target: str) -> None:
    """What sits at the file name must be nothing or a regular file (a link is replaced,
    never written through; a FIFO or device is not the hook's to write into)."""
    try:
        st = os.stat(file, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return
    import stat  # noqa: PLC0415 - an export only

    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        raise OSError(f"{target} is not a regular file")


def _unlink_quietly(name: str, dfd: int) -> None:
    try:  # noqa: SIM105 - contextlib is not loaded here
        os.unlink(name, dir_fd=dfd)
    except OSError:
        pass


def cut(text: str) -> str:
    """``text`` within :data:`LIMIT` characters, with a note when it was cut."""
    if len(text) <= LIMIT:
        return text
    kept = text[:LIMIT].rsplit("\n", 1)[0]
    rest = len(text) - len(kept)
    return (f"{kept}\n… {rest} more characters not shown (the host cuts a longer result): "
            "`smllm ledger --last --effects` is shorter; `smllm export --last --out "
            "FILE` writes the whole session into the project, where you can read it")


def reason(ran: Ran) -> str:
    """The deny's reason: :data:`HEAD`, then the output (and a non-zero exit status)."""
    tail = "" if ran.code == 0 else f"\n(exit status {ran.code})"
    return cut(f"{HEAD}{ran.text.rstrip(chr(10))}{tail}")
