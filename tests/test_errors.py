"""The one error hierarchy (smllm.base.errors): every class imports from it with its bases
and renders one line; the classes a hook can raise live in smllm.base.errors_hot, so a
hook creates no other (tests/test_startup.py checks each hook's exact modules)."""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from smllm.base import errors, errors_hot

SRC = Path(__file__).resolve().parent.parent / "src" / "smllm"

#: class -> its bases in the hierarchy
HIERARCHY: dict[str, tuple[str | type, ...]] = {
    "SmllmError": (Exception,),
    "UsageError": ("SmllmError",),
    "ConfigError": ("SmllmError", ValueError),
    "PolicyError": ("ConfigError",),
    "MachineDefinitionError": ("ConfigError",),
    "SessionNotFound": ("SmllmError", LookupError),
    "InvalidSessionId": ("SmllmError", ValueError),
    "JournalError": ("SmllmError", OSError),
    "JournalCorrupt": ("JournalError",),
    "InstallError": ("SmllmError",),
    "ExportError": ("SmllmError",),
    "StoreError": ("SmllmError",),
    "SandboxUnavailable": ("SmllmError",),
}
#: what a hook can raise: defined in errors_hot
HOT = {"SmllmError", "UsageError", "InvalidSessionId", "JournalError"}


def test_errors_names_every_class_of_the_hierarchy() -> None:
    assert sorted(HIERARCHY) == sorted(errors.__all__)


@pytest.mark.parametrize("name", sorted(HIERARCHY))
def test_each_class_has_its_bases_and_renders_one_line(name: str) -> None:
    cls = getattr(errors, name)
    for base in HIERARCHY[name]:
        assert issubclass(cls, getattr(errors, base) if isinstance(base, str) else base)
    if name in HOT:  # one class, wherever it is imported from
        assert cls is getattr(errors_hot, name)
    # named as the hierarchy's module in tracebacks, and found there again by pickle
    assert "smllm.base.errors" == cls.__module__
    assert cls is pickle.loads(pickle.dumps(cls))
    err = cls("what is wrong", "how to fix it", where="f.toml:3")
    assert "f.toml:3: what is wrong (how to fix it)" == str(err)
    assert err.exit_code == (2 if name == "UsageError" else 1)


def test_errors_hot_defines_only_what_a_hook_can_raise() -> None:
    tree = ast.parse((SRC / "base" / "errors_hot.py").read_text())
    assert HOT == {n.name for n in tree.body if isinstance(n, ast.ClassDef)}


def test_importing_the_hot_classes_creates_none_of_the_others() -> None:
    code = ("import sys\nfrom smllm.base.errors_hot import JournalError\n"
            "assert 'smllm.base.errors' not in sys.modules, 'the whole hierarchy loaded'\n")
    subprocess.run([sys.executable, "-I", "-c", code], check=True, timeout=60)
