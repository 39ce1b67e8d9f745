"""``smllm status [--session KEY] [--json]``: where the session is and what it offers."""

from __future__ import annotations

import argparse
import os
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", metavar="KEY",
                        help="the smllm session (default: $SMLLM_SESSION)")
    parser.add_argument("--json", action="store_true",
                        help="print {session, location, offered, text} as JSON")


def run(args: argparse.Namespace) -> int:
    from smllm.machine import engine, session, store  # noqa: PLC0415

    key = args.session or os.environ.get("SMLLM_SESSION")
    if not key:
        raise session.NoSession("no smllm session named",
                                "pass --session KEY or set SMLLM_SESSION "
                                "(`smllm session list` shows the sessions)")
    state, machines = session.location(key)
    text = engine.location_text(state, machines)
    if args.json:
        out = {"session": key, "location": session.location_of(state, machines),
               "offered": [o[0] for o in engine.offers(state, machines)], "text": text}
        sys.stdout.write(store.dumps(out) + "\n")
    else:
        sys.stdout.write(text)
    return 0
