"""The Gemini CLI column of the guarantees table (docs/harness/gemini.md, in the form of
the guarantees x harnesses table of docs/security.md): every cell says how the guarantee
stands on Gemini and names tests that exist, and the column is what ``smllm doctor
--harness gemini`` says (a cell is advisory exactly where doctor warns)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from smllm.setup import gemini_doctor, gemini_install

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "harness" / "gemini.md"
SECTION = "## Guarantees"
ROWS = ("journal before effect", "gate", "stop enforcement", "protected set", "resume")
STANDING = ("holds", "enforced by the OS", "advisory")
TEST = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def column() -> dict[str, str]:
    """Guarantee (by its first words) -> the Gemini CLI cell."""
    body = DOC.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    assert ["guarantee", "Gemini CLI"] == cells[0]
    return {next(g for g in ROWS if row[0].startswith(g)): row[1] for row in cells[2:]}


def test_every_guarantee_has_a_cell_that_names_tests_that_exist() -> None:
    cells = column()
    assert list(ROWS) == list(cells)
    for name, cell in cells.items():
        assert cell.startswith(STANDING), f"{name}: say how it stands: {STANDING}"
        named = TEST.findall(cell)
        assert named, f"{name}: names no test"
        for path, test in named:
            source = REPO / path
            assert source.is_file(), f"{name}: {path} does not exist"
            assert re.search(rf"^def {test}\(", source.read_text(), re.M), \
                f"{name}: {path} has no {test}"


def test_the_column_is_what_doctor_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    """With install's sandbox and .geminiignore in place, doctor warns exactly for the
    guarantees the table calls advisory."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    python, flags = "/venv/bin/python", ["-I"]
    gemini_install.apply(gemini_install.plan_install(
        gemini_install.resolve_target(str(project), False), python, flags))
    said = {text.split(":", 1)[0]: status
            for status, text in gemini_doctor.guarantees(project)}
    assert list(ROWS) == list(said)
    for name, cell in column().items():
        assert (said[name] == "warn") == cell.startswith("advisory"), name
