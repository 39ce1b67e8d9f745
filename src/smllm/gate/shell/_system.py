"""The machine itself: power, services, signals to every process, and persistence.

Signalling every process the user owns (``kill -1``, ``pkill -u me``, ``killall -r .``)
and deleting every scheduled job are denied; killing processes by name (``pkill node``,
``killall python``, ``kill $(pgrep -f server)``: every instance, whoever started it)
escalates; installing a crontab escalates, and the
commands of a crontab given on stdin or in a file are analysed. Stopping the machine or
its services and installing what runs at every login (an enabled service, a launch
agent, lingering) are prefix rules of the program table (:mod:`._tabledata`).
"""

from __future__ import annotations

from smllm.gate.shell._analyse import nested, read_script, stdin_text
from smllm.gate.shell._decisions import finding
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:

    Result = tuple[list[Finding], bool]


def _values(args: list[Word]) -> list[str]:
    return [a.value if a.value is not None else a.raw for a in args]


def _found(rule: str, reason: str) -> Result:
    return [finding(rule, reason)], False


def crontab(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    flags = "".join(v[1:] for v in values if v.startswith("-") and len(v) > 1)
    if "r" in flags:
        return _found("sys.destroy", "crontab -r deletes every scheduled job")
    if "l" in flags:
        return [], True
    out = [finding("sys.persistence", "crontab installs commands that run on a schedule")]
    operands = [a for a in args if not (a.value or "").startswith("-") or a.value == "-"]
    with_u = "u" in flags
    if with_u and operands:
        operands = operands[1:]
    text: str | None
    if operands and operands[0].value != "-":
        text = read_script(operands[0], ctx)
    elif "e" in flags:
        return out, False
    else:
        text, _ = stdin_text(cmd)
    if text is None:
        return out, False
    for line in text.splitlines():
        entry = line.strip()
        first = entry.split(None, 1)[0] if entry else "#"
        if first.startswith("#") or ("=" in first and not first.startswith("@")):
            continue  # a comment or VAR=value
        fields = entry.split(None, 1 if first.startswith("@") else 5)
        command = fields[-1] if len(fields) == (2 if first.startswith("@") else 6) else ""
        if command:
            out += nested(command.replace("%", "\n", 1), ctx, "crontab")
    return out, False


def kill(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = _values(args)
    targets = [v for i, v in enumerate(values) if i > 0 or not v.startswith("-") or v == "-1"]
    if len(values) >= 2 and "-1" in targets[-1:]:
        return _found("sys.destroy", "kill -1 signals every process you own")
    if values[-1:] == ["-1"] and len(values) == 1:
        return _found("sys.destroy", "kill -1 signals every process you own")
    found = [a.raw for a in args if a.value is None and any(
        f"{p} " in a.raw or a.raw.endswith(p) for p in ("pgrep", "pidof"))]
    if found:  # the processes are chosen by name at run time
        return _found("proc.kill-by-name", f"kill signals every process {found[0]} names")
    return [], False


_EVERYTHING = frozenset({".", ".*", "^", "$", ".+", "*", "^.*$", ""})


def pkill(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """``pkill``/``killall``: a pattern that matches everything, or only a user filter,
    signals every process of the user."""
    values = _values(args)
    with_arg = frozenset({"-u", "-U", "-g", "-G", "-t", "-P", "-s", "--signal", "-F",
                          "--uid", "--euid", "--user", "--older-than", "-o", "-y",
                          "--younger-than", "-n", "--ns", "--nslist", "-c", "--context"})
    user = False
    regex = name == "killall" and any(v in ("-r", "--regexp") for v in values)
    patterns: list[str] = []
    i = 0
    while i < len(values):
        v = values[i]
        if v in ("-u", "-U", "--uid", "--euid", "--user") or v.startswith(("--user=", "--uid=")):
            user = True
        if v in with_arg:
            i += 2
            continue
        if not v.startswith("-"):
            patterns.append(v)
        i += 1
    if name == "killall5" or (user and not patterns):
        return _found("sys.destroy", f"{name} signals every process of a user")
    if (name == "pkill" or regex) and any(p in _EVERYTHING for p in patterns):
        return _found("sys.destroy", f"{name} {patterns[0]!r} matches every process")
    full = name == "pkill" and any(v in ("-f", "--full") or (
        v.startswith("-") and not v.startswith("--") and "f" in v[1:]) for v in values)
    named = [p for p in patterns if p and not any(ch.isspace() for ch in p)]
    if named:  # a bare name: every instance of a program (this agent runs on node)
        what = "whose command line holds" if full else "named"
        return _found("proc.kill-by-name", f"{name} signals every process {what} "
                      f"{named[0]!r}, whoever started it")
    return [], False
