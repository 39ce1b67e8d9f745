"""``smllm status [--session KEY] [--json]``: where the session is and what it offers."""

from __future__ import annotations

import argparse
import os
import sys

from smllm.commands import _output, _select
from smllm.machine import engine, locations, session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _select.add_machine_session(parser)
    _output.add_json_flag(parser, "{session, location, offered, text}")


def _latest_here(cwd: str) -> str | None:
    """The most recently active session started in this folder."""
    best: tuple[int, str] | None = None
    for key in locations.all_keys():
        state = locations.read_state(key)
        binding = (state or {}).get("binding") or {}
        if state and binding.get("cwd") == cwd:
            cand = (int(state.get("last") or 0), key)
            best = cand if best is None or cand > best else best
    return best[1] if best else None


def run(args: argparse.Namespace) -> int:
    code, text = shown(args.session, as_json=args.json, cwd=os.getcwd(), env=os.environ)
    sys.stdout.write(text)
    return code


def shown(session_key: str | None, *, as_json: bool, cwd: str,
          env: Mapping[str, str]) -> tuple[int, str]:
    """What ``smllm status`` prints in ``cwd`` with ``env``: (exit status, text). Codex's
    PreToolUse hook runs a plain status from Codex's shell through here."""
    key = session.resolve_key(session_key, env) or _latest_here(cwd)
    if not key:
        raise session.NoSession(f"no smllm session in {cwd}",
                                "pass --session KEY or set SMLLM_SESSION "
                                "(`smllm session list` shows the sessions)")
    state, machines = session.location(key)
    text = engine.location_text(state, machines)
    if as_json:
        return 0, _output.dumps({"session": key,
                                 "location": session.location_of(state, machines),
                                 "offered": [o[0] for o in engine.offers(state, machines)],
                                 "text": text}) + "\n"
    return 0, text
