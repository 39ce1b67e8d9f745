"""The guarantees table of docs/security.md (guarantees x harnesses): every cell says how
the guarantee stands on that host and names at least one test, and every test it names
exists; the Copilot column agrees with what ``smllm doctor --harness copilot`` says."""

from __future__ import annotations

import re
from pathlib import Path

from smllm.setup import copilot_install

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "security.md"
SECTION = "## Guarantees by harness"
#: the rows (by their first words) and the columns every version of the table has
ROWS = ("journal before effect", "gate", "stop enforcement", "protected set", "resume")
HARNESSES = ("Claude Code", "Codex", "Copilot")
STANDING = ("holds", "enforced by the OS", "advisory")
TEST = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def table() -> tuple[list[str], list[list[str]]]:
    """The header cells and the rows of the table under :data:`SECTION`."""
    text = DOC.read_text()
    assert SECTION in text
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    return cells[0], cells[2:]


def test_every_guarantee_and_harness_has_its_place() -> None:
    header, rows = table()
    assert "guarantee" == header[0]
    assert set(HARNESSES) <= set(header[1:])
    assert list(ROWS) == [next(g for g in ROWS if r[0].startswith(g)) for r in rows]
    assert all(len(r) == len(header) for r in rows)


def test_every_cell_names_a_test_that_exists() -> None:
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


def test_the_copilot_column_is_what_doctor_says() -> None:
    header, rows = table()
    column = header.index("Copilot")
    said = {name: status for name, status, _ in copilot_install.GUARANTEES}
    for row in rows:
        name = next(g for g in ROWS if row[0].startswith(g))
        advisory = row[column].startswith("advisory")
        assert (said[name] == "warn") == advisory, name
