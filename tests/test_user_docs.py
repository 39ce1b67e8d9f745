"""The user docs speak plain words and cite only what is in the repository."""


from __future__ import annotations

import re
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
