"""Loading a ``*.smllm.yaml`` file: YAML 1.2 → schema → normalized form → graph checks.

The result is the compiled form, plain JSON data the hot path reads from the cache
(:mod:`smllm.machine.catalog`) without yaml or the schema. Every problem raises
:class:`MachineDefinitionError` with ``file:line:col``, what is wrong and how to fix it.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from smllm.base import osfast as os
from smllm.base.errors import MachineDefinitionError
from smllm.machine import _schema, _yaml
from smllm.machine._yaml import Marked, Path

if TYPE_CHECKING:
    from smllm.base.shapes import CompiledMachine

#: event names the engine owns; a machine may not declare them
RESERVED = ("enter", "yield", "pause", "unmatched", "resume")
RESERVED_PREFIXES = ("smllm.", "xstate.")
DEFAULT_KIND = "task"
DEFAULT_TIMEOUT = 60.0


class _Ctx:
    def __init__(self, marked: Marked, where: str) -> None:
        self.m = marked
        self.where = where

    def fail(self, path: Path, what: str, fix: str, *, value: bool = False) -> None:
        line, col = self.m.value_at(path) if value else self.m.at(path)
        raise MachineDefinitionError(what, fix, where=f"{self.where}:{line}:{col}")


def _suggest(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]}?" if close else ""


def _regex(ctx: _Ctx, path: Path, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        ctx.fail(path, f"bad regular expression {pattern!r}: {exc}",
                 "fix the pattern: Python re syntax, matched against the whole value",
                 value=True)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _transitions(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        return [{"target": raw}]
    return [dict(t) for t in _as_list(raw)]


def _prompt(entry: Any) -> str | None:
    texts = [str(a["params"]["text"]) for a in _as_list(entry)]
    return "\n\n".join(texts) if texts else None


def _check_guard(ctx: _Ctx, path: Path, guard: dict[str, Any], params: set[str]) -> None:
    kind = guard["type"]
    p = guard.get("params") or {}
    need = {"command": ["run"], "paramMatches": ["param", "pattern"],
            "paramIn": ["param", "values"]}.get(kind, [])
    for key in need:
        if key not in p:
            ctx.fail(path, f"guard {kind} needs params.{key}", f"add params: {{ {key}: ... }}")
    if kind in ("not", "and", "or"):
        subs = guard.get("guards") or []
        if not subs or (kind == "not" and len(subs) != 1):
            ctx.fail(path, f"guard {kind} needs {'one guard' if kind == 'not' else 'guards'} "
                     "under guards:", "add guards: [ {type: ...} ]")
        for i, sub in enumerate(subs):
            _check_guard(ctx, (*path, "guards", i), sub, params)
    if "param" in p and p["param"] not in params:
        known = ", ".join(sorted(params)) or "none"
        ctx.fail((*path, "params", "param"), f"guard tests param {p['param']!r}, which this "
                 f"event does not take (params: {known})",
                 "declare it under meta.events.<event>.params", value=True)
    if "pattern" in p:
        _regex(ctx, (*path, "params", "pattern"), p["pattern"])


def _compile_events(ctx: _Ctx, data: dict[str, Any], ref: dict[str, Any] | None,
                    uses_setref: set[str]) -> dict[str, Any]:
    meta_events: dict[str, Any] = (data.get("meta") or {}).get("events") or {}
    events: dict[str, Any] = {}
    for name, ev in meta_events.items():
        path: Path = ("meta", "events", name)
        if name in RESERVED or name.startswith(RESERVED_PREFIXES):
            ctx.fail(path, f"event name {name!r} is reserved for smllm's built-in events "
                     f"({', '.join(RESERVED)})", "rename the event")
        params: dict[str, Any] = {}
        if name in uses_setref and ref is not None:
            params[ref["param"]] = {"required": True, "pattern": ref.get("pattern"),
                                    "enum": None, "description": ref.get("description", "")}
        for pname, spec in (ev.get("params") or {}).items():
            if "pattern" in spec:
                _regex(ctx, (*path, "params", pname, "pattern"), spec["pattern"])
            params[pname] = {"required": bool(spec.get("required", True)),
                             "pattern": spec.get("pattern"), "enum": spec.get("enum"),
                             "description": spec.get("description", "")}
        events[name] = {"description": ev["description"], "params": params}
    return events


def _normalize_states(ctx: _Ctx, data: dict[str, Any]) -> dict[str, Any]:
    states: dict[str, Any] = {}
    for name, st in data["states"].items():
        meta = st.get("meta") or {}
        final = st.get("type") == "final"
        if final and st.get("on"):
            ctx.fail(("states", name, "on"), f"state {name} is final, so nothing may leave it",
                     f"remove on: from {name}, or drop type: final")
        if final and meta.get("entryPoint"):
            ctx.fail(("states", name, "meta", "entryPoint"),
                     f"state {name} is final and cannot be an entry point",
                     "remove entryPoint: true")
        on: dict[str, list[dict[str, Any]]] = {}
        for event, raw in (st.get("on") or {}).items():
            if event in RESERVED or event.startswith(RESERVED_PREFIXES):
                ctx.fail(("states", name, "on", event), f"event name {event!r} is reserved for "
                         f"smllm's built-in events ({', '.join(RESERVED)})", "rename the event")
            on[event] = _transitions(raw)
        tools = meta.get("tools")
        states[name] = {
            "final": final, "entryPoint": bool(meta.get("entryPoint")),
            "prompt": _prompt(st.get("entry")), "description": st.get("description"),
            "tools": {"allow": tools.get("allow"), "deny": tools.get("deny") or []}
            if tools else None,
            "on": on,
        }
    return states


def _resolve_transitions(ctx: _Ctx, states: dict[str, Any], events: dict[str, Any],
                         ref: dict[str, Any] | None) -> None:
    names = list(states)
    for sname, st in states.items():
        for event, trans in st["on"].items():
            base: Path = ("states", sname, "on", event)
            if event not in events:
                ctx.fail(base, f"event {event!r} has no description",
                         f"add meta.events.{event}.description: <when the agent fires it>")
            for i, t in enumerate(trans):
                path: Path = (*base, i) if len(trans) > 1 or isinstance(
                    ctx.m.data["states"][sname]["on"][event], list) else base
                target = t.get("target")
                if isinstance(target, list):
                    target = target[0]
                if target is not None and target not in states:
                    tpath = (*path, "target") if (*path, "target") in ctx.m.keys else path
                    ctx.fail(tpath, f"unknown target {target!r} in {sname} on {event} "
                             f"(states: {', '.join(names)}{_suggest(target, names)})",
                             "name one of the states, or add that state", value=True)
                actions = [a if isinstance(a, str) else a["type"] for a in
                           _as_list(t.get("actions"))]
                set_ref = "setRef" in actions
                if set_ref and ref is None:
                    ctx.fail(path, f"{event} runs setRef but the machine has no instance ref",
                             "add meta.instance.ref: { param: ..., pattern: ... }")
                guard = t.get("guard")
                if guard is not None:
                    _check_guard(ctx, (*path, "guard"), guard, set(events[event]["params"]))
                if guard is None and i < len(trans) - 1:
                    ctx.fail(path, f"transition {i + 2} of {sname} on {event} can never be "
                             f"taken: transition {i + 1} has no guard",
                             "give the earlier transition a guard, or move it last")
                trans[i] = {"target": target, "setRef": set_ref, "guard": guard,
                            "reenter": bool(t.get("reenter")),
                            "description": t.get("description")}


def _graph(ctx: _Ctx, initial: str, states: dict[str, Any]) -> None:
    _reachable(ctx, initial, states)
    _finishable(ctx, states)


def _reachable(ctx: _Ctx, initial: str, states: dict[str, Any]) -> None:
    names = list(states)
    if initial not in states:
        ctx.fail(("initial",), f"initial state {initial!r} is not a state "
                 f"(states: {', '.join(names)}{_suggest(initial, names)})",
                 "name one of the states", value=True)
    roots = [initial] + [n for n, s in states.items() if s["entryPoint"]]
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        for trans in states[cur]["on"].values():
            todo += [t["target"] for t in trans if t["target"]]
    for name in names:
        if name not in seen:
            ctx.fail(("states", name), f"state {name} is unreachable from {initial}",
                     "add a transition to it, mark it meta.entryPoint: true, or remove it")


def _finishable(ctx: _Ctx, states: dict[str, Any]) -> None:
    names = list(states)
    finals = {n for n, s in states.items() if s["final"]}
    if not finals:
        ctx.fail(("states",), "the machine has no final state, so work can never finish",
                 "add a state with type: final")
    done = set(finals)
    changed = True
    while changed:
        changed = False
        for n, s in states.items():
            if n not in done and any(t["target"] in done for ts in s["on"].values() for t in ts):
                done.add(n)
                changed = True
    for name in names:
        if name not in done:
            ctx.fail(("states", name), f"no final state can be reached from {name}",
                     "add a transition that leads towards a final state")


def compile_marked(marked: Marked, where: str, file: str) -> CompiledMachine:
    """Validate parsed data and return the compiled machine."""
    _schema.validate(marked, where)
    ctx = _Ctx(marked, where)
    data: dict[str, Any] = marked.data
    meta = data.get("meta") or {}
    instance = meta.get("instance") or {}
    ref = instance.get("ref")
    if ref and "pattern" in ref:
        _regex(ctx, ("meta", "instance", "ref", "pattern"), ref["pattern"])
    states = _normalize_states(ctx, data)
    uses_setref = {
        e for s in states.values() for e, ts in s["on"].items()
        for t in ts if "setRef" in [a if isinstance(a, str) else a.get("type")
                                    for a in _as_list(t.get("actions"))]
    }
    events = _compile_events(ctx, data, ref, uses_setref)
    _resolve_transitions(ctx, states, events, ref)
    _graph(ctx, data["initial"], states)
    return {
        "id": data["id"], "description": data.get("description"), "file": file,
        "initial": data["initial"], "kind": instance.get("kind", DEFAULT_KIND),
        "ref": {"param": ref["param"], "pattern": ref.get("pattern"),
                "description": ref.get("description", "")} if ref else None,
        "events": events, "states": states,
    }


def display_path(path: FsPath) -> str:
    """How a machine file is named in errors: relative to the cwd when inside it."""
    try:
        return str(path.resolve().relative_to(FsPath.cwd().resolve()))
    except ValueError:
        return str(path)


def load(path: FsPath) -> CompiledMachine:
    """Read, validate and compile one machine file."""
    where = display_path(path)
    try:
        with path.open("rb") as f:
            data = f.read(_yaml.MAX_BYTES + 1)
            if len(data) > _yaml.MAX_BYTES:
                raise _yaml.too_large(where, os.fstat(f.fileno()).st_size)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise MachineDefinitionError(f"machine file {where} does not exist",
                                     "fix the name in [machines] files") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MachineDefinitionError(f"cannot read machine file {where}: {exc}",
                                     "check the file's permissions and encoding") from None
    return compile_marked(_yaml.load(text, where), where, str(path.resolve()))
