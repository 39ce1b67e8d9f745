
"""Programs that run other programs: launchers (sudo, env, timeout, …), shells, eval, source.

A launcher's own options are skipped and the program it runs is judged in its place;
a string that becomes code (``bash -c``, ``su -c``, ``eval``, ``watch``, ``env -S``) is
parsed and analysed as shell; a script file is read and analysed; code on stdin is
analysed when it is known and escalated when it is not.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import judge_argv, nested, run_script_file, stdin_script
from smllm.gate.shell._flags import skip_options
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Simple, Word, parse
from smllm.gate.shell._programs import SHELLS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]


def _values(args: list[Word]) -> list[str | None]:
    return [a.value for a in args]


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
def wrapper(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    with_arg, positional = _WRAPPERS[name]
    rest = skip_options(args, with_arg, positional)
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


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    **{w: wrapper for w in _WRAPPERS},
    **{s: shell for s in SHELLS},
    "command": command_builtin,
    "env": env,
    "eval": eval_,
    "source": source,
    ".": source,
    "su": su,
    "watch": watch,
    "cd": cd,
    "pushd": cd,
}
