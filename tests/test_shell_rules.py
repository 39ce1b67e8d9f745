"""The program table's rules are data, and each rule's examples are its tests.

Every ``match`` example of a rule must be judged by that rule (the first rule that fits
it) and produce its rule id through the whole analyser; every ``not_match`` must not be
judged by it and must not produce its id. The decision of a finding is the one the
policy defaults give its rule id: written once, in ``data/policy_defaults.toml``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from smllm.gate.policy import _compile
from smllm.gate.shell import _decisions, _table, _tabledata, analyse

HOME = "/home/tester"
RULES = [(p, r) for p in _tabledata.PROGRAMS for r in p["rules"]]
IDS = [f"{p['names'][0]}-{p['rules'].index(r)}-{r['id']}" for p, r in RULES]
MATCH = [(p, r, ex) for p, r in RULES for ex in r["match"]]
NOT_MATCH = [(p, r, ex) for p, r in RULES for ex in r["not_match"]]


def _fired(example: str) -> _tabledata.Rule | None:
    """The rule the engine judges the command line ``example`` by (None: none, or an
    option makes it only print)."""
    name, *raw = shlex.split(example)
    program, operands, values, prints = _table.read(name, raw)
    return None if prints else _table.rule_for(program, name, operands, values)


def _rules_found(example: str, root: Path) -> set[str]:
    return {f.rule for f in analyse(example, cwd=str(root), home=HOME).all_findings()}


@pytest.mark.parametrize(("program", "rule", "example"), MATCH,
                         ids=[f"{r['id']}:{ex}" for _, r, ex in MATCH])
def test_match_example_is_judged_by_its_rule(program: _tabledata.Program,
                                              rule: _tabledata.Rule, example: str,
                                              tmp_path: Path) -> None:
    """The rule is the first that fits its example, and the analysis finds its id."""
    assert (True, True) == (_fired(example) is rule, rule["id"] in _rules_found(example,
                                                                                  tmp_path))


@pytest.mark.parametrize(("program", "rule", "example"), NOT_MATCH,
                         ids=[f"{r['id']}:{ex}" for _, r, ex in NOT_MATCH])
def test_not_match_example_is_not(program: _tabledata.Program, rule: _tabledata.Rule,
                                  example: str, tmp_path: Path) -> None:
    """The rule does not judge its counter-example, and the analysis does not find its id."""
    assert (False, False) == (_fired(example) is rule,
                              rule["id"] in _rules_found(example, tmp_path))


@pytest.mark.parametrize(("program", "rule"), RULES, ids=IDS)
def test_every_rule_has_examples_of_its_programs(program: _tabledata.Program,
                                                 rule: _tabledata.Rule) -> None:
    """At least one match and one not_match, each a command line of the entry's programs."""
    examples = [*rule["match"], *rule["not_match"]]
    strangers = [ex for ex in examples if shlex.split(ex)[0] not in program["names"]]
    assert (True, True, []) == (bool(rule["match"]), bool(rule["not_match"]), strangers)


def test_entries_use_only_the_keys_the_engine_reads() -> None:
    """A misspelt key (``witht``) would silently drop a condition: every key of every
    entry and rule is one the engine reads, every rest names a function, every example
    and pattern is a string."""
    import importlib

    unknown = [(p["names"][0], k) for p in _tabledata.PROGRAMS for k in p
               if k not in _table.PROGRAM_KEYS]
    unknown += [(r["id"], k) for _, r in RULES for k in r if k not in _table.RULE_KEYS]
    rests = []
    for p in _tabledata.PROGRAMS:
        if "rest" in p:
            module, _, function = p["rest"].rpartition(".")
            found = getattr(importlib.import_module(f"smllm.gate.shell.{module}"), function, None)
            rests.append(callable(found))
    positions = [pos for _, r in RULES for pref in (r["prefix"], *r.get("also", ()))
                 for pos in pref]
    words = [w for pos in positions for w in ((pos,) if isinstance(pos, str) else pos)]
    assert ([], True, True) == (unknown, all(rests),
                                all(isinstance(w, str) and w for w in words))


