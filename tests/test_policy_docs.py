"""docs/policy.md is a test: its console transcripts run for real, its rule table is complete.

Files of ```` ```toml file=PATH ```` blocks are written into ``~/project`` as the page
goes; each ``$ `` line of a ```` ```console ```` block runs there with a scratch HOME
and SMLLM_HOME, and its output must match the page (``~`` is the scratch home;
``[exit N]`` marks a failing command).
"""


from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from smllm.gate import policy
from smllm.gate.policy import _compile, _policy_file

PAGE = Path(__file__).resolve().parent.parent / "docs" / "policy.md"
FENCE = re.compile(r"^```(\S*)(.*)$")


def steps(text: str) -> list[tuple[str, str, str]]:
    """("file", path, body) and ("run", command, expected output) in page order."""
    out: list[tuple[str, str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, info = m.group(1), m.group(2)
        body: list[str] = []
        i += 1
        while not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        file = re.search(r"file=(\S+)", info)
        if file:
            out.append(("file", file.group(1), "\n".join(body) + "\n"))
        elif lang == "console":
            for line in body:
                if line.startswith("$ "):
                    out.append(("run", line[2:], ""))
                else:
                    kind, cmd, expected = out[-1]
                    out[-1] = (kind, cmd, expected + line + "\n")
    return out


def test_console_transcripts(tmp_path: Path) -> None:
    """Every command of the page prints exactly what the page shows."""
    home = tmp_path / "home"
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    env = {"HOME": str(home), "SMLLM_HOME": str(tmp_path / "smllm"), "PATH": "/usr/bin:/bin"}
    ran = 0
    for kind, what, expected in steps(PAGE.read_text()):
        if kind == "file":
            target = project / what
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(expected)
            if "paranoid" not in expected:  # the page's one deliberately broken file
                assert [] == policy.check(project)
            continue
        argv = shlex.split(what)
        assert "smllm" == argv[0]
        proc = subprocess.run([sys.executable, "-m", "smllm", *argv[1:]], cwd=project,
                              env=env, capture_output=True, text=True, timeout=60, check=False)
        actual = (proc.stdout + proc.stderr).replace(str(home), "~")
        if proc.returncode:
            actual += f"[exit {proc.returncode}]\n"
        assert (what, expected) == (what, actual)
        ran += 1
        if what == "smllm policy check":  # the broken file has served its purpose
            (project / ".smllm" / "policy.toml").unlink()
    assert ran >= 5


def test_rule_table_lists_every_builtin_rule() -> None:
    """The page's table names every built-in rule with its default decision."""
    page = PAGE.read_text()
    documented = dict(re.findall(r"^\| `([a-z.-]+)` \| (allow|ask|deny) \|", page, re.M))
    expected = {rid: b["decision"] for rid, b in _compile.load_defaults().items()}
    assert expected == documented


@pytest.mark.parametrize("key", ["mode", "authority", "reviewers", "sensitive", "llm_judge",
                                 "command", "rule"])
def test_every_policy_key_is_documented(key: str) -> None:
    """Each top-level key of the format appears on the page."""
    assert key in _policy_file.TOP_KEYS
    assert f"`{key}`" in PAGE.read_text() or f"[{key}]" in PAGE.read_text()
