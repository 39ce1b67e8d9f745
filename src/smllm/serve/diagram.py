"""A state machine drawn as SVG on the server: no script, no layout library.

States are laid out left to right by their distance from the initial state (states
reached in the same number of steps share a column); forward transitions are curves
between columns, transitions back or within a column arc under the boxes, and a
transition to the same state loops above its box. States where an instance stands
carry the ``current`` class and the instances' ids under the box. Every label is
escaped; styling is by class (the stylesheet), since the page's CSP allows no inline
style.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from smllm.machine.draw import _edges

if TYPE_CHECKING:
    from smllm.base.shapes import CompiledMachine

BOX_H = 38
COL_GAP = 120
ROW_GAP = 64
PAD = 40
CHAR_W = 8.2


@dataclass(frozen=True)
class Box:
    name: str
    x: float
    y: float
    w: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + BOX_H / 2


def _ranks(machine: CompiledMachine) -> dict[str, int]:
    """Shortest distance (in transitions) of every state from the initial one."""
    states = machine["states"]
    rank = {machine["initial"]: 0}
    todo = [machine["initial"]]
    while todo:
        nxt = []
        for name in todo:
            for trans in states[name]["on"].values():
                for t in trans:
                    target = t["target"] or name
                    if target in states and target not in rank:
                        rank[target] = rank[name] + 1
                        nxt.append(target)
        todo = nxt
    last = max(rank.values(), default=0) + 1
    for name in states:
        rank.setdefault(name, last)
    return rank


def layout(machine: CompiledMachine) -> dict[str, Box]:
    ranks = _ranks(machine)
    columns: dict[int, list[str]] = {}
    for name in machine["states"]:
        columns.setdefault(ranks[name], []).append(name)
    boxes: dict[str, Box] = {}
    x = PAD + 30.0
    for col in sorted(columns):
        names = columns[col]
        width = max(len(n) for n in names) * CHAR_W + 28
        for i, name in enumerate(names):
            boxes[name] = Box(name, x, PAD + 30 + i * (BOX_H + ROW_GAP), width)
        x += width + COL_GAP
    return boxes


def _curve(a: Box, b: Box, lane: int) -> tuple[str, float, float]:
    """SVG path of one transition and where its label goes."""
    if a.name == b.name:
        x0, x1, y = a.cx - 12, a.cx + 12, a.y
        top = y - 30 - 14 * lane
        return (f"M{x0:.1f},{y:.1f} C{x0 - 18:.1f},{top:.1f} {x1 + 18:.1f},{top:.1f} "
                f"{x1:.1f},{y:.1f}", a.cx, top - 4)
    if b.x > a.x:
        x0, y0, x1, y1 = a.x + a.w, a.cy, b.x, b.cy
        mid = (x0 + x1) / 2
        bend = 10 * lane
        return (f"M{x0:.1f},{y0:.1f} C{mid:.1f},{y0 - bend:.1f} {mid:.1f},{y1 - bend:.1f} "
                f"{x1:.1f},{y1:.1f}", mid, (y0 + y1) / 2 - bend - 6)
    x0, y0, x1, y1 = a.cx, a.y + BOX_H, b.cx, b.y + BOX_H
    depth = max(y0, y1) + 34 + 18 * lane
    return (f"M{x0:.1f},{y0:.1f} C{x0:.1f},{depth:.1f} {x1:.1f},{depth:.1f} "
            f"{x1:.1f},{y1:.1f}", (x0 + x1) / 2, depth - 6)


def svg(machine: CompiledMachine, current: dict[str, list[str]] | None = None) -> str:
    """The SVG of ``machine``; ``current`` maps a state to the instances standing in it."""
    current = current or {}
    boxes = layout(machine)
    width = max(b.x + b.w for b in boxes.values()) + PAD
    height = max(b.y for b in boxes.values()) + BOX_H + PAD + 60
    height += 18 * max((len(v) for v in current.values()), default=0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="machine" role="img" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
           f'height="{height:.0f}" aria-label="state machine {escape(machine["id"])}">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
           'class="arrowhead"/></marker></defs>']
    first = boxes[machine["initial"]]
    out.append(f'<circle class="start" cx="{PAD:.0f}" cy="{first.cy:.1f}" r="7"/>')
    out.append(f'<path class="edge" d="M{PAD + 7:.0f},{first.cy:.1f} L{first.x:.1f},'
               f'{first.cy:.1f}" marker-end="url(#arrow)"/>')
    seen: dict[tuple[str, str], int] = {}
    for a, b, label in _edges(machine):
        lane = seen.get((a, b), 0)
        seen[(a, b)] = lane + 1
        path, lx, ly = _curve(boxes[a], boxes[b], lane)
        out.append(f'<g class="transition" data-from="{escape(a)}" data-to="{escape(b)}">'
                   f'<path class="edge" d="{path}" marker-end="url(#arrow)"/>'
                   f'<text class="edge-label" x="{lx:.1f}" y="{ly:.1f}" '
                   f'text-anchor="middle">{escape(label)}</text></g>')
    for name, box in boxes.items():
        st = machine["states"][name]
        here = current.get(name, [])
        classes = "state" + (" final" if st["final"] else "") + (" current" if here else "")
        out.append(f'<g class="{classes}" data-state="{escape(name)}">')
        out.append(f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" '
                   f'height="{BOX_H}" rx="8" ry="8"/>')
        if st["final"]:
            out.append(f'<rect class="inner" x="{box.x + 3:.1f}" y="{box.y + 3:.1f}" '
                       f'width="{box.w - 6:.1f}" height="{BOX_H - 6}" rx="6" ry="6"/>')
        out.append(f'<text x="{box.cx:.1f}" y="{box.cy + 5:.1f}" '
                   f'text-anchor="middle">{escape(name)}</text>')
        for i, inst in enumerate(here):
            out.append(f'<text class="instance" x="{box.cx:.1f}" '
                       f'y="{box.y + BOX_H + 16 + 16 * i:.1f}" text-anchor="middle">'
                       f'{escape(inst)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