def test_rule_ids_are_built_in_rules() -> None:
    """Every rule id of the table is a built-in rule of the policy defaults."""
    builtin = _compile.load_defaults()
    assert [] == sorted({r["id"] for _, r in RULES} - set(builtin))


def test_decisions_are_read_as_the_policy_compiler_reads_them() -> None:
    """The engine's line reader of the defaults agrees with the TOML compiler."""
    builtin = _compile.load_defaults()
    expected = {rid: b["decision"] for rid, b in builtin.items()}
    assert expected == _decisions.read_decisions(_decisions.DEFAULTS)


def test_a_finding_takes_its_decision_from_the_defaults(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Change infra.delete's decision in (a copy of) the defaults: the finding follows."""
    text = Path(_decisions.DEFAULTS).read_text(encoding="utf-8")
    head = 'id = "infra.delete"\ndecision = "ask"'
    assert head in text
    copy = tmp_path / "policy_defaults.toml"
    copy.write_text(text.replace(head, 'id = "infra.delete"\ndecision = "deny"'))
    monkeypatch.setattr(_decisions, "DEFAULTS", str(copy))
    monkeypatch.setattr(_decisions, "_DECISIONS", {})
    found = analyse("kubectl delete pod x", cwd=str(tmp_path), home=HOME).all_findings()
    assert [("infra.delete", "deny")] == [(f.rule, f.decision) for f in found]


def test_a_rule_missing_from_the_defaults_is_an_error(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    """A rule id the defaults lack fails (the analyser then escalates), naming the fix."""
    monkeypatch.setattr(_decisions, "_DECISIONS", {"other.rule": "ask"})
    with pytest.raises(LookupError, match=r"'infra.delete'.*add a \[\[builtin\]\] entry"):
        _decisions.decision_of("infra.delete")


@pytest.mark.parametrize(("argv", "takes", "longs", "expected"), [
    (["-n", "prod", "delete", "pod", "x"], ("-n",), (), ["delete", "pod", "x"]),
    (["--namespace=prod", "delete", "-o", "name"], ("-o",), (), ["delete"]),
    (["--", "delete", "x"], (), (), ["delete", "x"]),
    (["exec", "pod", "--", "rm", "-rf", "/"], (), (), ["exec", "pod", "--", "rm", "-rf", "/"]),
    (["--hos", "db", "prod"], ("--host",), ("--host", "--help"), ["prod"]),
    (["--h", "db", "prod"], ("--host",), ("--host", "--help"), ["db", "prod"]),
])
def test_read_argv(argv: list[str], takes: tuple[str, ...], longs: tuple[str, ...],
                   expected: list[str]) -> None:
    """Operands past options and their values; an unambiguous long option abbreviation is
    read as the option (``--hos`` is ``--host``; ``--h`` could be either)."""
    assert expected == _table.read_argv(argv, takes, longs)[0]


def test_written_paths_are_writes(tmp_path: Path) -> None:
    """``terraform plan -out FILE`` writes FILE (inside ``-chdir``): a protected file is
    refused, and the write is an effect with its resolved path."""
    home = tmp_path / "home"
    bad = analyse(f"terraform plan -out={home}/.bashrc", cwd=str(tmp_path), home=str(home))
    good = analyse("terraform -chdir=infra plan -out=p.tfplan", cwd=str(tmp_path),
                   home=str(home))
    assert (("deny", ["fs.write-sensitive"]), [str(tmp_path / "infra" / "p.tfplan")],
            False) == ((bad.decision, [f.rule for f in bad.all_findings()]),
                       [e.path for e in good.effects], good.commands[0].known_safe)


@pytest.mark.parametrize(("command", "rule"), [
    ("echo FLUSHALL | redis-cli -h cache", "data.destroy"),
    ("redis-cli <<'EOF'\nCONFIG SET dir /tmp\nEOF", "exec.code-option"),
])
def test_commands_read_from_stdin_are_operands(command: str, rule: str, tmp_path: Path
                                                ) -> None:
    """redis-cli reads its commands from a known stdin too (``stdin_words``)."""
    assert rule in _rules_found(command, tmp_path)
