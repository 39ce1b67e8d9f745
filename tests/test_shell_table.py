"""The analyser's structure: one table of programs, families that import only the core,
and imports inside functions only where the hook's startup budget needs them."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from smllm.gate.shell import _programs, _tabledata

SHELL = Path(__file__).resolve().parent.parent / "src" / "smllm" / "gate" / "shell"
#: what every family may import: the core and the shared vocabulary and helpers (option
#: reading, secret flows, task files, text scanning of code), never another family
SHARED = {"_analyse", "_model", "_parse", "_syntax", "_flags", "_programs", "_flows",
          "_tasks", "_codescan", "_environ", "_table", "_tabledata", "_decisions"}
#: (module file, imported module) of every import inside a function, each for a reason
LATE_IMPORTS = {
    ("__init__.py", "smllm.gate.shell._analyse.analyse_text"),  # Write/Edit import the package, not the parser
    ("_model.py", "re"),  # half an interpreter start; most commands need no regex
    ("_analyse.py", "unicodedata"),  # only for a non-ASCII command name
    ("_analyse.py", "smllm.gate.shell._decisions.finding"),  # only a foreign program not installed
    ("_git.py", "smllm.gate.shell._decisions.finding"),  # only a push to a new remote
    ("_analyse.py", "smllm.gate.shell._environ"),  # only a command setting a variable or git setting
    ("_code.py", "smllm.gate.shell._pyscan"),  # ast costs 5 ms: only Python worth parsing
    ("_code.py", "smllm.gate.shell._codescan.scan_text"),  # only code of other languages
    ("_code.py", "smllm.gate.shell._codescan.STRING"),  # only awk that runs commands
    ("_code.py", "smllm.gate.shell._tasks"),  # only deno task
    ("_tasks.py", "smllm.base.tomlread"),  # the TOML parser: only for pyproject tasks
    ("_programs.py", "smllm.gate.shell._tabledata.PROGRAMS"),  # only for a program in no family
}


@pytest.mark.parametrize("family", sorted(_programs.FAMILIES))
def test_table_names_what_each_family_judges(family: str) -> None:
    """Each function the table names is a handler of its family; a family that still
    keeps a ``HANDLERS`` dict of its own maps the same programs to the same functions."""
    module = importlib.import_module(f"smllm.gate.shell.{family}")
    functions = _programs.FAMILIES[family]
    missing = sorted(f for f in functions if not callable(getattr(module, f, None)))
    listed = {name: getattr(module, f, None) for f, names in functions.items() for name in names}
    kept = getattr(module, "HANDLERS", listed)
    assert ([], listed) == (missing, kept)


def test_no_program_is_in_two_families() -> None:
    """A program name has one handler: no name twice in the table of families, none of
    the program table's there too, and each finds the handler it is listed with."""
    names = [n for functions in _programs.FAMILIES.values() for ns in functions.values()
             for n in ns]
    table = [n for p in _tabledata.PROGRAMS for n in p["names"]]
    twice = sorted({n for n in names + table if (names + table).count(n) > 1})
    wrong = sorted(n for n in table if _programs.family_of(n) != ("_table", "judge"))
    wrong += sorted(n for f, fs in _programs.FAMILIES.items() for fn, ns in fs.items()
                    for n in ns if _programs.family_of(n) != (f, fn))
    assert ([], []) == (twice, wrong)


def test_program_table_programs_are_not_read_only_listed() -> None:
    """The read-only list of programs without a handler names none of the program table's
    (the table is consulted after that list)."""
    table = {n for p in _tabledata.PROGRAMS for n in p["names"]}
    assert set() == table & _programs.READ_ONLY


def _imports(path: Path) -> tuple[set[str], list[tuple[str, int]]]:
    """(modules imported at top level, (module, line) of imports inside functions)."""
    tree = ast.parse(path.read_text())
    top: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module)
            top.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            top.update(a.name for a in node.names)
    late: list[tuple[str, int]] = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    late += [(a.name, node.lineno) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    late += [(f"{node.module}.{a.name}", node.lineno) for a in node.names]
    return top, late


@pytest.mark.parametrize("family", sorted(_programs.FAMILIES))
def test_families_import_only_the_core(family: str) -> None:
    """A family module imports the shared core, never another family."""
    top, _ = _imports(SHELL / f"{family}.py")
    prefix = "smllm.gate.shell."
    ours = {m[len(prefix):].split(".")[0] for m in top if m.startswith(prefix)}
    assert set() == ours - SHARED


def test_imports_inside_functions_are_the_listed_ones() -> None:
    """Every import inside a function is listed here with its reason, and commented."""
    found = set()
    uncommented = []
    for path in sorted(SHELL.glob("*.py")):
        lines = path.read_text().splitlines()
        for module, line in _imports(path)[1]:
            found.add((path.name, module))
            if "#" not in lines[line - 1] and not lines[line - 2].strip().startswith("#"):
                uncommented.append((path.name, line))
    assert (LATE_IMPORTS, []) == (found, uncommented)


def test_a_command_loads_only_the_families_it_needs() -> None:
    """Importing the package loads no parser; `git status` then loads the git family only
    (not the program table)."""
    code = (
        "import sys\n"
        "from smllm.gate import shell\n"
        "print(sorted(m for m in sys.modules if m.startswith('smllm.gate.shell.')))\n"
        "shell.analyse('git status', cwd='/tmp/p')\n"
        "fams = {*shell._programs.FAMILIES, '_table', '_tabledata'}\n"
        "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
        "             if m.startswith('smllm.gate.shell.') and m.rsplit('.', 1)[1] in fams))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    expected = "['smllm.gate.shell._model']\n['_git']\n"
    assert expected == out.stdout
