"""Every view names the agent CLI of a session another harness drove, read from one field of
its journal (``session.start``'s ``harness``): ``smllm sessions``, ``export`` (the stream
summary), ``ledger`` (its title), ``chain``, ``serve`` (the session list and page) and
``ship`` (the team store's sessions), for a Copilot and a Gemini CLI session alike. Claude
Code's sessions stay as they were."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import test_copilot_adapter as copilot
import test_gemini_adapter as gemini
from helpers import smllm
from pgserver import Server

sys.path.insert(0, str(Path(__file__).parent / "serve"))
from serve_world import start_viewer


def _copilot_session(tmp_path: Path, smllm_home: Path) -> tuple[str, Path]:
    """A Copilot session through its hooks: a call smllm escalates (denied on Copilot, its
    review closed as the host's refusal: an approval chain) and a safe one."""
    s = copilot.Session(tmp_path, smllm_home)
    s.answer("SessionStart", {"source": "new"})
    s.answer("UserPromptSubmit", {"prompt": "tidy up"})
    (s.project / "build").mkdir()
    assert s.tool("toolu_rm", "bash", {"command": "rm -rf build", "description": "x"})
    ls = {"command": "ls", "description": "list"}
    s.tool("toolu_ls", "bash", ls)
    s.done("toolu_ls", "bash", ls)
    s.answer("SessionEnd", {"reason": "complete"})
    return copilot.SID, s.project


def _gemini_session(tmp_path: Path, _smllm_home: Path) -> tuple[str, Path]:
    """The same session on Gemini CLI, through its hooks (which inherit SMLLM_HOME)."""
    s = gemini.Session(tmp_path)
    for event, fields in (("SessionStart", {"source": "startup"}),
                          ("UserPromptSubmit", {"prompt": "tidy up"})):
        assert 0 == s.hook(event, **fields).returncode
    (s.project / "build").mkdir()
    s.say("m1")
    assert s.tool("run_shell_command", {"command": "rm -rf build"})
    s.say("m2")
    ls = {"command": "ls"}
    s.tool("run_shell_command", ls)
    s.after("run_shell_command", ls)
    assert 0 == s.hook("SessionEnd", reason="exit").returncode
    return gemini.SID, s.project


SESSIONS = {"copilot": _copilot_session, "gemini": _gemini_session}


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


@pytest.mark.parametrize("harness", list(SESSIONS))
def test_the_local_views_name_the_harness(harness: str, tmp_path: Path,
                                          smllm_home: Path) -> None:
    sid, project = SESSIONS[harness](tmp_path, smllm_home)
    rows = [json.loads(x) for x in smllm("sessions", "--json", cwd=project).stdout.splitlines()]
    assert [(sid, harness)] == [(r["session_id"], r["harness"]) for r in rows]
    doc_path = tmp_path / "export.json"
    assert 0 == smllm("export", "--journal", sid, "--out", str(doc_path),
                      cwd=project).returncode
    assert harness == json.loads(doc_path.read_text())["sessions"][0]["harness"]
    ledger = smllm("ledger", "--journal", sid, cwd=project)
    assert ledger.stdout.startswith(f"audit ledger  {sid}  harness: {harness}  (")
    chain = smllm("chain", str(doc_path), cwd=project)
    assert 0 == chain.returncode, chain.stderr
    assert chain.stdout.splitlines()[0].endswith(f"rm -rf build  ({harness})")
    [data] = [json.loads(x) for x in smllm("chain", str(doc_path), "--json",
                                           cwd=project).stdout.splitlines()]
    assert harness == data["harness"]
    viewer = start_viewer(smllm_home)
    try:
        auth = f"?token={viewer.token}"
        listing = json.loads(_get(f"{viewer.base}/api/sessions{auth}"))
        assert [harness] == [r.get("harness") for r in listing["sessions"]]
        assert f"({harness})</span>" in _get(f"{viewer.base}/sessions{auth}")
        page = json.loads(_get(f"{viewer.base}/api/sessions/{sid}{auth}"))
        assert harness == page["summary"]["harness"]
        assert f'<dd class="harness">{harness}</dd>' in _get(
            f"{viewer.base}/sessions/{sid}{auth}")
    finally:
        viewer.stop()


@pytest.mark.parametrize("harness", list(SESSIONS))
def test_the_team_store_names_the_harness(harness: str, tmp_path: Path, smllm_home: Path,
                                          postgres: Server, store_db: str) -> None:
    sid, project = SESSIONS[harness](tmp_path, smllm_home)
    admin = postgres.url(store_db)
    assert 0 == smllm("store", "init", "--url", admin, cwd=project).returncode
    assert 0 == smllm("ship", "--to", admin, "--all", cwd=project).returncode
    rows = [json.loads(x) for x in smllm("sessions", "--store", admin, "--json",
                                         cwd=project).stdout.splitlines()]
    assert [(sid, harness)] == [(r["session_id"], r.get("harness")) for r in rows]
