"""Issue 2 acceptance 7: a new user's fresh clone, README command 1, then a session's hooks."""


from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import REPO

pytestmark = pytest.mark.e2e
FLOW = Path(__file__).resolve().parent.parent / "fixtures" / "payloads" / "session_basic.json"


def _readme_command_1() -> str:
    """The first shell command in the README's first code block."""
    text = (REPO / "README.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()[0]


def test_fresh_clone_readme_command_then_hooks_write_the_journal(tmp_path: Path,
                                                                 wheelhouse: Path) -> None:
    """Clone → README command 1 → the installed hooks journal under ~/.local/share/smllm, private."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True)
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    command = _readme_command_1()
    assert command.startswith("./installer/install.sh ")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHON": os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    proc = subprocess.run(["bash", "-c", command.split(" ", 1)[0] + ' "$0"', str(project)],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert 0 == proc.returncode, proc.stdout + proc.stderr

    settings = json.loads((project / ".claude" / "settings.json").read_text())
    commands = {event: groups[0]["hooks"][0]["command"]
                for event, groups in settings["hooks"].items()}
    flow = json.loads(FLOW.read_text())
    old = os.umask(0o022)  # a typical user's umask: private modes must not depend on it
    try:
        for event, recorded in flow:
            payload = dict(recorded, cwd=str(project))
            run = subprocess.run(["/bin/sh", "-c", commands[event]], input=json.dumps(payload),
                                 cwd=project, env=dict(env, CLAUDE_PROJECT_DIR=str(project)),
                                 capture_output=True, text=True, timeout=60, check=False)
            assert (0, "") == (run.returncode, run.stderr), (event, run.stderr)
    finally:
        os.umask(old)

    sid = flow[0][1]["session_id"]
    day = time.strftime("%Y/%m/%d", time.gmtime())
    data = home / ".local" / "share" / "smllm"
    log = data / "sessions" / day / sid / "session.jsonl"
    assert log.is_file(), sorted(str(p) for p in data.rglob("*") if "venv" not in p.parts)
    kinds = [json.loads(line)["payload"].get("event", {}).get("kind")
             or json.loads(line)["payload_type"] for line in log.read_text().splitlines()]
    assert "session.start" == kinds[0]
    assert "session.end" == kinds[-1]
    assert 3 == kinds.count("side_effect_intent")
    for p in [data, data / "sessions", *(data / "sessions").rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert (str(p), 0o700 if p.is_dir() else 0o600) == (str(p), mode)
    verify = subprocess.run([str(data / "venv" / "bin" / "smllm"), "verify", sid], env=env,
                            capture_output=True, text=True, check=False)
    assert 0 == verify.returncode, verify.stdout + verify.stderr
