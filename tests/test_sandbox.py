"""`smllm install` configures Claude Code's Bash sandbox around smllm's protected set (issue 10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.helpers import smllm as run_smllm

from smllm.base import credentials

#: every credential store of smllm.base.credentials, as the sandbox settings spell them
CREDENTIALS = [f"~/{store}" for store in credentials.HOME_STORES]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    proj = tmp_path / "proj"
    proj.mkdir()
    return proj


def _settings(project: Path) -> dict[str, object]:
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert isinstance(data, dict)
    return data


def test_install_writes_the_sandbox_with_the_protected_set(project: Path, smllm_home: Path) -> None:
    """The block: on, no per-call escape, the protected set read-only, credentials hidden,
    no network."""
    (project / ".smllm").mkdir()
    (project / ".smllm" / "policy.toml").write_text('sensitive = ["deploy/keys"]\n')
    assert 0 == run_smllm("install", "--project", str(project)).returncode
    box = _settings(project)["sandbox"]
    home = Path(os.environ["HOME"])
    unreadable = ["/" + str(p) for p in [
        smllm_home / "key", smllm_home / "tripwire", smllm_home / "locks",
        smllm_home / "sessions", smllm_home / "index.sqlite3", smllm_home / "index.sqlite3-wal",
        smllm_home / "index.sqlite3-shm", home / ".claude" / "projects"]]
    expected_deny = ["/" + str(p) for p in [
        project / ".claude", project / ".smllm", project / ".mcp.json", home / ".claude",
        home / ".claude.json", smllm_home]]
    assert isinstance(box, dict)
    deny = box["filesystem"]["denyWrite"]
    assert ([True, False, ["smllm fire *", "smllm status", "smllm status *", "smllm reconcile *"], True,
             [*CREDENTIALS, *unreadable], []] ==
            [box["enabled"], box["allowUnsandboxedCommands"], box["excludedCommands"],
             box["failIfUnavailable"], box["filesystem"]["denyRead"],
             box["network"]["allowedDomains"]])
    assert expected_deny == deny[:6]
    assert "/" + str(project / "deploy" / "keys") == deny[-1]


def test_policy_choices_reach_the_sandbox(project: Path, smllm_home: Path) -> None:
    """[sandbox] read_credentials = true and allowed_domains are written as chosen; smllm's
    key, locks and journals and Claude Code's transcripts stay unreadable whatever the
    policy says, and install made smllm's hidden folders (0700) so the sandbox hides them
    from its first command on."""
    (project / ".smllm").mkdir()
    (project / ".smllm" / "policy.toml").write_text(
        '[sandbox]\nread_credentials = true\nallowed_domains = ["pypi.org"]\n')
    assert 0 == run_smllm("install", "--project", str(project)).returncode
    box = _settings(project)["sandbox"]
    assert isinstance(box, dict)
    home = Path(os.environ["HOME"])
    unreadable = ["/" + str(p) for p in [
        smllm_home / "key", smllm_home / "tripwire", smllm_home / "locks",
        smllm_home / "sessions", smllm_home / "index.sqlite3", smllm_home / "index.sqlite3-wal",
        smllm_home / "index.sqlite3-shm", home / ".claude" / "projects"]]
    assert (unreadable, ["pypi.org"]) == (box["filesystem"]["denyRead"],
                                          box["network"]["allowedDomains"])
    assert [0o700] * 3 == [(smllm_home / d).stat().st_mode & 0o777
                           for d in ("key", "locks", "sessions")]


def test_unknown_sandbox_key_is_a_policy_error(project: Path) -> None:
    """A typo in [sandbox] is refused with the keys that exist."""
    (project / ".smllm").mkdir()
    (project / ".smllm" / "policy.toml").write_text("[sandbox]\nread_credential = true\n")
    proc = run_smllm("policy", "check", cwd=project)
    assert ("unknown key 'read_credential' in [sandbox] (use one of: read_credentials, "
            "allowed_domains)") in proc.stdout + proc.stderr


def test_users_own_sandbox_is_merged_and_restored(project: Path) -> None:
    """A sandbox object already there keeps its paths and network choice; uninstall puts
    the file back byte for byte."""
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    original = ('{\n  "sandbox": {\n    "filesystem": {"allowWrite": ["~/.kube"], '
                '"denyWrite": ["./build"]},\n    "network": {"allowedDomains": ["x.org"]}\n  }\n}\n')
    path.write_text(original)
    assert 0 == run_smllm("install", "--project", str(project)).returncode
    box = _settings(project)["sandbox"]
    assert isinstance(box, dict)
    assert (["~/.kube"], "./build", ["x.org"], False) == (
        box["filesystem"]["allowWrite"], box["filesystem"]["denyWrite"][0],
        box["network"]["allowedDomains"], box["allowUnsandboxedCommands"])
    gone = run_smllm("uninstall", "--project", str(project))
    assert (0, original) == (gone.returncode, path.read_text())


@pytest.mark.parametrize(("flag", "hooks", "sandbox"), [
    ("--no-sandbox", True, False), ("--sandbox-only", False, True)])
def test_opt_out_and_sandbox_only(project: Path, flag: str, hooks: bool, sandbox: bool) -> None:
    """--no-sandbox writes hooks only; --sandbox-only (plugin route) the sandbox only."""
    assert 0 == run_smllm("install", "--project", str(project), flag).returncode
    data = _settings(project)
    assert (hooks, sandbox) == ("hooks" in data, "sandbox" in data)


def test_allow_domain_adds_hosts_and_later_installs_keep_them(project: Path) -> None:
    """--allow-domain: the hosts are added once each (case folded), a plain install keeps
    them, and the summary says which hosts the commands may reach."""
    proc = run_smllm("install", "--project", str(project), "--allow-domain", "PyPI.org",
                     "--allow-domain", "*.github.com", "--allow-domain", "pypi.org")
    assert ("  network: the agent's commands may reach pypi.org, *.github.com and no other "
            "host; to allow one more: smllm install --allow-domain DOMAIN") in \
        proc.stdout.splitlines(), proc.stdout
    assert 0 == run_smllm("install", "--project", str(project), "--no-sandbox").returncode
    assert 0 == run_smllm("install", "--project", str(project)).returncode
    box = _settings(project)["sandbox"]
    assert isinstance(box, dict)
    assert ["pypi.org", "*.github.com"] == box["network"]["allowedDomains"]


@pytest.mark.parametrize(("args", "message"), [
    (["--allow-domain", "https://pypi.org/simple"],
     "smllm: error: --allow-domain 'https://pypi.org/simple' is not a host name (give the "
     "domain alone, as in --allow-domain pypi.org or --allow-domain '*.github.com' (no "
     "scheme, port or path))\n"),
    (["--allow-domain", "pypi.org", "--no-sandbox"],
     "smllm: error: --allow-domain opens the sandbox's network, which --no-sandbox does not "
     "write (drop one of them)\n"),
])
def test_allow_domain_refuses_what_is_not_a_host(project: Path, args: list[str],
                                                  message: str) -> None:
    """A URL, or --no-sandbox with it: a usage error that says how to write it; no file."""
    proc = run_smllm("install", "--project", str(project), *args)
    assert (2, message, False) == (proc.returncode, proc.stderr,
                                   (project / ".claude").exists())
