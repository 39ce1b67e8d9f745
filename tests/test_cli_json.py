"""`--json` for scripts: every command that prints data has it, in one style (compact JSON,
one object per report, JSON Lines per list), each output valid against its JSON Schema
(tests/schemas/<name>.schema.json)."""


from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from helpers import allow_test_knobs, smllm
from machine_project import Project
from smllm import cli

SCHEMAS = Path(__file__).parent / "schemas"
FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
BILLING = FIXTURES / "billing" / "c7dfaecc-adf6-4348-87df-95576e15136e" / "session.jsonl"
MIGRATION = FIXTURES / "migration" / "ff273730-5b1e-4c2a-9d3f-7a8b9c0d1e2f" / "session.jsonl"

#: (schema name, command line, report = one object | list = JSON Lines); {p} = the project,
#: {key} = its smllm session, {billing}/{migration} = copies of the sample journals
CASES: list[tuple[str, list[str], str]] = [
    ("install", ["install", "--project", "{p}", "--json"], "report"),
    ("install", ["install", "--project", "{p}", "--dry-run", "--json"], "report"),
    ("doctor", ["doctor", "--project", "{p}", "--json"], "report"),
    ("fire", ["fire", "--session", "{key}", "enter", "--param", "stateMachine=fix", "--json"],
     "report"),
    ("status", ["status", "--session", "{key}", "--json"], "report"),
    ("machine-validate", ["machine", "validate", "--json"], "list"),
    ("machine-list", ["machine", "list", "--json"], "list"),
    ("session-list", ["session", "list", "--json"], "list"),
    ("session-show", ["session", "show", "{key}", "--json"], "report"),
    ("session-audit", ["session", "show", "{key}", "--audit", "--json"], "list"),
    ("verify", ["verify", "{billing}", "--json"], "report"),
    ("resume", ["resume", "{billing}", "--check", "--json"], "report"),
    ("reconcile", ["reconcile", "504", "--outcome", "not-applied", "--journal", "{migration}",
                   "--json"], "report"),
    ("resume", ["resume", "{migration}", "--json"], "report"),
    ("ledger", ["ledger", "{export}", "--json"], "list"),
    ("ledger", ["ledger", "{export}", "--effects", "--json"], "list"),
    ("chain", ["chain", "{export}", "--json"], "list"),
    ("policy-check", ["policy", "check", "--json"], "report"),
    ("policy-grants", ["policy", "grants", "--all", "--json"], "list"),
    ("sessions", ["sessions", "--all", "--json"], "list"),
    ("search", ["search", "--all", "--json"], "list"),
    ("search-counts", ["search", "--all", "--count-by", "kind", "--json"], "list"),
    ("policy-test", ["policy", "test", "{corpus}", "--json"], "report"),
    ("policy-explain", ["policy", "explain", "--json", "--", "rm -rf build"], "report"),
    ("policy-explain", ["policy", "explain", "--json", "--", "ls"], "report"),
    ("install", ["uninstall", "--project", "{p}", "--json"], "report"),
]

