"""The audit line is durable before the reply is printed; a crash never loses state."""


from __future__ import annotations

from pathlib import Path

import pytest

from machine_project import Project
from smllm.machine import locations

SIGKILL_RC = -9


@pytest.mark.parametrize(("fault", "lines_after", "state_after"), [
    ("audit-before-write", 2, "TRIAGE"),
    ("audit-after-fsync", 3, "FIX"),
])
def test_crash_around_the_audit_write(tmp_path: Path, fault: str, lines_after: int,
                                      state_after: str) -> None:
    """Killed before the line: nothing printed, nothing changed; after it: state follows."""
    project = Project(tmp_path / "p")
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    project.fire(key, "yield")
    proc = project.cli("fire", "--session", key, "reproduced", "--param", "bugId=BUG-3",
                       env={"SMLLM_FAULT": fault})
    status = project.cli("status", "--session", key, "--json")
    assert (SIGKILL_RC, "") == (proc.returncode, proc.stdout)
    assert lines_after == len(locations.read_audit(key))
    assert f'"state":"{state_after}"' in status.stdout


def test_torn_last_line_is_skipped_and_the_next_line_starts_fresh(tmp_path: Path) -> None:
    """A half-written last line is ignored by readers; the next call writes a whole line."""
    project = Project(tmp_path / "p")
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    with open(locations.audit_path(key), "a") as f:
        f.write('{"at":1,"session":')
    project.fire(key, "yield")
    calls = [(ln["call"], ln["event"]) for ln in locations.read_audit(key)]
    assert [("fire", "enter"), ("fire", "yield")] == calls


def test_audit_files_are_private(tmp_path: Path) -> None:
    """The audit and state files are 0600 in 0700 folders."""
    project = Project(tmp_path / "p")
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    audit = Path(locations.audit_path(key))
    modes = [oct(p.stat().st_mode & 0o777) for p in
             (audit, Path(locations.state_path(key)), audit.parent)]
    assert ["0o600", "0o600", "0o700"] == modes
