# ruff: noqa: PLR0911 - a shell grammar is a big case analysis; /tmp is data here
"""Programs that delete, overwrite or re-permission files."""

from __future__ import annotations

import os

from smllm.gate.shell._analyse import write_target
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._model import re_lazy as re
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


def delete_target(word: Word, recursive: bool, ctx: Context, what: str) -> list[Finding]:
    where = ctx.where(word)
    shown = word.value if word.value is not None else word.raw
    if where == "temp":
        return []
    if where == "device":
        return [Finding("fs.destroy", "deny", f"{what} the device {shown}")]
    if where in ("critical", "sensitive"):
        rule = "fs.delete-recursive-critical" if recursive else "fs.write-sensitive"
        return [Finding(rule, "deny", f"{what} {shown}, a protected location")]
    if where == "dynamic":
        if recursive:
            return [
                Finding(
                    "fs.delete-recursive-unresolved",
                    "ask",
                    f"{what} {shown}, a path only known at run time",
                )
            ]
        return [
            Finding(
                "fs.delete-unresolved", "ask", f"{what} {shown}, a path only known at run time"
            )
        ]
    if where == "outside":
        if recursive:
            return [
                Finding(
                    "fs.delete-recursive-outside", "deny", f"{what} {shown}, outside the workspace"
                )
            ]
        return [Finding("fs.delete-outside", "ask", f"{what} {shown}, outside the workspace")]
    if recursive:
        return [Finding("fs.delete-recursive-workspace", "ask", f"{what} {shown}")]
    return []


def rm(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    if "--help" in opts or "--version" in opts:
        return [], True
    recursive = name == "rm" and (_short(opts, "rR") or "--recursive" in opts)
    what = ("deletes recursively" if recursive else "deletes") + (
        f" ({name})" if name != "rm" else ""
    )
    out: list[Finding] = []
    for w in operands:
        out += delete_target(w, recursive, ctx, what)
    return out, False


def mv(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    if "--help" in opts:
        return [], True
    target: Word | None = None
    for i, o in enumerate(opts):
        if o.startswith("--target-directory="):
            target = Word(o, o.split("=", 1)[1])
        elif o == "-t":
            idx = args.index(next(a for a in args if a.value == "-t"))
            if idx + 1 < len(args):
                target = args[idx + 1]
                operands = [w for w in operands if w is not target]
        del i
    if target is None and operands:
        target, operands = operands[-1], operands[:-1]
    out: list[Finding] = []
    if name == "mv":
        for src in operands:
            where = ctx.where(src)
            if where in ("critical", "sensitive", "device"):
                out.append(
                    Finding(
                        "fs.move-critical",
                        "deny",
                        f"moves the protected location {src.value or src.raw}",
                    )
                )
            elif where in ("outside", "dynamic"):
                out.append(
                    Finding(
                        "fs.delete-outside",
                        "ask",
                        f"moves {src.value or src.raw} away from where it is",
                    )
                )
    if name == "cp" and any(s.value == "/dev/null" for s in operands):
        out.append(Finding("fs.truncate", "ask", "copies /dev/null over a file (empties it)"))
    out += write_target(target, ctx, truncate=True, what=f"{name} onto")
    return out, False


def tee(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, operands = _split(args)
    append = _short(opts, "a") or "--append" in opts
    out: list[Finding] = []
    for w in operands:
        out += write_target(
            w, ctx, truncate=not append, what="appends to" if append else "overwrites"
        )
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
        found = write_target(a, ctx, truncate=True, what="truncates")
        out += found or [
            Finding("fs.truncate", "ask", f"truncates {a.value if a.value is not None else a.raw}")
        ]
    return out, False


def shred(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    opts, _operands = _split(args)
    if "--help" in opts:
        return [], True
    return [Finding("fs.destroy", "deny", f"{name} destroys file contents beyond recovery")], False


def disk_destroy(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value for a in args]
    if name in ("fdisk", "sfdisk", "parted", "gdisk", "sgdisk", "cfdisk") and any(
        v in ("-l", "--list", "print", "-p", "--print") for v in values
    ):
        return [], True
    return [Finding("fs.destroy", "deny", f"{name} rewrites disks or volumes")], False


def dd(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    for a in args:
        if a.value is not None and a.value.startswith("of="):
            target = Word(a.raw, a.value[3:], a.glob)
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
            return write_target(target, ctx, truncate=True, what="dd writes"), False
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
    return out, False


def rclone(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    sub = next((a.value for a in args if a.value and not a.value.startswith("-")), None)
    if sub in ("purge", "delete", "deletefile", "rmdir", "rmdirs", "sync", "cleanup", "move"):
        return [Finding("fs.sync-delete", "ask", f"rclone {sub} deletes remote data")], False
    return [], False


def tar(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    if name == "tar" and "--remove-files" in values:
        return [
            Finding("fs.archive-remove", "ask", "tar --remove-files deletes the sources")
        ], False
    if name == "zip" and any(
        v in ("-m", "--move") or re.fullmatch(r"-[a-zA-Z]*m[a-zA-Z]*", v) for v in values
    ):
        return [Finding("fs.archive-remove", "ask", "zip -m deletes the sources")], False
    return [], False


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
    "zip": tar,
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
