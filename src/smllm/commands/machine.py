"""``smllm machine validate [FILE]... | list | draw MACHINE``: check, list and draw machines.

Without files, ``validate`` checks the machines of the project's
``.smllm/config.toml`` (the nearest one upwards from the current folder).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    val = sub.add_parser("validate", help="check machine files; print file:line:col errors")
    val.add_argument("files", nargs="*", metavar="FILE",
                     help="*.smllm.yaml files (default: the project's configured machines)")
    sub.add_parser("list", help="the project's machines")
    draw = sub.add_parser("draw", help="print a machine as Mermaid or DOT")
    draw.add_argument("machine", metavar="MACHINE", help="the machine's id, or a file")
    draw.add_argument("--format", choices=("mermaid", "dot"), default="mermaid",
                      help="diagram language (default: mermaid)")
    draw.add_argument("--session", metavar="KEY",
                      help="highlight the current state of this session's instance")


def _configured_files() -> list[Path]:
    from smllm.base.errors import ConfigError  # noqa: PLC0415
    from smllm.machine import catalog, find_configs  # noqa: PLC0415

    configs = find_configs(os.getcwd())
    if not configs:
        raise ConfigError(f"no .smllm/config.toml in {os.getcwd()} or above",
                          "name files to validate, or create the config")
    return [Path(f) for c in configs for f in catalog.read_config(c)]


def _validate(files: list[str]) -> int:
    from smllm.base.errors import SmllmError  # noqa: PLC0415
    from smllm.machine import loader  # noqa: PLC0415

    paths = [Path(f) for f in files] if files else _configured_files()
    failed = 0
    for path in paths:
        try:
            m = loader.load(path)
        except SmllmError as exc:
            failed += 1
            sys.stderr.write(f"smllm: error: {exc.render()}\n")
            continue
        n_states, n_events = len(m["states"]), len(m["events"])
        sys.stdout.write(f"ok: {loader.display_path(path)}: machine {m['id']} "
                         f"({n_states} state{'s' * (n_states != 1)}, "
                         f"{n_events} event{'s' * (n_events != 1)})\n")
    return 1 if failed else 0


def _list() -> int:
    from smllm.machine import catalog, find_configs  # noqa: PLC0415

    machines = catalog.load(find_configs(os.getcwd()))
    for m in machines.values():
        sys.stdout.write(f"{m['id']}  {len(m['states'])} states  {m['file']}  "
                         f"{m.get('description') or ''}".rstrip() + "\n")
    return 0


def _draw(args: argparse.Namespace) -> int:
    from smllm.base.errors import SmllmError  # noqa: PLC0415
    from smllm.machine import catalog, draw, find_configs, loader, session  # noqa: PLC0415

    current = None
    if args.session:
        state, machines = session.location(args.session)
        inst = next((i for i in state["instances"].values()
                     if i["machine"] == args.machine and i["id"] == state.get("focus")), None)
        current = inst["state"] if inst else None
    elif Path(args.machine).is_file():
        machines = {"": loader.load(Path(args.machine))}
        args.machine = ""
    else:
        machines = catalog.load(find_configs(os.getcwd()))
    if args.machine not in machines:
        raise SmllmError(f"no machine {args.machine!r}",
                         f"use one of: {', '.join(machines) or 'none configured'}")
    sys.stdout.write(draw.draw(machines[args.machine], args.format, current))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "validate":
        return _validate(args.files)
    if args.action == "list":
        return _list()
    return _draw(args)
