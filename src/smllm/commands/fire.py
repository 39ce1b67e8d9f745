"""``smllm fire [--session KEY] EVENT [--param K=V]... [--json]``: advance a state machine.

The session is ``--session``, else ``$SMLLM_SESSION`` (exported by the SessionStart
hook inside Claude Code); with neither, ``enter`` starts a new session. A refused
event prints the reason and what is offered, and exits 1.
"""

from __future__ import annotations

import os
import sys

from smllm.base.errors import UsageError
from smllm.machine import session

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("event", metavar="EVENT", help="the event to fire, e.g. enter")
    from smllm.commands import _output, _select  # noqa: PLC0415 - a plain fire never parses

    _select.add_machine_session(parser)
    parser.add_argument("--param", metavar="K=V", action="append", default=[],
                        help="an event param; repeat for several")
    _output.add_json_flag(parser, "{ok, session, location, text}")


def parse_params(items: list[str]) -> dict[str, str]:
    """``["bugId=BUG-7"]`` → ``{"bugId": "BUG-7"}``; a repeated name is a usage error."""
    params: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--param {item!r} is not NAME=VALUE",
                             "write e.g. --param bugId=BUG-7")
        if name in params:
            raise UsageError(f"--param {name} is given twice", "give each param once")
        params[name] = value
    return params


def fast(argv: list[str]) -> int | None:
    """Run a plain ``fire`` command line without argparse; None to let argparse handle it.

    argparse (with the gettext and shutil it pulls in) would cost more than the fire
    itself; anything this parser does not know (``--help``, typos) goes to argparse.
    """
    event: str | None = None
    session: str | None = None
    items: list[str] = []
    as_json = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        if arg == "--json":
            as_json = True
        elif name in ("--session", "--param") and (eq or i + 1 < len(argv)):
            value = inline if eq else argv[i + 1]
            i += 0 if eq else 1
            if name == "--session":
                session = value
            else:
                items.append(value)
        elif not arg.startswith("-") and event is None:
            event = arg
        else:
            return None
        i += 1
    if event is None:
        return None
    return _fire(event, session, parse_params(items), as_json=as_json)


def run(args: argparse.Namespace) -> int:
    return _fire(args.event, args.session, parse_params(args.param), as_json=args.json)


def _fire(event: str, session_key: str | None, params: dict[str, str], *,
          as_json: bool) -> int:
    code, text = fired(event, session_key, params, as_json=as_json, cwd=os.getcwd(),
                       env=os.environ)
    sys.stdout.write(text)
    sys.stdout.flush()
    return code


def fired(event: str, session_key: str | None, params: dict[str, str], *, as_json: bool,
          cwd: str, env: Mapping[str, str]) -> tuple[int, str]:
    """Fire ``event`` as ``smllm fire`` does in ``cwd`` with ``env``: (exit status, what it
    prints). Codex's PreToolUse hook runs a plain fire from Codex's shell through here
    (:mod:`smllm.harness.codex_fire`)."""
    key = session.resolve_key(session_key, env)
    key, decision, location = session.fire(key, event, params, cwd=cwd, env=dict(env))
    text = decision.text or ""
    if as_json:
        from smllm.commands import _output  # noqa: PLC0415 - --json only

        text = _output.dumps({"ok": decision.ok, "session": key, "location": location,
                               "text": text}) + "\n"
    return (0 if decision.ok else 1), text
