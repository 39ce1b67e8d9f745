"""The shell transcripts of the audit and resume how-tos are run, and must match exactly.

Each ```console block is a list of ``$ command`` lines, each followed by its expected
output (stdout and stderr together). The commands of one page run in order, in one
fresh folder holding a ``tests`` link to this repository's tests, with ``smllm`` on
PATH and the test's own SMLLM_HOME. The folder's real path is shown in the page as the
path the page names (e.g. ``/tmp/audit-demo``); trailing spaces are not significant.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import console_transcript
from smllm.base.catalogue import ToolCall
from smllm.journal import reconcile

REPO = Path(__file__).resolve().parent.parent
DOCS = {
    "audit-a-session.md": "/tmp/audit-demo",
    "resume-after-a-crash.md": "/tmp/ledger_migration",
}


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip("\n").splitlines())


@pytest.mark.parametrize("page", list(DOCS))
def test_console_transcripts_match(page: str, tmp_path: Path) -> None:
    """Every command of the page prints exactly what the page shows."""
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests").symlink_to(REPO / "tests")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for var in ("NO_COLOR", "CLAUDECODE", "CLAUDE_CODE_SESSION_ID"):
        env.pop(var, None)
    steps = console_transcript(REPO / "docs" / "howto" / page)
    actual, expected = [], []
    for command, output in steps:
        proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        shown = (proc.stdout + proc.stderr).replace(str(work), DOCS[page])
        actual.append((command, _norm(shown)))
        expected.append((command, _norm(output)))
    assert len(steps) >= 5
    assert expected == actual


def test_doc_sample_matches_the_fixture() -> None:
    """The resume page's sample folder is the fixture the e2e test migrates."""
    sample = REPO / "tests" / "fixtures" / "ledger_migration"
    expected = ["MIGRATION.md", "gate.py", "migration_ledger.txt", "records", "verify.py"]
    assert expected == sorted(p.name for p in sample.iterdir())


def test_resume_page_quotes_the_hold_reason_exactly(tmp_path: Path) -> None:
    """The hold message shown on the resume page is the one PreToolUse gives for effect 504."""
    log = tmp_path / "session.jsonl"
    log.write_text("")
    unknown = {"504": {"sequence": 504, "operation": "tool:bash",
                       "input": {"command": "python3 gate.py rec_8"}}}
    (tmp_path / "state.json").write_text(json.dumps({"unknown": unknown}))
    call = ToolCall("Bash", {"command": "python3 gate.py rec_8"}, cwd=str(tmp_path),
                    project=str(tmp_path))
    page = (REPO / "docs" / "howto" / "resume-after-a-crash.md").read_text()
    quoted = page.split("```text\nsmllm holds this call", 1)[1].split("```", 1)[0]
    expected = " ".join(("smllm holds this call" + quoted).split())
    assert expected == reconcile.hold_reason(str(log), call)
