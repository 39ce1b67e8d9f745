"""The tree names the product's parts, and facts written down once stay written down once."""

from __future__ import annotations

import ast
import collections
import collections.abc
import importlib
import json
import os
import re

import pytest

import test_startup
from helpers import REPO
from smllm import hooks
from smllm.hooks import _context
from smllm.setup import install

SRC = REPO / "src" / "smllm"
PARTS = ("journal", "gate", "machine", "audit", "setup")


# ------------------------------------------------------------ acceptance 1: the tree


def test_no_module_name_twice_outside_commands() -> None:
    """No two modules of src/smllm share a name (commands/<name>.py wires `smllm <name>`)."""
    names = collections.Counter(
        p.stem for p in SRC.rglob("*.py")
        if p.stem != "__init__" and p.parent.name != "commands" and p.stem != "__main__")
    assert {} == {n: c for n, c in names.items() if c > 1}


def test_top_level_listing_names_the_five_parts() -> None:
    """`ls src/smllm` shows the five parts as packages; the only modules at the top are the
    CLI's (everything else lives in a part, or in base, hooks or commands)."""
    listing = os.listdir(SRC)
    packages = {n for n in listing if (SRC / n / "__init__.py").is_file()}
    modules = sorted(n for n in listing if n.endswith(".py"))
    assert (set(PARTS), ["__init__.py", "__main__.py", "cli.py"]) == (
        set(PARTS) & packages, modules)


def test_architecture_page_gives_each_package_one_line() -> None:
    """ARCHITECTURE.md names every package of src/smllm in its tree, and its fences pair up."""
    text = (REPO / "ARCHITECTURE.md").read_text()
    packages = sorted(str(p.parent.relative_to(SRC)) for p in SRC.rglob("__init__.py")
                      if p.parent != SRC)
    tree = text.split("```text\nsrc/smllm/\n", 1)[1].split("```", 1)[0]
    missing = [p for p in packages if f"{p.rsplit('/', 1)[-1]}/" not in tree]
    assert ([], 0) == (missing, text.count("```") % 2)


def test_every_import_inside_a_function_says_why() -> None:
    """An import inside a function (kept for the startup budget) carries its reason."""
    bare = [f"{p.relative_to(SRC)}:{n}" for p in sorted(SRC.rglob("*.py"))
            for n, line in enumerate(p.read_text().splitlines(), 1)
            if line.rstrip().endswith("# noqa: PLC0415")]
    assert [] == bare


def _module_level_imports(path: os.PathLike[str], module: str, known: set[str]) -> set[str]:
    """The modules of src/smllm that ``module`` imports when it is imported: every import
    outside a function body (``if TYPE_CHECKING:`` ones too, since a type checker follows
    them), ``from package import name`` counted as the module ``package.name`` when there
    is one, else as ``package``."""
    package = module if str(path).endswith("__init__.py") else module.rpartition(".")[0]

    def statements(body: list[ast.stmt]) -> collections.abc.Iterator[ast.stmt]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            yield node
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from statements(inner)

    out: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in statements(tree.body):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            out.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names)
    return (out & known) - {module}


def _import_graph() -> dict[str, set[str]]:
    modules: dict[str, os.PathLike[str]] = {}
    for p in SRC.rglob("*.py"):
        parts = p.relative_to(SRC.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    known = set(modules)
    return {name: _module_level_imports(path, name, known) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    """No modules of src/smllm import each other in a circle (module-level imports,
    TYPE_CHECKING ones included; an import inside a function is deferred on purpose)."""
    assert [] == _cycles(_import_graph())


def test_the_cycle_finder_finds_a_circle() -> None:
    """The cycle test can fail: a circle through three modules is found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [["a", "b", "c"]] == _cycles(graph)


# ------------------------------------------------------------ acceptance 4: hook events


def test_handlers_gating_and_tool_events_come_from_the_table() -> None:
    """HANDLERS, GATING and the input check's TOOL_EVENTS are the table's."""
    table = {name: (gating, tool, handler) for name, gating, tool, handler, _ in hooks.TABLE}
    assert (
        {n: h for n, (_, _, h) in table.items() if h},
        {n for n, (g, _, _) in table.items() if g},
        {n for n, (_, t, _) in table.items() if t},
    ) == (hooks.HANDLERS, set(hooks.GATING), set(hooks.TOOL_EVENTS))


@pytest.mark.parametrize(("event", "tool"), [(n, t) for n, _, t, _, _ in hooks.TABLE])
def test_tool_events_must_name_their_tool(event: str, tool: bool) -> None:
    """The input check asks a tool event (and only a tool event) for tool_name."""
    raw = json.dumps({"session_id": "s-1", "hook_event_name": event}).encode()
    try:
        _context.parse_input(event, raw, tool_event=event in hooks.TOOL_EVENTS)
        asked = False
    except _context.HookInputError as exc:
        asked = exc.what == f"{event} input has no 'tool_name' field"
    assert tool == asked


@pytest.mark.parametrize("event", sorted(hooks.HANDLERS))
def test_every_handler_module_handles(event: str) -> None:
    """Each event's handler module exists and has handle(ctx)."""
    module = importlib.import_module(f"smllm.hooks.{hooks.HANDLERS[event]}")
    assert callable(module.handle)


def test_install_registers_the_table() -> None:
    """`smllm install` registers each handled event with the table's timeout and matcher."""
    groups = install.desired("/py", [])
    actual = {e: (g["hooks"][0]["timeout"], g.get("matcher")) for e, g in groups.items()}
    assert hooks.INSTALLED == actual


def test_plugin_hooks_json_registers_the_table() -> None:
    """hooks/hooks.json registers exactly the table's events, matchers and timeouts."""
    registered = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    actual = {e: (g[0]["hooks"][0]["timeout"], g[0].get("matcher"))
              for e, g in registered.items()}
    commands = {e: g[0]["hooks"][0]["command"] for e, g in registered.items()}
    assert (hooks.INSTALLED, {e: f'"${{CLAUDE_PLUGIN_ROOT}}/hooks/launcher" hook {e}'
                               for e in hooks.INSTALLED}) == (actual, commands)


def test_launcher_gates_the_same_events() -> None:
    """hooks/smllm_entry.py (which cannot import smllm) and the shell launcher (when no
    interpreter is found) fail closed (exit 2) for exactly the gating events."""
    tree = ast.parse((REPO / "hooks" / "smllm_entry.py").read_text())
    gating = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "GATING" for t in n.targets))
    shell = re.findall(r'\[ "\$2" = (\w+) \] && exit 2', (REPO / "hooks" / "launcher").read_text())
    assert (set(hooks.GATING), sorted(hooks.GATING)) == (set(gating), sorted(shell))


def test_startup_test_covers_every_event() -> None:
    """tests/test_startup.py has a payload for every handled event."""
    assert sorted(hooks.HANDLERS) == sorted(test_startup.PAYLOADS)


# ------------------------------------------------------------ reviewers: one registry


def test_policy_files_accept_exactly_the_registered_reviewers() -> None:
    """The policy compiler and the policy file's model name the reviewer registry's names."""
    from typing import get_args

    from smllm.gate import reviewers
    from smllm.gate.policy import _policy_file

    listed = _policy_file.PolicyFile.model_fields["reviewers"].annotation
    (items, _none) = get_args(listed)
    (literal,) = get_args(items)
    expected = tuple(reviewers.REVIEWERS)
    assert (expected, expected) == (_policy_file.REVIEWERS, get_args(literal))
