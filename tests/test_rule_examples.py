"""Every shell rule is data with its examples, and its examples are its tests.

Each rule the shell analyser can name (a ``[[builtin]]`` of ``data/policy_defaults.toml``
whose id appears in ``gate/shell/``) carries ``match`` examples (commands it must find)
and ``not_match`` examples (look-alikes it must not). The program table's own rules carry
theirs in ``gate/shell/_tabledata.py`` (tests/test_shell_rules.py).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
import tomllib

from smllm.gate.shell import analyse

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "corpus"))
import families

SRC = Path(__file__).resolve().parent.parent / "src" / "smllm"
HOME = "/home/tester"
BUILTINS = tomllib.loads((SRC / "data" / "policy_defaults.toml").read_text())["builtin"]
#: rules no command can make the analyser name (it names them when it fails itself)
NO_EXAMPLE = {"shell.internal-error": "the analyser's own failure, never a command's"}


def _shell_rule_ids() -> set[str]:
    found: set[str] = set()
    for path in (SRC / "gate" / "shell").glob("*.py"):
        found |= {n.value for n in ast.walk(ast.parse(path.read_text()))
                  if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found & {b["id"] for b in BUILTINS}


SHELL_RULES = sorted(_shell_rule_ids())
CASES = [(b["id"], kind, command) for b in BUILTINS for kind in ("match", "not_match")
         for command in b.get(kind, [])]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The families corpus's project (task files, scripts), with a few plain files."""
    root = tmp_path_factory.mktemp("examples") / "proj"
    for rel, text in {**families.WORKSPACE, "README.md": "hello\n", "notes.txt": "n\n"}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "src").mkdir(exist_ok=True)
    (root / "build").mkdir(exist_ok=True)
    return root


@pytest.mark.parametrize("rule", SHELL_RULES)
def test_every_shell_rule_has_both_kinds_of_example(rule: str) -> None:
    entry = next(b for b in BUILTINS if b["id"] == rule)
    if rule in NO_EXAMPLE:
        assert not entry.get("match"), NO_EXAMPLE[rule]
        return
    assert (True, True) == (bool(entry.get("match")), bool(entry.get("not_match"))), rule


@pytest.mark.parametrize(("rule", "kind", "command"), CASES,
                         ids=[f"{r}:{k}:{c[:40]}" for r, k, c in CASES])
def test_example(workspace: Path, rule: str, kind: str, command: str) -> None:
    """A ``match`` example is found by its rule; a ``not_match`` one is not."""
    found = {f.rule for f in analyse(command, cwd=str(workspace), home=HOME).all_findings()}
    assert (kind == "match") == (rule in found), (command, sorted(found))
