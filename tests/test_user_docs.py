"""The user docs speak plain words and cite only what is in the repository."""


from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from helpers import REPO, smllm
from smllm import cli

#: the user docs: pages, the plugin's slash commands and skill, the shipped machines
PAGES = sorted([REPO / "README.md", REPO / "ARCHITECTURE.md", *(REPO / "docs").rglob("*.md"),
                *(REPO / "plugin").rglob("*.md"), *(REPO / "machines").glob("*.yaml")])
#: words of the project's own design notes, which are not in the repository
JARGON = re.compile(r"\bseed ?0*[01]\b|\bseed's\b|product(?:\.md)?\s*§|\bproduct\.md\b|§\s*\d|"
                    r"\bshared/(?:ref|seeds|design)\b|\b(?:claude-code-contract|real-client|"
                    r"bypass-corpus|conventions|code-style-anchors|state-machines)\.md\b|"
                    r"\bbypass-corpus\b|\bissue \d+\b|\bmuse\b", re.I)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _rel(p: Path) -> str:
    return str(p.relative_to(REPO))


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_no_internal_jargon(page: Path) -> None:
    """No "seed 000", "product §6", design notes or issue numbers: a reader has none of them."""
    found = [f"{_rel(page)}:{n}: {m.group(0)}" for n, line in
             enumerate(page.read_text().splitlines(), 1) for m in JARGON.finditer(line)]
    assert [] == found


@pytest.mark.parametrize("page", [p for p in PAGES if p.suffix == ".md"], ids=_rel)
def test_links_point_into_the_repository(page: Path) -> None:
    """Every relative link names a file or folder of the repository."""
    missing = [target for target in LINK.findall(page.read_text())
               if "://" not in target and not target.startswith("mailto:")
               and not (page.parent / target).exists()]
    assert [] == missing


def test_cli_help_speaks_plain_words() -> None:
    """No help text of any command uses the design notes' jargon."""
    found = []
    for name in cli.COMMANDS:
        if name == "hook":
            continue
        text = smllm(name, "--help").stdout
        found += [f"smllm {name}: {m.group(0)}" for m in JARGON.finditer(text)]
    assert [] == found


def _rule_ids_of_smllm() -> tuple[set[str], set[str]]:
    """Every rule id smllm can name: the built-in rules, and each id its code assigns
    (``default.allow``, ``protect.self``, ``machine.fire``, ...): any string literal of
    the package shaped like one. Also the built-in rules' families (``fs``, ``git``...)."""
    shaped = re.compile(r"[a-z]+\.[a-z0-9]+(?:-[a-z0-9]+)*")
    defaults = (REPO / "src" / "smllm" / "data" / "policy_defaults.toml").read_text()
    ids = set(re.findall(r'^id = "([^"]+)"', defaults, re.M))
    families = {i.split(".", 1)[0] for i in ids}
    for path in (REPO / "src" / "smllm").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and shaped.fullmatch(node.value):
                ids.add(node.value)
    return ids, families


#: where a page names a rule: "rule: X", "(rule X)", "--rule X", '"rule": "X"', and the
#: backticked ids of a rule family (`fs.delete-outside`)
RULE_NAMED = re.compile(r'(?:\brules?:?\s+|--rule[= ]|"rule":\s*|\(rule\s+)[`"]?'
                        r"([a-z][a-z0-9_]*\.[a-z0-9][a-z0-9-]*)")


def test_every_rule_id_the_docs_name_exists() -> None:
    """A rule id in a page (an example's output, a table, a sample chain) is one smllm has,
    or one the page's own example policy defines."""
    known, families = _rule_ids_of_smllm()
    either = "|".join(sorted(families))
    backticked = re.compile(rf"`((?:{either})\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*)`")
    named, unknown = 0, []
    for page in PAGES:
        text = page.read_text()
        defined = set(re.findall(r'^\s*id\s*=\s*"([^"]+)"', text, re.M))
        for n, line in enumerate(text.splitlines(), 1):
            found = [m.group(1) for m in RULE_NAMED.finditer(line)]
            found += [m.group(1) for m in backticked.finditer(line)
                      if not (m.group(1).startswith("sys.") and hasattr(sys, m.group(1)[4:]))]
            named += len(found)
            unknown += [f"{_rel(page)}:{n}: {rule}" for rule in found
                        if rule not in known | defined]
    assert ([], True) == (unknown, named > 60)
