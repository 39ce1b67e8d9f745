"""``smllm machine validate [FILE]... | list | draw MACHINE``: check, list and draw machines.

Without files, ``validate`` checks the machines of the project's
``.smllm/config.toml`` (the nearest one upwards from the current folder).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from smllm.base import paths
from smllm.base.errors import ConfigError, SmllmError
from smllm.commands import _output, _select
from smllm.machine import catalog, draw, loader, project_configs, session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    val = sub.add_parser("validate", help="check machine files; print file:line:col errors")
    val.add_argument("files", nargs="*", metavar="FILE",
                     help="*.smllm.yaml files (default: the project's configured machines)")
    _output.add_json_flag(val, "one result per file", lines=True)
    lst = sub.add_parser("list", help="the project's machines")
    _output.add_json_flag(lst, "one object per machine", lines=True)
    draw = sub.add_parser("draw", help="print a machine as Mermaid or DOT")
    draw.add_argument("machine", metavar="MACHINE", help="the machine's id, or a file")
    draw.add_argument("--format", choices=("mermaid", "dot"), default="mermaid",
                      help="diagram language (default: mermaid)")
    _select.add_machine_session(draw, what=" whose current state to highlight")


def _configs() -> list[str]:
    """The configs in effect here (the project's and the user's, as a session of the project
    this folder is in reads them); an error outside a project that configures machines."""
    project = paths.project_root(os.getcwd())
    configs = project_configs(project)
    if not configs:
        raise ConfigError(f"no .smllm/config.toml in {project}",
                          'create one with [machines] files = ["fix.smllm.yaml"], or name '
                          "machine files: smllm machine validate FILE")
    return configs


def _configured_files() -> list[Path]:
    return [Path(f) for c in _configs() for f in catalog.read_config(c)]


def _validate(files: list[str], *, as_json: bool) -> int:
    paths = [Path(f) for f in files] if files else _configured_files()
    failed = 0
    for path in paths:
        name = loader.display_path(path)
        try:
            m = loader.load(path)
        except SmllmError as exc:
            failed += 1
            if as_json:
                _output.write({"file": name, "ok": False, "machine": None, "states": None,
                               "events": None, "error": exc.render()})
            else:
                sys.stderr.write(f"smllm: error: {exc.render()}\n")
            continue
        n_states, n_events = len(m["states"]), len(m["events"])
        if as_json:
            _output.write({"file": name, "ok": True, "machine": m["id"], "states": n_states,
                           "events": n_events, "error": None})
            continue
        sys.stdout.write(f"ok: {name}: machine {m['id']} "
                         f"({n_states} state{'s' * (n_states != 1)}, "
                         f"{n_events} event{'s' * (n_events != 1)})\n")
    return 1 if failed else 0


def _list(*, as_json: bool) -> int:
    configs = _configs()
    machines = catalog.load(configs)
    if not machines:
        sys.stderr.write(f"no machines: {', '.join(configs)} names none "
                         '(add [machines] files = ["fix.smllm.yaml"])\n')
    rows: list[dict[str, Any]] = [
        {"id": m["id"], "states": len(m["states"]), "file": m["file"],
         "description": m.get("description") or None} for m in machines.values()]
    if as_json:
        _output.write_lines(rows)
        return 0
    for r in rows:
        sys.stdout.write(f"{r['id']}  {r['states']} states  {r['file']}  "
                         f"{r['description'] or ''}".rstrip() + "\n")
    return 0


def _draw(args: argparse.Namespace) -> int:
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
        machines = catalog.load(_configs())
    if args.machine not in machines:
        raise SmllmError(f"no machine {args.machine!r}",
                         f"use one of: {', '.join(machines) or 'none configured'}")
    sys.stdout.write(draw.draw(machines[args.machine], args.format, current))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "validate":
        return _validate(args.files, as_json=args.json)
    if args.action == "list":
        return _list(as_json=args.json)
    return _draw(args)
