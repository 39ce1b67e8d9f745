"""The guarantees table of docs/security.md (guarantees x harnesses): every cell says how
the guarantee stands on that host and names at least one test, every test it names exists,
and the columns of the hosts whose doctor states them (Copilot, Gemini CLI) are what
``smllm doctor --harness NAME`` says on a project installed for that host."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from smllm.setup import DOCTORS, INSTALLS, doctor, install

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "security.md"
SECTION = "## Guarantees by harness"
#: the rows (by their first words) and the columns every version of the table has
ROWS = doctor.GUARANTEES
HARNESSES = ("Claude Code", "Codex", "Copilot", "Gemini CLI")
#: the columns doctor states, by the harness name ``--harness`` takes
STATED = {"Copilot": "copilot", "Gemini CLI": "gemini"}
#: how a guarantee stands (the longest first: a cell is read by the first that starts it)
STANDING = ("holds", "enforced by the OS", "advisory + tripwire", "advisory")
TEST = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def table() -> tuple[list[str], list[list[str]]]:
    """The header cells and the rows of the table under :data:`SECTION`."""
    text = DOC.read_text()
    assert SECTION in text
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    return cells[0], cells[2:]


def standing(cell: str) -> str:
    """How a cell says the guarantee stands: its words before the first ``(`` or ``:``
    (``advisory + tripwire across sessions``, ``holds``)."""
    return re.split(r"[(:]", cell, maxsplit=1)[0].strip().rstrip(",")


def test_every_guarantee_and_harness_has_its_place() -> None:
    """The table has a column per harness and the guarantees' rows in doctor's order."""
    header, rows = table()
    assert "guarantee" == header[0]
    assert set(HARNESSES) <= set(header[1:])
    assert list(ROWS) == [next(g for g in ROWS if r[0].startswith(g)) for r in rows]
    assert all(len(r) == len(header) for r in rows)


def test_every_cell_names_a_test_that_exists() -> None:
    """Each cell of each column starts with how the guarantee stands and names tests that
    exist."""
    header, rows = table()
    for row in rows:
        for harness, cell in zip(header[1:], row[1:], strict=True):
            where = f"{row[0][:30]!r} x {harness}"
            assert cell.startswith(STANDING), f"{where}: say how it stands: {STANDING}"
            named = TEST.findall(cell)
            assert named, f"{where}: names no test"
            for path, name in named:
                source = REPO / path
                assert source.is_file(), f"{where}: {path} does not exist"
                assert re.search(rf"^def {name}\(", source.read_text(), re.M), \
                    f"{where}: {path} has no {name}"


@pytest.mark.parametrize("column", list(STATED))
def test_the_column_is_what_doctor_says(column: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed for the host (its defaults, the tripwire armed), doctor says of each
    guarantee first what the cell says, and warns exactly where the cell says advisory."""
    harness = STATED[column]
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("COPILOT_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    host = importlib.import_module(INSTALLS[harness])
    host.apply(host.plan_install(host.resolve_target(str(project), False),
                                 *install.interpreter()))
    said = importlib.import_module(DOCTORS[harness]).guarantees(project)
    assert list(ROWS) == [name for name, _, _ in said]
    header, rows = table()
    at = header.index(column)
    for row, (name, status, text) in zip(rows, said, strict=True):
        cell = standing(row[at])
        assert (True, cell.startswith("advisory")) == (text.startswith(cell),
                                                        status == "warn"), (name, text)
