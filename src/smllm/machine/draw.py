"""Drawing a machine as Mermaid (``stateDiagram-v2``) or Graphviz DOT, current state marked."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from smllm.base.shapes import CompiledMachine, Transition

Format = Literal["mermaid", "dot"]


def _label(event: str, t: Transition) -> str:
    guard = t.get("guard")
    if guard is None:
        return event
    desc = guard.get("description") or guard["type"]
    return f"{event} [{desc}]"


def _edges(machine: CompiledMachine) -> list[tuple[str, str, str]]:
    out = []
    for name, st in machine["states"].items():
        for event, trans in st["on"].items():
            out += [(name, t["target"] or name, _label(event, t)) for t in trans]
    return out


def mermaid(machine: CompiledMachine, current: str | None = None) -> str:
    """``stateDiagram-v2`` text; ``current`` gets the ``current`` class."""
    lines = ["stateDiagram-v2", f"    [*] --> {machine['initial']}"]
    lines += [f"    {a} --> {b}: {label.replace(':', ' ')}" for a, b, label in _edges(machine)]
    lines += [f"    {n} --> [*]" for n, st in machine["states"].items() if st["final"]]
    if current is not None:
        lines += ["    classDef current fill:#ffcc66,stroke:#333,stroke-width:2px",
                  f"    class {current} current"]
    return "\n".join(lines) + "\n"


def dot(machine: CompiledMachine, current: str | None = None) -> str:
    """Graphviz DOT text; ``current`` is filled."""
    q = json.dumps
    lines = [f"digraph {q(machine['id'])} {{", "    rankdir=LR;",
             '    node [shape=box, style=rounded];', '    "__start" [shape=point];',
             f'    "__start" -> {q(machine["initial"])};']
    for name, st in machine["states"].items():
        attrs = ["shape=doublecircle"] if st["final"] else []
        if name == current:
            attrs += ['style="rounded,filled"', 'fillcolor="#ffcc66"']
        if attrs:
            lines.append(f"    {q(name)} [{', '.join(attrs)}];")
    lines += [f"    {q(a)} -> {q(b)} [label={q(label)}];" for a, b, label in _edges(machine)]
    return "\n".join([*lines, "}"]) + "\n"


def draw(machine: CompiledMachine, fmt: Format, current: str | None = None) -> str:
    return mermaid(machine, current) if fmt == "mermaid" else dot(machine, current)
