
"""Programs that delete, overwrite or re-permission files."""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.gate.shell import _flows
from smllm.gate.shell._analyse import (
    delete_target,
    into_folder,
    nested,
    patched_files,
    stdin_text,
    write_target,
)
from smllm.gate.shell._decisions import finding
from smllm.gate.shell._flags import long_option
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]


def _split(args: list[Word]) -> tuple[list[str], list[Word]]:
    """GNU-style: options anywhere until ``--``; returns (options, operands)."""
    opts: list[str] = []
    operands: list[Word] = []
    done = False
    for a in args:
        v = a.value
        if not done and v == "--":
            done = True
        elif not done and v is not None and v.startswith("-") and len(v) > 1:
            opts.append(v)
        else:
            operands.append(a)
    return opts, operands


def _short(opts: list[str], letters: str) -> bool:
    return any(not o.startswith("--") and any(ch in o[1:] for ch in letters) for o in opts)


def _repo_metadata(w: Word, ctx: Context, name: str, what: str) -> list[Finding]:
    """A repository's own metadata (``.git`` or a path in it) deleted, moved away or
    overwritten: its history goes with it."""
    path = ctx.path_of(w) if w.value is not None else None
    if path is None or "/.git/" not in path.rstrip("/") + "/" or path.endswith(".lock"):
        return []  # a stale lock (``index.lock``) holds no history
    return [finding("git.metadata-destroy", f"{name} {what} {w.value}, the repository's "
                    "own history")]


def _secret_source(w: Word, ctx: Context, name: str, what: str) -> list[Finding]:
    """A secret file (``.env``, a private key, a credential store) copied, moved or
    linked somewhere else: a second copy nobody protects, or one a folder serves."""
    path = ctx.path_of(w) if w.value is not None else None
    if path is None or ctx.secret_kind(path) is None:
        return []
    return [finding("fs.secret-copy", f"{name} {what} the secret file {w.value}")]


_RM_LONG = ("--force", "--interactive", "--one-file-system", "--no-preserve-root",
            "--preserve-root", "--recursive", "--dir", "--verbose", "--help", "--version")


