"""Every view names the agent CLI of a session another harness drove, read from one field of
its journal (``session.start``'s ``harness``): ``smllm sessions``, ``export`` (the stream
summary), ``ledger`` (its title), ``chain``, ``serve`` (the session list and page) and
``ship`` (the team store's sessions). Claude Code's sessions stay as they were."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

from helpers import smllm
from pgserver import Server
from test_copilot_adapter import SID, Session

sys.path.insert(0, str(Path(__file__).parent / "serve"))
from serve_world import start_viewer


def _copilot_session(tmp_path: Path, smllm_home: Path) -> Session:
    """A Copilot session through its hooks: a call smllm escalates (denied on Copilot, its
    review closed as the host's refusal: an approval chain) and a safe one."""
    s = Session(tmp_path, smllm_home)
    s.answer("SessionStart", {"source": "new"})
    s.answer("UserPromptSubmit", {"prompt": "tidy up"})
    (s.project / "build").mkdir()
    assert s.tool("toolu_rm", "bash", {"command": "rm -rf build", "description": "x"})
    ls = {"command": "ls", "description": "list"}
    s.tool("toolu_ls", "bash", ls)
    s.done("toolu_ls", "bash", ls)
    s.answer("SessionEnd", {"reason": "complete"})
    return s


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode()


def test_the_local_views_name_the_harness(tmp_path: Path, smllm_home: Path) -> None:
    s = _copilot_session(tmp_path, smllm_home)
    rows = [json.loads(x) for x in smllm("sessions", "--json", env=s.env, cwd=s.project).stdout.splitlines()]
    assert [(SID, "copilot")] == [(r["session_id"], r["harness"]) for r in rows]
    doc_path = tmp_path / "export.json"
    assert 0 == smllm("export", "--journal", SID, "--out", str(doc_path),
                      env=s.env, cwd=s.project).returncode
    assert "copilot" == json.loads(doc_path.read_text())["sessions"][0]["harness"]
    ledger = smllm("ledger", "--journal", SID, env=s.env, cwd=s.project)
    assert ledger.stdout.startswith(f"audit ledger  {SID}  harness: copilot  (")
    chain = smllm("chain", str(doc_path), env=s.env, cwd=s.project)
    assert 0 == chain.returncode, chain.stderr
    assert chain.stdout.splitlines()[0].endswith("rm -rf build  (copilot)")
    [data] = [json.loads(x) for x in smllm("chain", str(doc_path), "--json",
                                           env=s.env, cwd=s.project).stdout.splitlines()]
    assert "copilot" == data["harness"]
    viewer = start_viewer(smllm_home)
    try:
        auth = f"?token={viewer.token}"
        listing = json.loads(_get(f"{viewer.base}/api/sessions{auth}"))
        assert ["copilot"] == [r.get("harness") for r in listing["sessions"]]
        assert "(copilot)</span>" in _get(f"{viewer.base}/sessions{auth}")
        page = json.loads(_get(f"{viewer.base}/api/sessions/{SID}{auth}"))
        assert "copilot" == page["summary"]["harness"]
        assert '<dd class="harness">copilot</dd>' in _get(f"{viewer.base}/sessions/{SID}{auth}")
    finally:
        viewer.stop()


def test_the_team_store_names_the_harness(tmp_path: Path, smllm_home: Path,
                                          postgres: Server, store_db: str) -> None:
    s = _copilot_session(tmp_path, smllm_home)
    admin = postgres.url(store_db)
    assert 0 == smllm("store", "init", "--url", admin, env=s.env, cwd=s.project).returncode
    assert 0 == smllm("ship", "--to", admin, "--all", env=s.env, cwd=s.project).returncode
    rows = [json.loads(x) for x in smllm("sessions", "--store", admin, "--json",
                                         env=s.env, cwd=s.project).stdout.splitlines()]
    assert [(SID, "copilot")] == [(r["session_id"], r.get("harness")) for r in rows]
