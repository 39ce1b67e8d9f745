"""``smllm session list [--json]`` and ``smllm session show KEY [--audit] [--json]`` (seed 001):
state-machine sessions (``sm-…``); Claude Code sessions are ``smllm sessions``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from smllm.base.errors import SmllmError
from smllm.commands import _output
from smllm.machine import auditlog, engine, locations, session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    lst = sub.add_parser(
        "list", help="every state-machine session (sm-…), the most recently active first",
        description="List smllm's state-machine sessions (sm-…: the sessions `smllm fire` "
                    "and `smllm status` act on), the most recently active first. Claude "
                    "Code sessions and their journals are `smllm sessions`.")
    _output.add_json_flag(lst, "one object per session", lines=True)
    show = sub.add_parser("show", help="one session: where it is, or its audit")
    show.add_argument("key", metavar="KEY", help="the session key, e.g. sm-nqvfvw")
    show.add_argument("--audit", action="store_true", help="print the audit, one line a call")
    show.add_argument("--json", action="store_true",
                      help="print the session as one JSON object (with --audit: JSON Lines, "
                           "one object per call)")


def _states() -> list[dict[str, Any]]:
    states = []
    for key in locations.all_keys():
        try:
            states.append(session.location(key)[0])
        except SmllmError:
            states.append(_state_from_audit(key))
    return states


def _list(*, as_json: bool) -> int:
    states = _states()
    if as_json:
        _output.write_lines(auditlog.session_records(states))
        return 0
    for row in auditlog.session_rows(states):
        sys.stdout.write(row + "\n")
    return 0


def _state_from_audit(key: str) -> dict[str, Any]:
    """A session whose machines no longer load is still listed, as far as its audit says."""
    state = engine.new_state(key)
    lines = locations.read_audit(key)
    first = next((ln for ln in lines if ln.get("binding")), None)
    state["binding"] = first["binding"] if first else None
    state["last"] = lines[-1]["at"] if lines else None
    return state


def _show(key: str, *, audit_lines: bool, as_json: bool) -> int:
    if audit_lines:
        for rec in locations.read_audit(key):
            text = _output.dumps(rec) if as_json else auditlog.format_line(rec)
            sys.stdout.write(text + "\n")
        return 0
    state, machines = session.location(key)
    if as_json:
        out = {k: v for k, v in state.items() if k != "auditSize"}
        out["location"] = session.location_of(state, machines)
        _output.write(out)
        return 0
    binding = state.get("binding") or {}
    sys.stdout.write(f"session {key}  {binding.get('harness')} "
                     f"{binding.get('hostSession') or ''}".rstrip() + "\n")
    sys.stdout.write(f"folder   {binding.get('cwd')}\n")
    for c in binding.get("configs") or []:
        sys.stdout.write(f"config   {c}\n")
    for inst in state["instances"].values():
        mark = "*" if inst["id"] == state.get("focus") else " "
        sys.stdout.write(f"{mark} {inst['id']}  {inst['machine']}  {inst['state']}  "
                         f"{inst.get('ref') or '-'}  {inst['status']}\n")
    sys.stdout.write(engine.location_text(state, machines))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        return _list(as_json=args.json)
    return _show(args.key, audit_lines=args.audit, as_json=args.json)
