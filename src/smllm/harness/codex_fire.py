"""``smllm fire`` and ``smllm status`` from Codex's (or Gemini CLI's) shell, run by its
PreToolUse hook.

With smllm's permission profile, Codex's sandbox keeps smllm's store (the machine
sessions among it) read-only to the agent's commands, so ``smllm fire EVENT`` typed in
Codex's shell cannot record the fire; Gemini CLI's tool sandbox does the same, and Gemini
does not even tell the agent's commands their session. Both hosts run their hooks outside
that sandbox, and the reason of a PreToolUse deny reaches the model. So when a Bash call is
exactly a plain ``smllm fire`` or ``smllm status`` command line, the hook runs it itself,
through the code the command runs (:func:`smllm.commands.fire.fired`,
:func:`smllm.commands.status.shown`), and denies the call with what the command would
have printed.

"Exactly" is read with the gate's shell parser, strictly: one simple command, every word
a literal (no ``$``, no backquote, no ``~``, no glob), no assignment, redirection,
operator, comment or substitution, the program ``smllm`` or this installation's
``smllm``, and only the options those commands take:

>>> parse("smllm fire reproduced --param bugId=BUG-7")
Plain(command='fire', event='reproduced', params=['bugId=BUG-7'], session=None, json=False)
>>> parse("smllm status --json")
Plain(command='status', event=None, params=[], session=None, json=True)
>>> [parse(c) for c in ("smllm fire x; rm -rf ~", "smllm fire $(id)", "smllm fire x > f",
...                     "SMLLM_HOME=/tmp smllm fire x", "smllm fire x --force")]
[None, None, None, None, None]

Anything else is judged by the gate as any other command. A ``command`` guard of the fire
runs its program in smllm's own sandbox for guards (:mod:`smllm.base.bwrap`), as it does
from any other surface: the project's protected set read-only, smllm's store hidden.

Hot path: :func:`parse` costs a substring test for a Bash call that does not name
``smllm``; the rest loads only for such a call.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from smllm.base import osfast as os
from smllm.base.errors import SmllmError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from smllm.base.catalogue import ToolCall

#: the rule id of a fire (or status) run by the hook, in the intent
RULE = "machine.fire-in-hook"
#: the first line of the deny's reason: why the model gets the output this way
HEAD = ("smllm ran this command itself, from its Codex hook, because Codex's sandbox keeps "
        "smllm's store read-only to your commands. Its output:\n")
#: the same on Gemini CLI
HEAD_GEMINI = ("smllm ran this command itself, from its Gemini CLI hook, because Gemini's "
               "tool sandbox keeps smllm's store read-only to your commands (and Gemini does "
               "not tell them their session). Its output:\n")
#: characters that make a word more than a literal, even where the parser knows its value
_NOT_LITERAL = ("$", "`", "*", "?", "[", "{", "\n")


class Plain(NamedTuple):
    """A plain ``smllm fire`` / ``smllm status`` command line, as its words say."""

    command: str
    event: str | None
    params: list[str]
    session: str | None
    json: bool


def programs() -> tuple[str, ...]:
    """What the program word may be: ``smllm`` (found on the agent's ``PATH``), or the
    ``smllm`` of this installation (beside the interpreter that runs the hook)."""
    return ("smllm", os.path.join(os.path.dirname(sys.executable), "smllm"))


def literal_words(command: str) -> list[str] | None:
    """The values of the words of ``command`` when it is one simple command of literal
    words and nothing else (each word's source follows the last, blanks between)."""
    from smllm.gate.shell import _parse  # noqa: PLC0415 - Bash calls that name smllm only

    script = _parse.parse(command)
    if script.errors or script.functions or len(script.commands) != 1:
        return None
    cmd = script.commands[0]
    if cmd.assigns or cmd.redirects or cmd.stdin is not None or cmd.background \
            or cmd.nested or not cmd.words:
        return None
    values: list[str] = []
    at = 0
    for word in cmd.words:
        while at < len(command) and command[at] in " \t":
            at += 1
        if word.value is None or word.glob or not command.startswith(word.raw, at) \
                or any(c in word.raw for c in _NOT_LITERAL) or word.raw.startswith("~"):
            return None
        at += len(word.raw)
        values.append(word.value)
    if command[at:].strip(" \t"):
        return None
    return values


def parse(command: str, allowed: tuple[str, ...] | None = None) -> Plain | None:
    """The plain fire or status ``command`` is, or None (see the module's examples)."""
    words = literal_words(command) if "smllm" in command else None
    if words is None or len(words) < 2 or words[1] not in ("fire", "status") \
            or words[0] not in (programs() if allowed is None else allowed):
        return None
    return _options(words[1], words[2:])


def _options(name: str, args: list[str]) -> Plain | None:
    """The options of a plain fire or status (``args`` after its name), or None."""
    event: str | None = None
    session: str | None = None
    params: list[str] = []
    as_json = False
    i = 0
    while i < len(args):
        arg = args[i]
        flag, eq, inline = arg.partition("=")
        if arg == "--json" and not as_json:
            as_json = True
        elif flag == "--session" and session is None and (eq or i + 1 < len(args)):
            session = inline if eq else args[i + 1]
            i += 0 if eq else 1
        elif flag == "--param" and name == "fire" and (eq or i + 1 < len(args)):
            params.append(inline if eq else args[i + 1])
            i += 0 if eq else 1
        elif name == "fire" and event is None and arg and not arg.startswith("-"):
            event = arg
        else:
            return None
        i += 1
    if name == "fire" and event is None:
        return None
    if session is not None and (not session or session.startswith("-")):
        return None
    return Plain(name, event, params, session, as_json)


def host_env(call: ToolCall, env: Mapping[str, str]) -> dict[str, str]:
    """The environment the command would have seen in the host's shell, as far as finding
    its session goes: the host's own, with the session of the call (the hook's payload
    names it) as Codex names it for the agent's commands (``$CODEX_THREAD_ID``) or as
    Gemini CLI names it for its hooks (``$GEMINI_SESSION_ID``), and no
    ``$CLAUDE_CODE_SESSION_ID`` inherited from a Claude Code that started the host."""
    from smllm.machine import session  # noqa: PLC0415 - a plain fire or status only

    out = {k: v for k, v in env.items() if k != "CLAUDE_CODE_SESSION_ID"}
    if call.session_id:
        out[next(var for host, var, _ in session.HOSTS if host == call.harness)] = \
            call.session_id
    return out


class Ran(NamedTuple):
    """What running a plain command in the hook gave."""

    ok: bool         #: the fire was accepted (status: shown)
    code: int        #: the exit status the command would have had
    text: str        #: what it would have printed (stdout, or ``smllm: error: ...``)
    session: str | None


def run(plain: Plain, call: ToolCall, env: Mapping[str, str]) -> Ran:
    """Run ``plain`` as the command would have run in the call's folder; an error is
    printed as the command line prints it."""
    from smllm.commands import fire, status  # noqa: PLC0415 - a plain fire or status only

    where = host_env(call, env)
    from smllm.machine import session  # noqa: PLC0415 - a plain fire or status only

    key: str | None = None
    try:
        key = session.resolve_key(plain.session, where)
        if plain.command == "fire":
            assert plain.event is not None
            code, text = fire.fired(plain.event, plain.session, fire.parse_params(plain.params),
                                    as_json=plain.json, cwd=call.cwd, env=where)
        else:
            code, text = status.shown(plain.session, as_json=plain.json, cwd=call.cwd,
                                      env=where)
    except SmllmError as exc:
        return Ran(False, exc.exit_code, f"smllm: error: {exc.render()}\n", key)
    return Ran(code == 0, code, text, key)


def reason(ran: Ran, harness: str = "codex") -> str:
    """The deny's reason: :data:`HEAD` (:data:`HEAD_GEMINI`), then the output (and a
    non-zero exit status)."""
    tail = "" if ran.code == 0 else f"\n(exit status {ran.code})"
    head = HEAD_GEMINI if harness == "gemini" else HEAD
    return f"{head}{ran.text.rstrip(chr(10))}{tail}"
