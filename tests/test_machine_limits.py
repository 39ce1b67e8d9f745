"""Machine files are read within bounds (issue 19 acceptance 5): an alias bomb, an alias
loop and an oversized file are refused, with file:line:col, by every reader: the loader,
the catalog the hooks use, `smllm fire`, `smllm machine`, `smllm doctor` and the hooks.
(`smllm serve`'s machine page: tests/serve/test_serve_machine_limits.py.)

The node limit is 10 000 and the bomb stands for 10**15 strings, so a reader that expanded
it would never finish: each test finishing at all shows the bomb was refused unexpanded."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from machine_project import SEED_FIX, Project, alias_bomb
from smllm.base.errors import MachineDefinitionError
from smllm.machine import _yaml, catalog, loader

BOMB = ("aliases expand to more than 10000 nodes (the value here already expands to 11111;"
        " the file itself holds 43) (write the repeated parts out, or refer to them fewer"
        " times (*name))")
WHERE = ".smllm/m.smllm.yaml:5:5: "


@pytest.fixture
def bombed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project whose one machine file is a 1 KB alias bomb; the cwd is the project."""
    project = Project(tmp_path / "project", {"m.smllm.yaml": alias_bomb()})
    monkeypatch.chdir(project.root)
    return project


def test_the_bomb_is_about_a_kilobyte() -> None:
    assert 900 < len(alias_bomb().encode()) <= 1024


def test_the_yaml_reader_refuses_an_alias_bomb_where_it_grows() -> None:
    with pytest.raises(MachineDefinitionError) as err:
        _yaml.load(alias_bomb(), "m.smllm.yaml")
    assert f"m.smllm.yaml:5:5: {BOMB}" == str(err.value)


def test_aliases_within_the_limit_still_load() -> None:
    """Anchors and aliases are fine while they stay small: each alias is expanded."""
    text = "a: &x [1, {b: 2}]\nc: [*x, *x]\n"
    assert {"a": [1, {"b": 2}], "c": [[1, {"b": 2}], [1, {"b": 2}]]} == _yaml.load(
        text, "m.yaml").data


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(MachineDefinitionError) as err:
        _yaml.load("id: m\nloop: &a [x, *a]\n", "m.smllm.yaml")
    assert ("m.smllm.yaml:2:7: an alias refers to the value that contains it (remove the "
            "alias (*name) from inside its own anchor (&name))") == str(err.value)


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    """Deep nesting would overflow the converter's stack (a traceback, not an error)."""
    assert _yaml.load("a: " + "[" * 99 + "]" * 99 + "\n", "m.yaml").data["a"] is not None
    with pytest.raises(MachineDefinitionError) as err:
        _yaml.load("a: " + "[" * 500 + "]" * 500 + "\n", "m.smllm.yaml")
    assert ("m.smllm.yaml:1:403: lists and mappings nest more than 100 deep here (flatten "
            "the structure)") == str(err.value)


def test_the_pure_python_yaml_reader_is_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without libyaml (PyYAML's pure-Python loader) the same files are refused."""
    monkeypatch.delattr(yaml, "CSafeLoader")
    with pytest.raises(MachineDefinitionError) as err:
        _yaml.load(alias_bomb(), "m.smllm.yaml")
    assert f"m.smllm.yaml:5:5: {BOMB}" == str(err.value)
    with pytest.raises(MachineDefinitionError, match="nest more than 100 deep"):
        _yaml.load("a: " + "[" * 5000 + "]" * 5000 + "\n", "m.smllm.yaml")


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.smllm.yaml"
    big.write_text("id: m\n" + "#" * _yaml.MAX_BYTES + "\n")
    with pytest.raises(MachineDefinitionError) as err:
        loader.load(big)
    assert str(err.value).endswith(
        f"big.smllm.yaml:1:1: machine file is {_yaml.MAX_BYTES + 7} bytes, more than the "
        f"{_yaml.MAX_BYTES} bytes smllm reads (split it into smaller machines (one file each)"
        " or remove what it repeats)")
    with pytest.raises(MachineDefinitionError, match="more than the 1048576 bytes"):
        _yaml.load(big.read_text(), "big.smllm.yaml")


def test_a_file_at_the_size_limit_is_read(tmp_path: Path) -> None:
    text = SEED_FIX.read_text()
    exact = tmp_path / "fix.smllm.yaml"
    exact.write_text(text + "#" * (_yaml.MAX_BYTES - len(text.encode()) - 1) + "\n")
    assert _yaml.MAX_BYTES == exact.stat().st_size
    assert "fix" == loader.load(exact)["id"]


def test_the_loader_and_the_catalog_refuse_the_bomb(bombed: Project) -> None:
    config = str(bombed.root / ".smllm" / "config.toml")
    for read in (lambda: loader.load(Path(".smllm/m.smllm.yaml")),
                 lambda: catalog.load([config])):
        with pytest.raises(MachineDefinitionError) as err:
            read()
        assert WHERE + BOMB == str(err.value)


@pytest.mark.parametrize("args", [("fire", "enter", "--param", "stateMachine=m"),
                                  ("machine", "validate"), ("machine", "list"),
                                  ("machine", "draw", ".smllm/m.smllm.yaml")])
def test_the_cli_refuses_the_bomb(bombed: Project, args: tuple[str, ...]) -> None:
    proc = bombed.cli(*args)
    assert (1, f"smllm: error: {WHERE}{BOMB}\n") == (proc.returncode, proc.stderr)


def test_doctor_reports_the_bomb(bombed: Project) -> None:
    proc = bombed.cli("doctor", "--project", str(bombed.root))
    assert 1 == proc.returncode
    assert f"error  machines: {WHERE}{BOMB}" in proc.stdout.splitlines()


def test_the_hooks_refuse_the_bomb(bombed: Project) -> None:
    """SessionStart compiles the machines into the cache: it says they cannot be loaded."""
    out = bombed.hook("SessionStart", source="startup")
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("smllm: the state machines cannot be loaded: ")
    assert WHERE + BOMB in context
