"""Reading a machine file as YAML 1.2 plain data, keeping where every key and value is.

PyYAML resolves scalars the YAML 1.1 way (``on``/``off``/``yes``/``no`` are
booleans) and lets a duplicate key silently win. This reader composes the node tree
and resolves scalars itself, by YAML 1.2's core schema, and turns both traps into
errors that say where they are and how to fix them. Slow path only: it imports yaml.

An alias (``*a``) shares the node its anchor (``&a``) names, so a few hundred bytes of
nested aliases ("billion laughs") stand for billions of nodes once turned into plain
data. Before converting anything, :func:`load` counts the nodes the tree expands to,
in one pass over its distinct nodes (each weighted by the size of what it holds), and
refuses a file whose aliases add more than :data:`MAX_ALIAS_NODES` nodes, or that
refers to itself, or nests deeper than :data:`MAX_DEPTH`, or is larger than
:data:`MAX_BYTES`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from smllm.base.errors import MachineDefinitionError

Path = tuple[str | int, ...]

#: plain scalars YAML 1.1 reads as booleans but YAML 1.2 reads as strings
YAML11_BOOLS = frozenset(
    v for w in ("yes", "no", "on", "off", "y", "n")
    for v in (w, w.capitalize(), w.upper())
)
_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
#: the largest machine file read (a machine is a few kilobytes)
MAX_BYTES = 1024 * 1024
#: how many nodes aliases may add to a file (past its own nodes) once expanded
MAX_ALIAS_NODES = 10_000
#: how deep lists and mappings may nest (a machine nests about 8 deep)
MAX_DEPTH = 100


@dataclass
class Marked:
    """Plain data plus the ``(line, col)`` (1-based) of each key and each value by path."""

    data: Any
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def at(self, path: Path) -> tuple[int, int]:
        """Where the entry at ``path`` starts (its key), or its nearest ancestor."""
        p = tuple(path)
        while p:
            if p in self.keys:
                return self.keys[p]
            if p in self.values:
                return self.values[p]
            p = p[:-1]
        return self.values.get((), (1, 1))

    def value_at(self, path: Path) -> tuple[int, int]:
        return self.values.get(tuple(path)) or self.at(path)


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _scalar(node: yaml.ScalarNode) -> Any:  # noqa: PLR0911 - one return per YAML type
    text: str = node.value
    if node.style:
        return text
    if node.tag not in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:null",
                        "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                        "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp",
                        "tag:yaml.org,2002:value", "tag:yaml.org,2002:merge"):
        return text
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.fullmatch(text):
        return int(text, 0) if text[:2] in ("0o", "0x") else int(text)
    if _FLOAT.fullmatch(text) and any(c.isdigit() for c in text):
        return float(text)
    return text


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where
        self.out = Marked(None)

    def fail(self, pos: tuple[int, int], what: str, fix: str) -> MachineDefinitionError:
        return MachineDefinitionError(what, fix, where=f"{self.where}:{pos[0]}:{pos[1]}")

    def convert(self, node: yaml.Node, path: Path) -> Any:
        self.out.values[path] = _pos(node)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)
        value = _scalar(node)
        if not node.style and node.value in YAML11_BOOLS:
            raise self.fail(
                _pos(node),
                f"value {node.value!r} is a boolean in YAML 1.1 (PyYAML, many editors) "
                "and a string in YAML 1.2",
                f'quote it ("{node.value}") or write true/false',
            )
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            pos = _pos(key_node)
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise self.fail(pos, "merge keys (<<) are not supported",
                                "write the keys out in full")
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(pos, "a key must be a plain name, not a list or a mapping",
                                "write the key as a name")
            key = key_node.value
            if not key_node.style and key in YAML11_BOOLS and key != "on":
                raise self.fail(
                    pos,
                    f"key {key!r} is a boolean in YAML 1.1 (PyYAML, many editors): "
                    "two such keys collide and one is lost",
                    f'quote it ("{key}:") or rename it',
                )
            if not key_node.style and (key in _TRUE or key in _FALSE or key in _NULL):
                raise self.fail(pos, f"key {key!r} is not a name but a YAML {_kind(key)}",
                                f'quote it ("{key}:") or rename it')
            if key in seen:
                line, col = seen[key]
                raise self.fail(pos, f"duplicate key {key!r} (first at line {line}:{col})",
                                "remove one of them or merge them: YAML keeps only the last")
            seen[key] = pos
            sub = (*path, key)
            self.out.keys[sub] = pos
            result[key] = self.convert(value_node, sub)
        return result


def _kind(text: str) -> str:
    if text in _NULL:
        return "null"
    return "boolean"


def too_large(where: str, size: int) -> MachineDefinitionError:
    return MachineDefinitionError(
        f"machine file is {size} bytes, more than the {MAX_BYTES} bytes smllm reads",
        "split it into smaller machines (one file each) or remove what it repeats",
        where=f"{where}:1:1")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_expansion(reader: _Reader, root: yaml.Node) -> None:
    """Refuse a tree whose aliases expand past :data:`MAX_ALIAS_NODES` or form a loop, or
    that nests deeper than :data:`MAX_DEPTH`.

    Sizes are computed bottom-up over the distinct nodes only (a node an alias shares is
    sized once and counted each time it is referred to), iteratively, so the check costs
    as much as the file's own nodes however much the aliases would expand."""
    distinct: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) not in distinct:
            distinct.add(id(node))
            todo += _children(node)
    limit = len(distinct) + MAX_ALIAS_NODES
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            total = 1 + sum(size[id(c)] for c in _children(node))
            if total > limit:
                raise reader.fail(
                    _pos(node),
                    f"aliases expand to more than {MAX_ALIAS_NODES} nodes (the value here "
                    f"already expands to {total}; the file itself holds {len(distinct)})",
                    "write the repeated parts out, or refer to them fewer times (*name)")
            size[key] = total
            height[key] = 1 + max((height[id(c)] for c in _children(node)), default=0)
            if height[key] > MAX_DEPTH:
                raise reader.fail(_pos(node), f"lists and mappings nest more than {MAX_DEPTH} "
                                  "deep here", "flatten the structure")
            continue
        if key in size:
            continue
        if key in open_:
            raise reader.fail(_pos(node), "an alias refers to the value that contains it",
                              "remove the alias (*name) from inside its own anchor (&name)")
        open_.add(key)
        stack.append((node, True))
        stack += [(c, False) for c in _children(node) if id(c) not in size]


def load(text: str, where: str) -> Marked:
    """Parse one YAML document into plain data with positions; raise on any trap."""
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    reader = _Reader(where)
    if len(text) > MAX_BYTES:
        raise too_large(where, len(text.encode("utf-8", "surrogatepass")))
    try:
        loader = loader_cls(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except RecursionError:  # the pure-Python composer, before the depth check can run
        raise reader.fail((1, 1), f"lists and mappings nest more than {MAX_DEPTH} deep",
                          "flatten the structure") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise reader.fail(pos, f"YAML syntax error: {problem}",
                          "check the indentation and quoting around this point") from None
    except yaml.YAMLError as exc:
        raise reader.fail((1, 1), f"YAML error: {exc}", "fix the YAML syntax") from None
    if node is None:
        raise reader.fail((1, 1), "the file is empty",
                          "write a machine: id, initial, states; see docs/machines/format.md")
    check_expansion(reader, node)
    reader.out.data = reader.convert(node, ())
    return reader.out
