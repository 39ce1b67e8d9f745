"""Issue 3 acceptance 6: each slash command, run through the real CLI, shows the model the
real output of the smllm command behind it."""


from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness import Harness, Run
from test_install_e2e import TWO_TOOLS, assert_journaled

pytestmark = pytest.mark.e2e

NO_BOOTSTRAP = {"SMLLM_PLUGIN_BOOTSTRAP": "0"}


def _plugin_run(claude: Harness, clone: Path, prompt: str, mode: str = "default",
                **kw: object) -> Run:
    """Slash commands run in `default` mode: only their allowed-tools let the step run."""
    return claude.run(prompt, extra_args=["--plugin-dir", str(clone)], env=NO_BOOTSTRAP,
                      permission_mode=mode, **kw)  # type: ignore[arg-type]


def _direct(claude: Harness, clone: Path, *args: str) -> str:
    """What the launcher prints for ``@show ARGS`` outside Claude Code."""
    proc = subprocess.run([str(clone / "hooks" / "launcher"), "@show", *args],
                          capture_output=True, text=True, cwd=claude.project, check=False,
                          env=claude.env({**NO_BOOTSTRAP, "CLAUDE_PLUGIN_ROOT": str(clone)}))
    assert 0 == proc.returncode, proc.stderr
    return proc.stdout + proc.stderr


def _prior_session(claude: Harness, clone: Path) -> str:
    prior = _plugin_run(claude, clone, "two tools", mode="acceptEdits", script=TWO_TOOLS)
    assert 0 == prior.returncode, prior.describe()
    assert_journaled(prior)
    return prior.session_id


#: slash command -> (its arguments, the launcher view that must produce the same text)
COMMANDS = {
    "verify": ("{sid}", ("verify", "{sid}")),
    "ledger": ("{sid}", ("@ledger", "{sid}")),
    "status": ("", ("status",)),
    "audit": ("", ("@audit",)),
    "doctor": ("", ("doctor",)),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_slash_command_output_reaches_the_model(claude: Harness, plugin_clone: Path,
                                                name: str) -> None:
    """/smllm:NAME: every line the smllm command prints is in the model's request."""
    args, view = COMMANDS[name]
    sid = _prior_session(claude, plugin_clone) if "{sid}" in args else ""
    run = _plugin_run(claude, plugin_clone, f"/smllm:{name} {args.format(sid=sid)}".strip(),
                      script=[{"text": "Shown."}])
    assert (0, "Shown.", 1) == (run.returncode, (run.result or {}).get("result"),
                                len(run.requests)), run.describe()
    expected = _direct(claude, plugin_clone, *(v.format(sid=sid) for v in view))
    lines = [line for line in expected.splitlines() if line.strip()]
    assert lines, expected
    assert [] == [line for line in lines if not run.model_saw(line)], run.requests[-1]


def test_export_command_writes_the_session_and_shows_its_path(claude: Harness,
                                                             plugin_clone: Path) -> None:
    """/smllm:export --journal SID --out F: the model sees F, and F is that session's export."""
    sid = _prior_session(claude, plugin_clone)
    out = claude.project / "exported.json"
    run = _plugin_run(claude, plugin_clone, f"/smllm:export --journal {sid} --out {out}",
                      script=[{"text": "Shown."}])
    assert (0, 1) == (run.returncode, len(run.requests)), run.describe()
    assert run.model_saw(str(out))
    assert sid in json.dumps(json.loads(out.read_text()))
    bare = _plugin_run(claude, plugin_clone, "/smllm:export", script=[{"text": "Shown."}])
    (written,) = claude.project.glob("trajectory-*.json")
    assert (0, True) == (bare.returncode, bare.model_saw(str(written))), bare.describe()
