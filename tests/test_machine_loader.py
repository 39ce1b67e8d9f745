"""Broken machines (acceptance 3): each fails with file:line:col, what is wrong, and the fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from smllm.base.errors import MachineDefinitionError
from smllm.machine import _schema, _yaml, loader

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "machines"

#: fixture name -> the error after "<file>:", exactly
BROKEN: dict[str, str] = {
    'bad_regex':
        "8:35: bad regular expression '^BUG-[0-9+$': unterminated character set at position 5 (fix the pattern: Python re syntax, matched against the whole value)",
    'bad_version':
        '5:10: meta.smllm: 2 is not allowed (use one of: 1)',
    'command_guard_without_run':
        '19:51: guard command needs params.run (add params: { run: ... })',
    'duplicate_key':
        "24:3: duplicate key 'FIX' (first at line 20:3) (remove one of them or merge them: YAML keeps only the last)",
    'empty_file':
        '1:1: the file is empty (write a machine: id, initial, states; see docs/machines/format.md)',
    'entry_not_prompt':
        '21:20: states.FIX.entry.type: "say" is not allowed (use one of: "prompt")',
    'final_with_transitions':
        '26:5: state DONE is final, so nothing may leave it (remove on: from DONE, or drop type: final)',
    'no_final_state':
        '14:1: the machine has no final state, so work can never finish (add a state with type: final)',
    'no_initial':
        "1:1: (top level): missing key 'initial' (add initial: <the first state's name>)",
    'not_a_mapping':
        '1:1: (top level): expected a mapping, got a list (write a mapping here)',
    'on_as_boolean_true':
        '21:5: key \'true\' is not a name but a YAML boolean (quote it ("true:") or rename it)',
    'on_at_top_level':
        "27:1: (top level): unknown key 'on' (use one of: id, description, initial, meta, states)",
    'reserved_event':
        "24:7: event name 'yield' is reserved for smllm's built-in events (enter, yield, pause, unmatched, resume) (rename the event)",
    'setref_without_ref':
        '18:7: reproduced runs setRef but the machine has no instance ref (add meta.instance.ref: { param: ..., pattern: ... })',
    'shadowed_transition':
        '24:11: transition 2 of FIX on fixed can never be taken: transition 1 has no guard (give the earlier transition a guard, or move it last)',
    'undescribed_event':
        "24:7: event 'abandoned' has no description (add meta.events.abandoned.description: <when the agent fires it>)",
    'unknown_initial':
        "3:10: initial state 'TRIAGEE' is not a state (states: TRIAGE, FIX, DONE; did you mean TRIAGE?) (name one of the states)",
    'unknown_key':
        "19:21: states.TRIAGE.on.reproduced: unknown key 'targte' (did you mean target? use one of: target, actions, guard, reenter, description)",
    'unknown_target':
        "23:14: unknown target 'DONNE' in FIX on fixed (states: TRIAGE, FIX, DONE; did you mean DONE?) (name one of the states, or add that state)",
    'unreachable_state':
        '27:3: state LIMBO is unreachable from TRIAGE (add a transition to it, mark it meta.entryPoint: true, or remove it)',
    'yaml11_boolean_key':
        '24:7: key \'yes\' is a boolean in YAML 1.1 (PyYAML, many editors): two such keys collide and one is lost (quote it ("yes:") or rename it)',
    'yaml11_boolean_value':
        '3:10: value \'no\' is a boolean in YAML 1.1 (PyYAML, many editors) and a string in YAML 1.2 (quote it ("no") or write true/false)',
    'yaml_syntax':
        '22:10: YAML syntax error: mapping values are not allowed in this context (check the indentation and quoting around this point)',
}


@pytest.mark.parametrize(("name", "expected"), sorted(BROKEN.items()))
def test_broken_machine_is_refused_with_its_place_and_fix(
        name: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the fixture raises the exact file:line:col message; nothing loads silently."""
    monkeypatch.chdir(FIXTURES)
    with pytest.raises(MachineDefinitionError) as info:
        loader.load(Path(f"{name}.smllm.yaml"))
    assert f"{name}.smllm.yaml:{expected}" == str(info.value)


def test_every_fixture_has_an_expectation() -> None:
    """A broken-machine fixture without a row in the table would test nothing."""
    assert sorted(BROKEN) == sorted(p.name[: -len(".smllm.yaml")]
                                    for p in FIXTURES.glob("*.smllm.yaml"))


def test_validate_command_prints_the_error_and_exits_1() -> None:
    """`smllm machine validate FILE` prints `smllm: error: file:line:col: ...`, exit 1."""
    proc = subprocess.run([sys.executable, "-m", "smllm", "machine", "validate",
                           "unknown_target.smllm.yaml"], capture_output=True, text=True,
                          cwd=FIXTURES, check=False)
    expected = f"smllm: error: unknown_target.smllm.yaml:{BROKEN['unknown_target']}\n"
    assert (1, "", expected) == (proc.returncode, proc.stdout, proc.stderr)


SCHEMA_LEVEL = ["bad_version", "entry_not_prompt", "no_initial", "not_a_mapping",
                "on_at_top_level", "unknown_key"]


@pytest.mark.parametrize("name", SCHEMA_LEVEL)
def test_jsonschema_agrees_on_schema_errors(name: str) -> None:
    """The shipped JSON Schema, run by the jsonschema package, rejects these too."""
    data = _yaml.load((FIXTURES / f"{name}.smllm.yaml").read_text(), name).data
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema.schema())


SHIPPED = sorted(p.name for p in (REPO / "machines").glob("*.smllm.yaml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_machines_load_and_pass_jsonschema(name: str) -> None:
    """Every machine in machines/ compiles and the jsonschema package accepts it."""
    path = REPO / "machines" / name
    machine = loader.load(path)
    jsonschema.validate(_yaml.load(path.read_text(), name).data, _schema.schema())
    assert name == f"{machine['id']}.smllm.yaml"


def test_schema_in_machines_is_the_package_schema() -> None:
    """machines/smllm-machine.schema.json is the schema the loader uses, byte for byte."""
    shipped = json.loads((REPO / "machines" / "smllm-machine.schema.json").read_text())
    assert _schema.schema() == shipped


def test_at_least_four_shipped_machines() -> None:
    """machines/ has the seed's fix and at least three more."""
    assert "fix.smllm.yaml" in SHIPPED
    assert len(SHIPPED) >= 4


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_machines_are_documented(name: str) -> None:
    """docs/machines/library.md has a row for every machine in machines/."""
    page = (REPO / "docs" / "machines" / "library.md").read_text()
    assert f"| `{name.split('.', maxsplit=1)[0]}` |" in page
