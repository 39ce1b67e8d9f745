"""Issue 3 acceptance 2, 3 and 7: smllm as a Claude Code plugin, through the real CLI."""


from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from harness import Harness
from test_install_e2e import OTHER_HOOK, TWO_TOOLS, assert_journaled, assert_ran_side_by_side

pytestmark = pytest.mark.e2e

#: a python3 with neither smllm nor its dependencies: the "fresh machine" interpreter
SYSTEM_PATH = "/usr/bin:/bin"


def _fresh_machine_python() -> None:
    probe = subprocess.run(["python3", "-c", "import smllm"], env={"PATH": SYSTEM_PATH},
                           capture_output=True, check=False)
    assert 0 != probe.returncode, "python3 on /usr/bin must not have smllm for this test"


@pytest.mark.parametrize("target", [".", ".claude-plugin/plugin.json",
                                    ".claude-plugin/marketplace.json"])
def test_plugin_validate_strict(claude: Harness, plugin_clone: Path, target: str) -> None:
    """Acceptance 3: `claude plugin validate <clone> --strict` passes (plugin and marketplace)."""
    proc = claude.cli("plugin", "validate", str(plugin_clone / target), "--strict")
    assert (0, True) == (proc.returncode, "Validation passed" in proc.stdout), \
        proc.stdout + proc.stderr


def test_plugin_dir_hooks_journal_without_waiting_for_bootstrap(claude: Harness,
                                                               plugin_clone: Path,
                                                               tmp_path: Path) -> None:
    """--plugin-dir <clone>, python3 without smllm or deps, bootstrap impossible: hooks journal."""
    _fresh_machine_python()
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    run = claude.run("two tools", script=TWO_TOOLS, extra_args=["--plugin-dir", str(plugin_clone)],
                     env={"PATH": SYSTEM_PATH, "PIP_FIND_LINKS": str(empty)})
    assert (0, "Both done.") == (run.returncode, (run.result or {}).get("result")), run.describe()
    assert ["smllm"] == [p["name"] for p in (run.init or {}).get("plugins", [])
                         if p.get("source") == "smllm@inline"]
    assert_journaled(run)
    data = claude.home / ".claude" / "plugins" / "data"
    stamps = list(data.glob("*/venv/.smllm-ready-*"))
    assert [] == stamps  # every hook above ran on the stdlib hot path
    assert [] == [e for e in run.hook_outputs if e.get("exit_code") != 0]


def _wait_for(pred: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def test_marketplace_install_on_fresh_home(claude: Harness, plugin_clone: Path) -> None:
    """Acceptance 2: marketplace add + plugin install on a fresh HOME; hooks fire and journal;
    the private environment is bootstrapped in the background and then used."""
    _fresh_machine_python()
    env = {"PATH": SYSTEM_PATH}
    added = claude.cli("plugin", "marketplace", "add", str(plugin_clone), env=env)
    assert 0 == added.returncode, added.stdout + added.stderr
    installed = claude.cli("plugin", "install", "smllm@smllm", env=env)
    assert 0 == installed.returncode, installed.stdout + installed.stderr
    run = claude.run("two tools", script=TWO_TOOLS, env=env)
    assert 0 == run.returncode, run.describe()
    assert ["smllm@smllm"] == [p["source"] for p in (run.init or {}).get("plugins", [])
                               if p["name"] == "smllm"]
    assert_journaled(run)
    data = claude.home / ".claude" / "plugins" / "data"
    assert _wait_for(lambda: list(data.glob("*/venv/.smllm-ready-*")), 180), \
        [p.read_text() for p in data.glob("*/bootstrap.log")]
    (plugin_data,) = data.iterdir()
    (root,) = (claude.home / ".claude" / "plugins" / "cache").glob("smllm/smllm/*")
    doctor = subprocess.run([str(root / "hooks" / "launcher"), "doctor"], capture_output=True,
                            text=True, cwd=claude.project, check=False, env=claude.env({
                                **env, "CLAUDE_PLUGIN_ROOT": str(root),
                                "CLAUDE_PLUGIN_DATA": str(plugin_data)}))
    first = doctor.stdout.splitlines()[0]
    assert f"(python {plugin_data / 'venv' / 'bin' / 'python'})" in first, doctor.stdout
    again = claude.run("again", script=TWO_TOOLS, env=env)
    assert 0 == again.returncode, again.describe()
    assert_journaled(again)


def test_smllm_plugin_and_another_plugin_share_an_event(claude: Harness,
                                                        plugin_clone: Path) -> None:
    """Acceptance 7: the smllm plugin and another plugin's PreToolUse hook both run, in parallel."""
    other = claude.root / "other-plugin"
    (other / ".claude-plugin").mkdir(parents=True)
    (other / "hooks").mkdir()
    (other / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": "other", "version": "0.0.1", "description": "a neighbour",
         "author": {"name": "t"}}))
    (other / "hooks" / "other_hook.py").write_text(OTHER_HOOK)
    (other / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command", "timeout": 30,
                                      "command": 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/other_hook.py"'}]}]}}))
    run = claude.run("go", script=TWO_TOOLS, env={"SMLLM_PLUGIN_BOOTSTRAP": "0"},
                     extra_args=["--plugin-dir", str(plugin_clone), "--plugin-dir", str(other)])
    assert (0, "Both done.") == (run.returncode, (run.result or {}).get("result")), run.describe()
    assert_journaled(run)
    assert_ran_side_by_side(run, claude.project)
    assert not os.path.exists(claude.home / ".claude" / "plugins" / "data" / "smllm-inline" /
                              "venv")
