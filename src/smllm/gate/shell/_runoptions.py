"""Ordinary tools with an option that runs a command: the command is analysed as shell.

``sort --compress-program=PROG``, ``man -P PAGER``, ``gdb -ex 'shell …'``, ``tcpdump -z
CMD``, ``pandoc --filter PROG``: the value is a command line the tool runs; outputs they
write (``sort -o FILE``) are judged as writes.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import judge_argv, nested, read_script, write_target
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

#: program -> {option: what its value is}: ``shell`` (a command line), ``output`` (a
#: file it writes), ``gdb`` (a debugger command, which may run a shell command)
OPTIONS: dict[str, dict[str, str]] = {
    "sort": {"--compress-program": "shell", "-o": "output", "--output": "output"},
    "man": {"-P": "shell", "--pager": "shell", "-H": "shell", "--html": "shell"},
    "tcpdump": {"-z": "shell", "-w": "output"},
    "pandoc": {"--filter": "shell", "-F": "shell", "--lua-filter": "script", "-o": "output",
               "--output": "output"},
    "gdb": {"-ex": "gdb", "--eval-command": "gdb", "-iex": "gdb", "--init-eval-command": "gdb",
            "-x": "script", "--command": "script"},
    "less": {"-o": "output", "--log-file": "output"},
}
_GDB_SHELL = ("shell ", "!", "pipe ", "|", "python", "py ", "source ", "run ", "r ")


def tool(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    table = OPTIONS[name]
    out: list[Finding] = []
    i = 0
    while i < len(args):
        v = args[i].value or ""
        key, eq, attached = v.partition("=")
        if key not in table and len(v) > 2 and v[:2] in table and not v.startswith("--"):
            key, eq, attached = v[:2], "=", v[2:]
        kind = table.get(key)
        if kind is None:
            if name == "gdb" and v == "--args" and i + 1 < len(args):
                out += judge_argv(args[i + 1:], cmd, ctx)[0]
                break
            i += 1
            continue
        value = Word(attached, attached) if eq else (args[i + 1] if i + 1 < len(args) else None)
        i += 1 if eq else 2
        text = value.value if value is not None else None
        if kind == "output" and value is not None:
            out += write_target(value, ctx, truncate=True, what=f"{name} {key} writes", by=name)
        elif kind == "script" and value is not None:
            script = read_script(value, ctx)
            out.append(Finding("exec.code-option", "ask",
                               f"{name} {key} runs the script {value.value or value.raw}"))
            if script is not None and name == "gdb":
                out += _gdb(script, ctx)
        elif kind == "gdb" and text is not None:
            out += _gdb(text, ctx)
        elif kind == "shell":
            out.append(Finding("exec.code-option", "ask", f"{name} {key} runs a command"))
            out += nested(text, ctx, f"{name} {key}") if text else []
    return out, not out and name in ("sort", "man", "less")


def _gdb(text: str, ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    for line in text.splitlines():
        command = line.strip()
        if command.startswith(_GDB_SHELL):
            out.append(Finding("exec.code-option", "ask", f"gdb runs {command[:40]!r}"))
            for prefix in ("shell ", "!", "pipe "):
                if command.startswith(prefix):
                    out += nested(command[len(prefix):], ctx, "gdb shell")
    return out


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = dict.fromkeys(
    OPTIONS, tool)
