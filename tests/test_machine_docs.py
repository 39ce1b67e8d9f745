"""The shell transcripts of docs/machines/*.md, run for real and compared line by line.

A page declares its environment in ``<!-- smllm-doc: K=V ... -->``, writes the files of
its ```` ```LANG file=PATH ```` blocks into the project as it goes, and runs each ``$ ``
line of its ```` ```console ```` blocks in ``~/project`` of a scratch home, with the
clock at 2026-01-05 09:00 UTC plus one minute per command. ``[exit N]`` marks a failing
command; ``~`` stands for the scratch home.
"""


from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import allow_test_knobs

DOCS = Path(__file__).resolve().parent.parent / "docs" / "machines"
T0 = 1767603600000
FENCE = re.compile(r"^(\s*)```(\S*)(.*)$")
ENV = re.compile(r"<!-- smllm-doc: (.*?) -->")

Step = tuple[str, str, str]  # ("file", path, text) or ("run", command, expected)


def parse(page: str) -> tuple[dict[str, str], list[Step]]:
    """The page's environment and its steps, in order."""
    env = dict(kv.split("=", 1) for m in ENV.finditer(page) for kv in m.group(1).split())
    steps: list[Step] = []
    lines = page.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, info = m.group(1), m.group(2), m.group(3)
        body: list[str] = []
        i += 1
        while not lines[i].strip().startswith("```"):
            body.append(lines[i][len(indent):])
            i += 1
        i += 1
        file = re.search(r"file=(\S+)", info)
        if file:
            steps.append(("file", file.group(1), "\n".join(body) + "\n"))
        elif lang == "console":
            steps += _commands(body)
    return env, steps


def _commands(body: list[str]) -> list[Step]:
    out: list[Step] = []
    for line in body:
        if line.startswith("$ "):
            out.append(("run", line[2:], ""))
        else:
            kind, cmd, expected = out[-1]
            out[-1] = (kind, cmd, expected + line + "\n")
    return out


def play(env_extra: dict[str, str], steps: list[Step], root: Path) -> list[tuple[str, str]]:
    """Run the steps; return (expected, actual) per command, with ~ spelled out."""
    home = root / "home"
    project = home / "project"
    for folder in (project, home / ".local/share", home / ".local/state", home / ".config/smllm"):
        folder.mkdir(parents=True, exist_ok=True)
    allow_test_knobs(home / ".config/smllm")  # the hooks' session keys come from SMLLM_IDS
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SMLLM_", "XDG_", "CLAUDE"))}
    base.update(env_extra, HOME=str(home),
                PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    results = []
    n = 0
    for kind, what, text in steps:
        if kind == "file":
            path = project / what
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            continue
        env = {**base, "SMLLM_NOW": str(T0 + n * 60_000)}
        n += 1
        proc = subprocess.run(["bash", "-c", what], capture_output=True, text=True, env=env,
                              cwd=project, timeout=120, check=False)
        actual = proc.stdout + proc.stderr
        if actual and not actual.endswith("\n"):
            actual += "\n"
        if proc.returncode:
            actual += f"[exit {proc.returncode}]\n"
        results.append((text.replace("~/", f"{home}/"), actual))
    return results


PAGES = sorted(p.name for p in DOCS.glob("*.md") if "```console" in p.read_text())


@pytest.mark.parametrize("page", PAGES)
def test_transcripts_are_real(page: str, tmp_path: Path) -> None:
    """Every command on the page prints exactly what the page shows."""
    env, steps = parse((DOCS / page).read_text())
    if shutil.which("jq") is None and any("| jq " in s[1] for s in steps):
        pytest.skip("jq is not installed (the page pipes the audit into jq)")
    results = play(env, steps, tmp_path)
    assert [e for e, _ in results] == [a for _, a in results]


def test_pages_have_transcripts() -> None:
    """The tutorial and the audit page are both checked."""
    assert ["read-the-audit.md", "tutorial.md"] == PAGES
