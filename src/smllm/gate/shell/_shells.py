"""Shells and shell builtins that run strings or files as code, or change what runs.

``bash -c``, ``eval``, ``su -c``, ``watch``, ``trap`` run a string (parsed and analysed
as shell); a shell given a file or ``source`` reads it (analysed when it can be read);
code on stdin is analysed when it is known and escalated when it is not. ``alias``
and ``hash -p`` make a later command name run something else (remembered, and
expanded where the name is used); ``export``/``declare`` set variables that may make
programs run code; ``cd``/``pushd`` change where later relative paths point.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import environment, nested, run_script_file, stdin_script
from smllm.gate.shell._flags import skip_options
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Simple, Word, is_assignment
from smllm.gate.shell._programs import SHELLS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]


def _values(args: list[Word]) -> list[str | None]:
    return [a.value for a in args]


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
    return stdin_script(name, cmd, ctx), False


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
        return stdin_script(name, cmd, ctx), False
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
    rest = skip_options(args, frozenset({"-n", "--interval", "-d", "-g"}), 0)
    values = _values(rest)
    if any(v is None for v in values):
        return [Finding("shell.dynamic-command", "ask", "watch runs a run-time string")], False
    return nested(" ".join(v for v in values if v is not None), ctx, "watch"), False


def trap(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``trap 'CMD' SIGNAL…``: CMD runs when the signal (or EXIT) comes."""
    rest = [a for a in args if a.value not in ("-p", "-l", "--")]
    if len(rest) < 2 or rest[0].value in ("-", ""):
        return [], True
    if rest[0].value is None:
        return [Finding("shell.dynamic-command", "ask", "trap runs a run-time string")], False
    return nested(rest[0].value, ctx, "trap"), False


def alias(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``alias NAME='BODY'``: a later NAME runs BODY (expanded where it is used)."""
    out: list[Finding] = []
    for a in args:
        if a.value is None:
            out.append(Finding("shell.dynamic-command", "ask", "alias with a run-time body"))
        elif "=" in a.value and not a.value.startswith("-"):
            key, body = a.value.split("=", 1)
            ctx.memory.aliases[key] = body
    return out, not args


def hash_(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``hash -p PATH NAME``: a later NAME runs PATH."""
    values = _values(args)
    if "-p" not in values:
        return [], True
    i = values.index("-p")
    if len(values) < i + 3:
        return [], False
    target, key = values[i + 1], values[i + 2]
    if target is None or key is None:
        return [Finding("shell.dynamic-command", "ask", "hash -p of a run-time path")], False
    ctx.memory.aliases[key] = _quote(target)
    return [], False


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def export(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``export``/``declare``/``local``/``readonly``/``typeset``: assignments that may
    make programs run code (``export GIT_SSH_COMMAND=…``)."""
    out: list[Finding] = []
    for a in args:
        if is_assignment(a.raw) or (a.value is not None and is_assignment(a.value)):
            text = a.value if a.value is not None else a.raw
            key, value = text.split("=", 1)
            out += environment(key.rstrip("+"), value if a.value is not None else None, ctx)
    return out, not out


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    **{s: shell for s in SHELLS},
    "eval": eval_,
    "source": source,
    ".": source,
    "su": su,
    "watch": watch,
    "cd": cd,
    "pushd": cd,
    "trap": trap,
    "alias": alias,
    "hash": hash_,
    "export": export,
    "declare": export,
    "typeset": export,
    "local": export,
    "readonly": export,
}