def rm(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    opts = [long_option(o, _RM_LONG) for o in opts]
    if "--help" in opts or "--version" in opts:
        return [], True
    recursive = name == "rm" and (_short(opts, "rR") or "--recursive" in opts)
    what = ("deletes recursively" if recursive else "deletes") + (
        f" ({name})" if name != "rm" else ""
    )
    out: list[Finding] = []
    for w in operands:
        out += _repo_metadata(w, ctx, name, "deletes")
        out += delete_target(w, recursive, ctx, what, by=name)
    return out, False


def mv(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    if "--help" in opts:
        return [], True
    target, operands = _mv_target(args, opts, operands)
    out: list[Finding] = []
    _copy_content(name, operands, target, ctx)
    for src in operands:
        out += _secret_source(src, ctx, name, "copies" if name != "mv" else "moves")
    if name == "mv":
        for src in operands:
            out += _repo_metadata(src, ctx, name, "moves away")
            out += _moved_away(src, ctx, name)
    if target is not None and name != "mv" and operands:
        out += _repo_metadata(target, ctx, name, "overwrites")
    if name == "cp" and any(s.value == "/dev/null" for s in operands):
        out.append(Finding("fs.truncate", "ask", "copies /dev/null over a file (empties it)"))
    if target is not None:
        for dest in into_folder(target, operands, ctx):
            out += write_target(dest, ctx, truncate=True, what=f"{name} onto", by=name)
    return out, False


def _mv_target(args: list[Word], opts: list[str], operands: list[Word]
               ) -> tuple[Word | None, list[Word]]:
    """The destination of cp/mv/install (``-t DIR``, ``--target-directory=DIR`` or the
    last operand) and the sources."""
    target: Word | None = None
    for o in opts:
        if o.startswith("--target-directory="):
            target = Word(o, o.split("=", 1)[1])
        elif o == "-t":
            idx = args.index(next(a for a in args if a.value == "-t"))
            if idx + 1 < len(args):
                target = args[idx + 1]
                operands = [w for w in operands if w is not target]
    if target is None and operands:
        return operands[-1], operands[:-1]
    return target, operands


def _moved_away(src: Word, ctx: Context, name: str) -> list[Finding]:
    path = ctx.record("move", src, name)
    where = ctx.where(src, last=False)
    if where in ("critical", "sensitive", "device"):
        return [Finding("fs.move-critical", "deny",
                        f"moves the protected location {src.value or src.raw}", path)]
    if where in ("outside", "dynamic"):
        return [Finding("fs.delete-outside", "ask",
                        f"moves {src.value or src.raw} away from where it is")]
    return []


def _copy_content(name: str, sources: list[Word], target: Word | None, ctx: Context) -> None:
    """``cp a b`` / ``mv a b``: b now holds what a holds (a script run later is read
    from it)."""
    if target is None or target.value is None or len(sources) != 1:
        return
    dest = ctx.resolve(target.value)
    src = ctx.resolve(sources[0].value) if sources[0].value is not None else None
    if dest is None:
        return
    if os.path.isdir(dest) and src is not None:
        dest = os.path.join(dest, os.path.basename(src))
    written = ctx.memory.written
    if src is None:
        written[dest] = None
    elif src in written:
        written[dest] = written[src]
    else:
        written[dest] = read_text(src)


def ln(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``ln [-s] TARGET LINK``: creating LINK is a write; later paths through LINK reach
    TARGET (followed by every check after this command)."""
    opts, operands = _split(args)
    if "--help" in opts or "--version" in opts:
        return [], True
    directory: Word | None = None
    for i, a in enumerate(args):
        if a.value in ("-t", "--target-directory") and i + 1 < len(args):
            directory = args[i + 1]
            operands = [w for w in operands if w is not directory]
        elif a.value and a.value.startswith("--target-directory="):
            directory = Word(a.raw, a.value.split("=", 1)[1])
    symbolic = _short(opts, "s") or "--symbolic" in opts
    link: Word | None = directory
    targets = operands
    if directory is None and len(operands) >= 2:
        targets, link = operands[:-1], operands[-1]
    out: list[Finding] = []
    for t in targets:
        where_to: Word | None = link
        if link is None or (link.value is not None and (
                len(targets) > 1 or os.path.isdir(ctx.resolve(link.value) or ""))):
            base = os.path.basename((t.value or "").rstrip("/")) or "link"
            folder = link.value if link is not None and link.value is not None else "."
            where_to = Word(f"{folder}/{base}", f"{folder}/{base}")
        if where_to is None:
            continue
        link_path = ctx.path_of(where_to)
        out += write_target(where_to, ctx, truncate=False, what="makes the link", by=name)
        if link_path is None or t.value is None:
            continue
        raw = t.value
        dest: str | None
        if symbolic and not os.path.isabs(raw) and not raw.startswith("~"):
            dest = os.path.normpath(os.path.join(os.path.dirname(link_path), raw))
        else:
            dest = ctx.resolve(raw)
        if dest:
            out += _linked_secret(dest, raw, where_to, ctx, name)
            ctx.memory.links[link_path] = dest
            ctx.record("link", link_path, name)
    return out, False


def _linked_secret(dest: str, raw: str, link: Word, ctx: Context, name: str) -> list[Finding]:
    """A link to a secret file: served or committed from the folder it lands in."""
    if ctx.secret_kind(dest) is None:
        return []
    return [finding("fs.secret-copy", f"{name} links the secret file {raw} into {link.value}")]


def tee(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    append = _short(opts, "a") or "--append" in opts
    out: list[Finding] = []
    text, _ = stdin_text(cmd)
    for w in operands:
        out += write_target(
            w, ctx, truncate=not append, what="appends to" if append else "overwrites", by=name
        )
        path = ctx.resolve(w.value) if w.value is not None else None
        if path is not None:
            ctx.memory.written[path] = None if append else text
    return out, not operands


def truncate(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    skip = False
    out: list[Finding] = []
    for a in args:
        if skip:
            skip = False
            continue
        if a.value in ("-s", "--size", "-r", "--reference"):
            skip = True
            continue
        if a.value and a.value.startswith("-"):
            continue
        found = _repo_metadata(a, ctx, name, "empties")
        found += write_target(a, ctx, truncate=True, what="truncates", by=name)
        out += found or [
            Finding("fs.truncate", "ask", f"truncates {a.value if a.value is not None else a.raw}")
        ]
    return out, False


class _Patch:
    """patch's command line: ``-pN``, the diff (``-i``), the folder (``-d``), the file."""

    __slots__ = ("folder", "operands", "source", "strip")

    def __init__(self) -> None:
        self.strip = 0
        self.source: Word | None = None
        self.folder: Word | None = None
        self.operands: list[Word] = []


def patch(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """patch [-pN] [-i PATCH] [-d DIR] [FILE]: the files the diff names are written."""
    p = _patch_argv(args)
    if p is None:
        return [], True
    text = _patch_text(p.source, cmd, ctx)
    run_ctx = ctx
    if p.folder is not None and p.folder.value is not None:
        run_ctx = ctx.child()
        run_ctx.depth = ctx.depth
        run_ctx.cwd = ctx.resolve(p.folder.value)
    if p.operands:
        targets = [p.operands[0]]
    elif text is not None:
        targets = [Word(f, f) for f in patched_files(text, p.strip)]
    else:
        ctx.record("write", None, name)
        return [], False
    out: list[Finding] = []
    for t in targets:
        out += write_target(t, run_ctx, truncate=False, what="patch writes", by=name)
    return out, False


def _patch_argv(args: list[Word]) -> _Patch | None:
    """patch's command line read (None: a dry run, which writes nothing)."""
    p = _Patch()
    i = 0
    while i < len(args):
        v = args[i].value or ""
        nxt = args[i + 1] if i + 1 < len(args) else None
        if v in ("--dry-run", "-C", "--check"):
            return None
        if v.startswith("-p") and v[2:].isdigit():
            p.strip = int(v[2:])
        elif v == "-p" and nxt is not None and (nxt.value or "").isdigit():
            p.strip, i = int(nxt.value or "0"), i + 1
        elif v in ("-i", "--input") and nxt is not None:
            p.source, i = nxt, i + 1
        elif v in ("-d", "--directory") and nxt is not None:
            p.folder, i = nxt, i + 1
        elif not v.startswith("-"):
            p.operands.append(args[i])
        i += 1
    return p


def _patch_text(source: Word | None, cmd: Simple, ctx: Context) -> str | None:
    """The diff patch applies: its ``-i`` file, else its stdin (or ``< FILE``)."""
    text = read_text(ctx.resolve(source.value) or "") if source is not None and source.value \
        else stdin_text(cmd)[0]
    if text is None:
        for r in cmd.redirects:
            if r.op == "<" and r.target is not None and r.target.value is not None:
                text = read_text(ctx.resolve(r.target.value) or "")
    return text


#: the options of shred that take a value (``-n 3``: the 3 is not a file)
_SHRED_VALUES = frozenset({"-n", "--iterations", "-s", "--size", "--random-source"})


def shred(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``shred`` overwrites files beyond recovery; ``srm`` and ``shred -u`` then delete
    them. A delete of files in the workspace is judged as ``rm`` would judge it, whatever
    the deleting program (``srm -z file.txt`` is ``rm file.txt``); anything else, and an
    overwrite that keeps the file, destroys data."""
    kept = [a for i, a in enumerate(args)
            if i == 0 or (args[i - 1].value or "") not in _SHRED_VALUES]
    opts, operands = _split(kept)
    if "--help" in opts or "--version" in opts:
        return [], True
    removes = name == "srm" or _short([o for o in opts if o[:2] != "--"], "u") or any(
        o == "--remove" or o.startswith("--remove=") for o in opts)
    if removes and operands and all(ctx.where(w, last=False) == "workspace"
                                    for w in operands):
        recursive = name == "srm" and (_short(opts, "rR") or "--recursive" in opts)
        what = ("deletes recursively" if recursive else "deletes") + f" ({name})"
        out = [f for w in operands for f in _repo_metadata(w, ctx, name, "destroys")]
        for w in operands:
            out += delete_target(w, recursive, ctx, what, by=name)
        return out, False
    for w in operands:
        ctx.record("delete", w, name)
    history = [f for w in operands for f in _repo_metadata(w, ctx, name, "destroys")]
    return [*history, Finding("fs.destroy", "deny",
                              f"{name} destroys file contents beyond recovery")], False


def disk_destroy(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value for a in args]
    if name in ("fdisk", "sfdisk", "parted", "gdisk", "sgdisk", "cfdisk") and any(
        v in ("-l", "--list", "print", "-p", "--print") for v in values
    ):
        return [], True
    return [Finding("fs.destroy", "deny", f"{name} rewrites disks or volumes")], False


def dd(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    for a in args:
        if a.value is not None and a.value.startswith("if="):
            copied = _secret_source(Word(a.raw, a.value[3:], a.glob), ctx, name, "copies")
            if copied:
                return copied, False
        if a.value is not None and a.value.startswith("of="):
            target = Word(a.raw, a.value[3:], a.glob)
            ctx.record("write", target, name)
            where = ctx.where(target)
            path = ctx.resolve(a.value[3:])
            if where == "device":
                return [
                    Finding("fs.destroy", "deny", f"dd writes the device {a.value[3:]}")
                ], False
            if path and os.path.exists(path) and where != "temp":
                return [
                    Finding("fs.destroy", "deny", f"dd overwrites the existing {a.value[3:]}")
                ], False
            return write_target(target, ctx, truncate=True, what="dd writes", by=name), False
        if a.value is None and "of=" in a.raw:
            return [Finding("fs.write-unresolved", "ask", "dd writes a run-time path")], False
    return [], False


def chmod(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    if "--help" in opts:
        return [], True
    recursive = _short(opts, "R") or "--recursive" in opts
    if not any(o.startswith("--reference") for o in opts):
        operands = operands[1:]  # the mode or owner
    out: list[Finding] = []
    for w in operands:
        ctx.record("chmod", w, name)
        where = ctx.where(w)
        shown = w.value if w.value is not None else w.raw
        if where in ("critical", "sensitive") or (recursive and where == "outside"):
            out.append(
                Finding(
                    "fs.permissions-critical",
                    "deny",
                    f"{name}{' -R' if recursive else ''} on {shown}",
                )
            )
        elif where in ("outside", "dynamic", "device"):
            out.append(Finding("fs.permissions", "ask", f"{name} on {shown}"))
    return out, False


def rsync(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    out: list[Finding] = []
    for i, a in enumerate(args):
        v = a.value or ""
        text: str | None = None
        if v in ("-e", "--rsh") and i + 1 < len(args):
            text = args[i + 1].value
        elif v.startswith("--rsh="):
            text = v.split("=", 1)[1]
        elif v.startswith("--rsync-path"):
            out.append(Finding("remote.exec", "ask", "rsync --rsync-path runs a command on the "
                               "other machine"))
            continue
        else:
            continue
        out += nested(text, ctx, "rsync -e") if text else [
            Finding("exec.code-option", "ask", "rsync -e runs a run-time command")]
    if any(o.startswith("--delete") or o == "--remove-source-files" for o in opts):
        out.append(Finding("fs.sync-delete", "ask", "rsync deletes files at the destination"))
        if operands and ctx.where(operands[-1]) in ("critical", "sensitive"):
            out.append(
                Finding(
                    "fs.delete-recursive-critical",
                    "deny",
                    f"rsync --delete into {operands[-1].value}",
                )
            )
    if len(operands) >= 2 and _flows.remote(operands[-1].value):
        out += _flows.sink(name, list(operands[:-1]), cmd, ctx)
    elif len(operands) >= 2:
        for dest in into_folder(operands[-1], list(operands[:-1]), ctx):
            out += write_target(dest, ctx, truncate=False, what=f"{name} into", by=name)
    return out, False


def rclone(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    operands = [a for a in args if a.value is None or not a.value.startswith("-")]
    sub = operands[0].value if operands else None
    if sub in ("purge", "delete", "deletefile", "rmdir", "rmdirs", "sync", "cleanup", "move"):
        return [Finding("fs.sync-delete", "ask", f"rclone {sub} deletes remote data")], False
    if sub in ("copy", "copyto", "move", "moveto", "sync") and len(operands) >= 3 and (
        _flows.remote(operands[-1].value)
    ):
        return _flows.sink(name, list(operands[1:-1]), cmd, ctx), False
    return [], False


#: GNU tar's long options, enough of them that abbreviations resolve as tar resolves them
_TAR_WORDS = """--append --blocking-factor --catenate --checkpoint --checkpoint-action
--compare --concatenate --create --delete --diff --directory --exclude --extract --file
--files-from --force-local --get --gzip --bzip2 --xz --zstd --lzip --lzma --lzop
--ignore-failed-read --info-script --keep-old-files --keep-newer-files --list --listed-incremental
--new-volume-script --no-same-owner --no-same-permissions --numeric-owner --one-file-system
--overwrite --owner --group --mode --mtime --preserve-permissions --recursion --no-recursion
--remove-files --rsh-command --same-owner --same-permissions --sort --strip-components
--tape-length --test-label --to-command --to-stdout --totals --touch --transform --update
--use-compress-program --verbose --verify --warning --wildcards --xattrs"""
_TAR_LONG = tuple(_TAR_WORDS.split())
#: tar options whose value is a command (shell) or a script run at volume changes
_TAR_CODE = {"--checkpoint-action": "exec=", "--to-command": "", "--use-compress-program": "",
             "--rsh-command": "", "--info-script": "", "--new-volume-script": ""}


class _TarLine:
    """What a tar command line asks for: the archive, the folder, the mode, findings."""

    def __init__(self) -> None:
        self.archive: Word | None = None
        self.directory: Word | None = None
        self.letters = ""
        self.long: set[str] = set()
        self.out: list[Finding] = []

    def value(self, letter: str, word: Word | None, ctx: Context) -> None:
        if letter == "f":
            self.archive = word
        elif letter == "C":
            self.directory = word
        elif letter in "IF":
            what = "-I (compression program)" if letter == "I" else "-F (volume script)"
            self.out.append(Finding("exec.code-option", "ask", f"tar {what} runs a command"))
            if word is not None and word.value:
                self.out += nested(word.value, ctx, f"tar {what}")

    def code(self, key: str, text: str | None, ctx: Context) -> None:
        prefix = _TAR_CODE[key]
        if text is not None and not text.startswith(prefix):
            return  # --checkpoint-action=echo, =dot, ...
        self.out.append(Finding("exec.code-option", "ask", f"tar {key} runs a command"))
        if text is not None:
            self.out += nested(text[len(prefix):], ctx, f"tar {key}")

    def short(self, cluster: str, nxt: Word | None, ctx: Context) -> int:
        """Read ``-czf`` (``cluster`` without the dash); the words it consumed after it."""
        self.letters += cluster
        for j, ch in enumerate(cluster):
            if ch in "fCIFT":
                rest = cluster[j + 1:]
                self.value(ch, Word(rest, rest) if rest else nxt, ctx)
                return 0 if rest else 1
        return 0


def tar(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    line = _TarLine()
    values = [a.value or "" for a in args]
    i = 0
    pending: list[str] = []
    if values and not values[0].startswith("-"):  # old style: tar czf out.tgz dir
        line.letters = values[0]
        pending = [ch for ch in values[0] if ch in "fCIFT"]
        i = 1
    while i < len(args):
        v = values[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if pending and not v.startswith("-"):
            line.value(pending.pop(0), args[i], ctx)
        elif v.startswith("--"):
            key, eq, value = long_option(v, _TAR_LONG).partition("=")
            line.long.add(key)
            given = Word(value, value) if eq else nxt
            if key in _TAR_CODE:
                line.code(key, given.value if given else None, ctx)
            elif key in ("--file", "--directory"):
                line.value("f" if key == "--file" else "C", given, ctx)
            else:
                i += 1
                continue
            i += 1 if eq else 2
            continue
        elif v.startswith("-") and len(v) > 1:
            i += line.short(v[1:], nxt, ctx)
        i += 1
    out = line.out
    if "--remove-files" in line.long:
        out.append(Finding("fs.archive-remove", "ask", "tar --remove-files deletes the sources"))
    creating = any(ch in line.letters for ch in "cru") or bool(
        line.long & {"--create", "--append", "--update", "--catenate"})
    extracting = "x" in line.letters or bool(line.long & {"--extract", "--get"})
    if creating and line.archive is not None:
        out += write_target(line.archive, ctx, truncate=True, what="tar writes", by=name)
    if extracting:
        out += write_target(line.directory or Word(".", "."), ctx, truncate=False,
                            what="tar extracts into", by=name)
    return out, not (creating or extracting or out)


def zip_(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    out: list[Finding] = []
    if any(v in ("-m", "--move") or (v.startswith("-") and not v.startswith("--") and "m" in v)
           for v in values):
        out.append(Finding("fs.archive-remove", "ask", "zip -m deletes the sources"))
    for i, v in enumerate(values):
        if v in ("-TT", "--unzip-command") and i + 1 < len(args):
            text = args[i + 1].value
            out.append(Finding("exec.code-option", "ask", "zip -TT runs a command"))
            out += nested(text, ctx, "zip -TT") if text else []
        elif v.startswith("--unzip-command="):
            out += nested(v.split("=", 1)[1], ctx, "zip -TT")
    operands = [a for a in args if not (a.value or "-").startswith("-")]
    if operands:
        out += write_target(operands[0], ctx, truncate=False, what="zip writes", by=name)
    return out, False


def unzip(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    if any(v in ("-l", "-v", "-t", "-Z") for v in values):
        return [], True
    target = Word(".", ".")
    for i, v in enumerate(values):
        if v == "-d" and i + 1 < len(args):
            target = args[i + 1]
        elif v.startswith("-d") and len(v) > 2:
            target = Word(v[2:], v[2:])
    return write_target(target, ctx, truncate=False, what=f"{name} extracts into", by=name), False


def make_path(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``touch``/``mkdir``: creating files or folders is a write where they land."""
    skip = False
    out: list[Finding] = []
    for a in args:
        v = a.value
        if skip:
            skip = False
            continue
        if v in ("-m", "--mode", "-r", "--reference", "-d", "--date", "-t", "-Z", "--context"):
            skip = v not in ("-Z",)
            continue
        if v is not None and v.startswith("-") and len(v) > 1:
            continue
        out += write_target(a, ctx, truncate=False, what=f"{name} creates", by=name)
    return out, False


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(256 * 1024 + 1)
    except OSError:
        return None
    return data.decode("utf-8", "replace") if len(data) <= 256 * 1024 else None


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "mkfs": disk_destroy,  # mkfs.*, mke2fs, mkswap, wipefs, mkdosfs (matched by pattern)
    "rm": rm,
    "unlink": rm,
    "rmdir": rm,
    "srm": shred,
    "mv": mv,
    "cp": mv,
    "install": mv,
    "tee": tee,
    "truncate": truncate,
    "shred": shred,
    "dd": dd,
    "chmod": chmod,
    "chown": chmod,
    "chgrp": chmod,
    "chattr": chmod,
    "setfacl": chmod,
    "rsync": rsync,
    "rclone": rclone,
    "tar": tar,
    "zip": zip_,
    "unzip": unzip,
    "ln": ln,
    "patch": patch,
    "touch": make_path,
    "mkdir": make_path,
    **{
        d: disk_destroy
        for d in (
            "fdisk",
            "sfdisk",
            "cfdisk",
            "parted",
            "gdisk",
            "sgdisk",
            "lvremove",
            "vgremove",
            "pvremove",
            "blkdiscard",
            "hdparm",
            "cryptsetup",
            "mdadm",
            "diskutil",
            "format",
            "zpool",
        )
    },
}
