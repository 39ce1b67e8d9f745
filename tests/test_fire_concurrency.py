"""Concurrent fires (acceptance 5): no audit line lost, no state corrupted."""


from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from machine_project import Project
from smllm.machine import engine, locations, session

N = 12


def test_concurrent_fires_lose_nothing(tmp_path: Path) -> None:
    """N `smllm fire` processes at once on one session: N audit lines, state = replay."""
    project = Project(tmp_path / "p")
    _, key, _ = project.fire(None, "enter", stateMachine="fix")
    env = {**os.environ, "SMLLM_SESSION": key}
    events = [("yield", "--param", f"note=n{i}") if i % 3 else ("fixed",) for i in range(N)]
    procs = [subprocess.Popen([sys.executable, "-m", "smllm", "fire", *ev, "--json"],
                              cwd=project.root, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for ev in events]
    outs = [p.communicate(timeout=120) for p in procs]
    replies = [json.loads(o[0]) for o in outs]
    lines = locations.read_audit(key)
    raw = Path(locations.audit_path(key)).read_text().splitlines()
    state, machines = session.location(key)
    replayed = engine.replay(key, lines, machines)
    assert (N + 1, N + 1) == (len(lines), len(raw))
    assert [0 if ev[0] == "yield" else 1 for ev in events] == [p.returncode for p in procs]
    assert sorted(ln["reply"] for ln in lines[1:]) == sorted(
        "sha256:" + hashlib.sha256(r["text"].encode()).hexdigest() for r in replies)
    assert {k: v for k, v in state.items() if k != "auditSize"} == {
        k: v for k, v in replayed.items() if k != "auditSize"}
    assert ["fix"] == [i["machine"] for i in state["instances"].values()]


def test_concurrent_binds_make_one_session_per_host(tmp_path: Path) -> None:
    """SessionStart racing for the same host session binds it once."""
    project = Project(tmp_path / "p")
    body = json.dumps({"session_id": "cc-9", "cwd": str(project.root),
                       "hook_event_name": "SessionStart", "source": "startup"}) + "\n"
    procs = [subprocess.Popen([sys.executable, "-m", "smllm", "hook", "SessionStart"],
                              cwd=project.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        p.communicate(body, timeout=120)
    keys = locations.all_keys()
    assert (1, ["bind"]) == (len(keys), [ln["call"] for ln in locations.read_audit(keys[0])])
