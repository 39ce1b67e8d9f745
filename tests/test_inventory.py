"""Issue 19 acceptance 1: every surface that runs outside the agent's sandbox has a row in
docs/security.md's inventory, naming the rule that makes it safe and the tests that show it.
A hook event, a harness, a CLI command, an excluded command, a reviewer, an MCP tool or a
command the hook runs itself, added without a row, fails here; so does a row naming a
surface that no longer exists or a test that does not."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from smllm import cli, hooks
from smllm.gate import protect
from smllm.gate.reviewers import REVIEWERS
from smllm.harness import journal_commands

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "security.md"
HEADING = "## What runs outside the sandbox (the inventory)"
#: surfaces of the host itself, named by hand (no registry of smllm's lists them)
HOST = ("host:file-tools", "host:mcp-servers", "host:hooks", "host:settings-commands",
        "host:plugins", "process:shipper", "process:bootstrap", "process:worker")
_SURFACE = re.compile(r"`([a-z-]+:[^`]+)`")
_TEST = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def rows() -> list[tuple[list[str], list[tuple[str, str]]]]:
    """(surfaces, tests) of each row of the inventory table."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.strip("|").split(" | ")
        out.append((_SURFACE.findall(cells[0]), _TEST.findall(cells[-1])))
    return out


def mcp_tools() -> list[str]:
    """The tools smllm's MCP server lists, asked of the real server over stdio."""
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "inventory", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    proc = subprocess.run([sys.executable, "-m", "smllm", "mcp"], capture_output=True,
                          text=True, timeout=60, check=True,
                          input="".join(json.dumps(r) + "\n" for r in requests))
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    listed = next(a for a in answers if a.get("id") == 2)
    return [t["name"] for t in listed["result"]["tools"]]


def required() -> set[str]:
    """Every surface smllm's registries name."""
    return {
        *(f"hook:{event}" for event in hooks.INSTALLED),
        *(f"harness:{name}" for name in hooks.HARNESSES if name != "claude"),
        *(f"command:{name}" for name in cli.COMMANDS),
        *(f"excluded:{pattern}" for pattern in protect.EXCLUDED_COMMANDS),
        *(f"reviewer:{name}" for name in REVIEWERS),
        *(f"mcp-tool:{name}" for name in mcp_tools()),
        *(f"in-hook:{name}" for name in journal_commands.COMMANDS),
        *HOST,
    }


def test_every_surface_has_a_row_and_every_row_a_surface() -> None:
    """The inventory lists exactly the surfaces the registries name (and the host's)."""
    listed = [s for surfaces, _ in rows() for s in surfaces]
    assert ([], [], []) == (
        sorted(required() - set(listed)), sorted(set(listed) - required()),
        sorted({s for s in listed if listed.count(s) > 1}))


@pytest.mark.parametrize(("surfaces", "tests"), rows(), ids=[r[0][0] for r in rows()])
def test_each_row_names_tests_that_exist(surfaces: list[str],
                                         tests: list[tuple[str, str]]) -> None:
    """Each row names at least one test, and each is a test function of a test file."""
    missing = [f"{path}::{name}" for path, name in tests
               if not (REPO / path).is_file()
               or f"def {name}(" not in (REPO / path).read_text(encoding="utf-8")]
    assert (True, []) == (bool(tests), missing), surfaces


def test_the_walk_sees_a_new_surface(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command added to the CLI without a row is found missing (the walk is live)."""
    monkeypatch.setitem(cli.COMMANDS, "teleport", cli.Command("teleport", "new"))
    listed = {s for surfaces, _ in rows() for s in surfaces}
    assert ["command:teleport"] == sorted(required() - listed)
