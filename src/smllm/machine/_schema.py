"""Validating a machine file against the shipped JSON Schema, with ``file:line:col``.

The schema (``smllm/schemas/machine.schema.json``, copied to ``machines/``) is the one
source of truth; this module interprets the subset of JSON Schema it uses (type,
properties, required, additionalProperties, propertyNames, enum, pattern, minLength,
minProperties, min/maxItems, minimum/maximum, items, anyOf, $ref) and reports the
first problem in the user's terms: the breadcrumb, what is wrong, how to fix it.
A test checks that the ``jsonschema`` package agrees on every fixture.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from smllm.base.errors import MachineDefinitionError
from smllm.machine._yaml import Marked, Path

_TYPE_NAMES = {
    "string": "a string", "integer": "an integer", "number": "a number",
    "boolean": "true or false", "object": "a mapping", "array": "a list", "null": "nothing",
}


@cache
def schema() -> dict[str, Any]:
    """The machine format's JSON Schema."""
    text = resources.files("smllm").joinpath("schemas/machine.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _type_of(value: Any) -> str:  # noqa: PLR0911 - one return per JSON type
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_ok(value: Any, expected: str) -> bool:
    actual = _type_of(value)
    return actual == expected or (expected == "number" and actual == "integer")


def breadcrumb(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


class _Problem(Exception):
    def __init__(self, path: Path, what: str, fix: str, *, at_value: bool = False) -> None:
        super().__init__(what)
        self.path = path
        self.what = what
        self.fix = fix
        self.at_value = at_value


class _Validator:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            ref = node["$ref"]
            name = ref.rsplit("/", 1)[-1]
            node = self.root["$defs"][name]
        return node

    def check(self, value: Any, node: dict[str, Any], path: Path) -> None:
        node = self.resolve(node)
        if "anyOf" in node:
            self._any_of(value, node["anyOf"], path)
            return
        expected = node.get("type")
        if expected is not None and not _type_ok(value, expected):
            raise _Problem(path, f"{breadcrumb(path)}: expected {_TYPE_NAMES[expected]}, "
                           f"got {_TYPE_NAMES[_type_of(value)]}",
                           _hint(node, f"write {_TYPE_NAMES[expected]} here"), at_value=True)
        self._scalar_rules(value, node, path)
        if isinstance(value, dict):
            self._object(value, node, path)
        elif isinstance(value, list):
            self._array(value, node, path)

    def _scalar_rules(self, value: Any, node: dict[str, Any], path: Path) -> None:
        if "enum" in node and value not in node["enum"]:
            choices = ", ".join(json.dumps(c) for c in node["enum"])
            raise _Problem(path, f"{breadcrumb(path)}: {json.dumps(value)} is not allowed",
                           f"use one of: {choices}", at_value=True)
        if isinstance(value, str):
            if "pattern" in node and not re.search(node["pattern"], value):
                raise _Problem(path, f"{breadcrumb(path)}: {value!r} does not match "
                               f"{node['pattern']}",
                               _hint(node, "use letters, digits, '-', '_'"), at_value=True)
            if len(value) < node.get("minLength", 0):
                raise _Problem(path, f"{breadcrumb(path)}: must not be empty",
                               _hint(node, "write some text"), at_value=True)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            lo, hi = node.get("minimum"), node.get("maximum")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise _Problem(path, f"{breadcrumb(path)}: {value} is out of range",
                               f"use a number from {lo} to {hi}", at_value=True)

    def _object(self, value: dict[str, Any], node: dict[str, Any], path: Path) -> None:
        props: dict[str, Any] = node.get("properties", {})
        for key in node.get("required", []):
            if key not in value:
                raise _Problem(path, f"{breadcrumb(path)}: missing key {key!r}",
                               _hint(self.resolve(props.get(key, {})), f"add {key}:"))
        if len(value) < node.get("minProperties", 0):
            raise _Problem(path, f"{breadcrumb(path)}: must not be empty",
                           _hint(node, "add at least one entry"), at_value=True)
        names = node.get("propertyNames")
        extra = node.get("additionalProperties", True)
        for key, item in value.items():
            sub = (*path, key)
            if names and "pattern" in names and not re.search(names["pattern"], key):
                raise _Problem(sub, f"{breadcrumb(path)}: name {key!r} does not match "
                               f"{names['pattern']}",
                               "use letters, digits, '_' and '-', starting with a letter")
            if key in props:
                self.check(item, props[key], sub)
            elif extra is False:
                known = ", ".join(props) or "none"
                close = difflib.get_close_matches(key, list(props), n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                raise _Problem(sub, f"{breadcrumb(path)}: unknown key {key!r}",
                               f"{hint}use one of: {known}")
            elif isinstance(extra, dict):
                self.check(item, extra, sub)

    def _array(self, value: list[Any], node: dict[str, Any], path: Path) -> None:
        lo, hi = node.get("minItems"), node.get("maxItems")
        if lo is not None and len(value) < lo:
            raise _Problem(path, f"{breadcrumb(path)}: needs at least {lo} item(s)",
                           "add an item", at_value=True)
        if hi is not None and len(value) > hi:
            raise _Problem(path, f"{breadcrumb(path)}: takes at most {hi} item(s)",
                           "remove the extra items", at_value=True)
        if "items" in node:
            for i, item in enumerate(value):
                self.check(item, node["items"], (*path, i))

    def _any_of(self, value: Any, branches: list[dict[str, Any]], path: Path) -> None:
        fitting = [b for b in branches if _type_ok(value, self.resolve(b).get("type", "object"))]
        if not fitting:
            kinds = " or ".join(dict.fromkeys(
                _TYPE_NAMES[self.resolve(b).get("type", "object")] for b in branches))
            raise _Problem(path, f"{breadcrumb(path)}: expected {kinds}, "
                           f"got {_TYPE_NAMES[_type_of(value)]}",
                           "see docs/machines/format.md for this key's forms", at_value=True)
        first: _Problem | None = None
        for branch in fitting:
            try:
                self.check(value, branch, path)
            except _Problem as exc:
                first = first or exc
            else:
                return
        assert first is not None
        raise first


def _hint(node: dict[str, Any], default: str) -> str:
    hint = node.get("x-hint")
    return hint if isinstance(hint, str) else default


def validate(marked: Marked, where: str) -> None:
    """Raise :class:`MachineDefinitionError` at the first place the file breaks the schema."""
    try:
        _Validator(schema()).check(marked.data, schema(), ())
    except _Problem as exc:
        line, col = marked.value_at(exc.path) if exc.at_value else marked.at(exc.path)
        raise MachineDefinitionError(exc.what, exc.fix, where=f"{where}:{line}:{col}") from None
