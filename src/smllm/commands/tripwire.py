"""``smllm tripwire [status|accept|revert] [ID ...] [--project DIR] [--json]``.

A person's answer to a tripwire violation (:mod:`smllm.tripwire`): a protected file changed
outside smllm, smllm put its copy back, and every gated tool call of the project is denied
until the change is ``accept``-ed (the changed bytes go back in place and become the new
baseline) or ``revert``-ed (smllm's copy stays). Each answer is journaled
(``tripwire.resolved``) in the session where the change was found. The gate denies this
command to the agent, and it refuses to run inside a session of an agent CLI (Claude
Code, Codex, Copilot, Gemini CLI).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from smllm.base.errors import UsageError
from smllm.commands import _output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="status",
                        choices=("status", "accept", "revert"),
                        help="status (default): the open violations; accept: keep the "
                             "changes; revert: keep smllm's copies")
    parser.add_argument("ids", nargs="*", metavar="ID",
                        help="the violations to answer (default: every open one)")
    parser.add_argument("--project", metavar="DIR", help="the project (default: the cwd)")
    _output.add_json_flag(parser, "the violations, open or answered")


def _line(v: dict[str, object]) -> str:
    call = v.get("preceding") or {}
    after = f" after {call.get('tool_name')} {call.get('tool_use_id')}" if isinstance(
        call, dict) and call else ""
    fate = "restored" if v.get("restored") else f"NOT restored ({v.get('error')})"
    return f"{v.get('id')}  {v.get('path')}: {v.get('change')}{after}, {fate}"


def run(args: argparse.Namespace) -> int:
    from smllm.tripwire import keeper  # noqa: PLC0415 - this command only

    project = str(Path(args.project or os.getcwd()).absolute())
    if args.action == "status":
        found = keeper.open_violations(project)
        if args.json:
            _output.write({"project": project, "open": found})
        elif not found:
            sys.stdout.write(f"no open tripwire violation for {project}\n")
        else:
            sys.stdout.write("".join(_line(v) + "\n" for v in found))
            sys.stdout.write("keep smllm's copies: smllm tripwire revert; keep the changes: "
                             "smllm tripwire accept\n")
        return 0
    from smllm.machine import session  # noqa: PLC0415 - accept and revert only

    host = session.hosted(os.environ)
    if host is not None:
        raise UsageError(f"smllm tripwire accept/revert is a person's answer and does not run "
                         f"inside a {host} session", "run it from a shell of your own")
    done = keeper.resolve(project, args.action, args.ids or None)
    if args.ids and len(done) < len(args.ids):
        missing = sorted(set(args.ids) - {str(v.get("id")) for v in done})
        raise UsageError(f"no open tripwire violation {', '.join(missing)} for {project}",
                         "see `smllm tripwire status`")
    if args.json:
        _output.write({"project": project, args.action + "ed": done})
        return 0
    verb = "accepted" if args.action == "accept" else "reverted"
    if not done:
        sys.stdout.write(f"no open tripwire violation for {project}\n")
    for v in done:
        sys.stdout.write(f"{verb} {v.get('id')}: {v.get('path')}\n")
    return 0