#: commands (and actions) that print no data a script would read, and why
NO_JSON = {
    "hook": "speaks Claude Code's hook protocol: one JSON object or nothing, always",
    "mcp": "speaks the MCP protocol (JSON-RPC) on stdio",
    "export": "writes a JSON document; stdout is only its path (--schema prints its schema)",
    "machine draw": "prints a diagram (Mermaid or DOT)",
    "serve": "runs the web viewer; every page's data is JSON at its /api/ twin",
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str, str]]:
    """Run every case once, in order, in one scratch store; (schema, argv, form, stdout)."""
    root = tmp_path_factory.mktemp("json")
    env = {"SMLLM_HOME": str(root / "home"), "SMLLM_IDS": "sm-jsonjs,i-100001"}
    (root / "home").mkdir(mode=0o700)
    allow_test_knobs(root / "home")  # the hook's session key comes from SMLLM_IDS
    project = Project(root / "p")
    project.hook("SessionStart", source="startup", env=env)
    for name, log in (("billing", BILLING), ("migration", MIGRATION)):
        target = root / name / log.parent.name / "session.jsonl"
        target.parent.mkdir(parents=True)
        shutil.copyfile(log, target)
    subprocess.run([sys.executable, "-c", "from smllm.gate import grants; grants.add("
                    "workspace='/w', tool_name='Bash', tool_input={'command': 'make'}, "
                    "granted_by='user', session_id='s', pending_action_id='pa-1', "
                    "pins=grants.Pins({'/w/Makefile': 'sha256:' + '0' * 64}, ['make runs x']))"],
                   env={**os.environ, **env}, check=True)
    export = root / "t.json"
    done = smllm("export", "--journal", str(root / "billing" / BILLING.parent.name),
                 "--out", str(export), env=env)
    assert 0 == done.returncode, done.stderr
    values = {"p": str(project.root), "key": "sm-jsonjs", "export": str(export),
              "billing": str(root / "billing" / BILLING.parent.name / "session.jsonl"),
              "migration": str(root / "migration" / MIGRATION.parent.name / "session.jsonl"),
              "corpus": str(FIXTURES.parent / "corpus" / "policy-test.tsv")}
    out = []
    for schema, argv, form in CASES:
        args = [a.format(**values) for a in argv]
        proc = smllm(*args, env=env, cwd=project.root)
        assert (0, "") == (proc.returncode, proc.stderr), (args, proc.stderr)
        out.append((schema, " ".join(argv), form, proc.stdout))
    return out


@pytest.mark.parametrize("index", range(len(CASES)), ids=[" ".join(c[1]) for c in CASES])
def test_json_output_is_valid_and_one_style(outputs: list[tuple[str, str, str, str]],
                                            index: int) -> None:
    """Each line is compact JSON (the one writer's style) and valid against the schema;
    a report is one line, a list at least one."""
    schema_name, _, form, stdout = outputs[index]
    schema = json.loads((SCHEMAS / f"{schema_name}.schema.json").read_text())
    lines = stdout.splitlines()
    values = [json.loads(line) for line in lines]
    compact = [json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in values]
    errors = [e.message for v in values
              for e in jsonschema.Draft202012Validator(schema).iter_errors(v)]
    shape = len(lines) == 1 if form == "report" else len(lines) >= 1
    assert (True, compact, []) == (shape, lines, errors)


def test_schemas_are_valid_json_schemas() -> None:
    """Every schema in tests/schemas is itself a valid draft 2020-12 schema, and used."""
    names = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))
    for name in names:
        jsonschema.Draft202012Validator.check_schema(
            json.loads((SCHEMAS / f"{name}.schema.json").read_text()))
    assert names == sorted({c[0] for c in CASES})


def _commands() -> list[str]:
    """Every command, and every action of a command that has actions."""
    out = []
    for name in cli.COMMANDS:
        if name == "hook":
            continue  # no argparse (the hot path); NO_JSON says why it has no --json
        parser = cli.build_parser(name)
        actions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        if actions:
            out += [f"{name} {sub}" for sub in actions[0].choices]  # type: ignore[attr-defined]
        else:
            out.append(name)
    return out


@pytest.mark.parametrize("command", _commands())
def test_every_command_that_prints_data_has_json(command: str) -> None:
    """`--json` is in every command's help, except where NO_JSON says why not."""
    proc = smllm(*command.split(), "--help")
    documented = "--json" in proc.stdout
    expected = command not in NO_JSON
    assert (0, expected) == (proc.returncode, documented), proc.stdout


def test_export_schema_validates_a_real_export(tmp_path: Path) -> None:
    """`smllm export --schema` (from the pydantic models) accepts a real export, and rejects
    one whose envelope lost its hash."""
    log = tmp_path / BILLING.parent.name / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(BILLING, log)
    out = tmp_path / "t.json"
    assert 0 == smllm("export", "--journal", str(log), "--out", str(out)).returncode
    schema = json.loads(smllm("export", "--schema").stdout)
    doc = json.loads(out.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    good = [e.message for e in validator.iter_errors(doc)]
    del doc["events"][0]["envelope"]["hash"]
    bad = [e.message for e in validator.iter_errors(doc)]
    assert ([], "urn:smllm:export:1", True) == (good, schema["$id"], bool(bad))

