"""Issue 19, acceptance 3: a state machine's command guard runs its program in smllm's own
bubblewrap sandbox (``smllm.base.bwrap``), built from the one protected set, and fails
closed where no sandbox can run.

The project, the home folder and smllm's store of these tests live under ``/var/tmp``, not
``/tmp``: the sandbox gives the program a private ``/tmp``, which would hide them whatever
the mounts said, so only there do the read-only and hidden mounts show what they do.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from machine_project import Project, machine_yaml
from smllm.base import bwrap, credentials, osfast, paths, protected
from smllm.base.errors import ConfigError, SandboxUnavailable
from smllm.machine import catalog, guards, locations

EVENTS = "    check:\n      description: Fire when the check holds.\n"


def _guarded(run: str, expect: str = "pass") -> dict[str, str]:
    states = ("  A:\n    entry: { type: prompt, params: { text: \"Do A.\" } }\n"
              f"    on:\n      check:\n        target: B\n        guard: {{ type: command, "
              f"params: {{ run: {run!r}, expect: {expect} }} }}\n  B:\n    type: final\n")
    return {"m.smllm.yaml": machine_yaml(states.replace("'", '"'), events=EVENTS)}


@pytest.fixture
def outside(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch folder outside /tmp holding the home folder and smllm's store (HOME and
    SMLLM_HOME point there), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="smllm-guard-", dir="/var/tmp"))
    (root / "home").mkdir()
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("SMLLM_HOME", str(root / "smllm-home"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _mounts(args: list[str], root: Path) -> list[tuple[str, str]]:
    """(option, destination) of each mount of ``args`` under ``root``."""
    out = []
    i = 0
    while i < len(args):
        opt = args[i]
        width = {"--tmpfs": 1, "--bind-fd": 2, "--ro-bind-fd": 2, "--symlink": 2,
                 "--ro-bind": 2}.get(opt, 0)
        dest = args[i + width] if width else ""
        if dest.startswith(f"{root}/") or dest == str(root):
            out.append((opt, os.path.relpath(dest, root)))
        i += 1 + width
    return out


def test_the_mounts_come_from_the_one_protected_set(outside: Path) -> None:
    """What a check may not change is exactly the gate's protected set with the policy's
    sensitive paths; what it may not see is smllm's data and state (journals, key, audit),
    (and config), Claude Code's transcripts and the credential stores. In the project every entry is
    bound from a descriptor of the very file (read-only where protected), a link is
    recreated as a link, a missing protected path stays absent (so creating it lasts only
    for the run), and a folder holding a protected path is rebuilt the same way."""
    project = outside / "proj"
    for folder in (".smllm", ".claude", "tests", "config", "secrets"):
        (project / folder).mkdir(parents=True)
    (project / ".smllm" / "policy.toml").write_text(
        'sensitive = ["config/prod.toml", "secrets/later.env"]\n')
    for name in ("config/prod.toml", "config/dev.toml", "secrets/kept.txt", "README"):
        (project / name).write_text("x\n")
    (project / "link").symlink_to(outside / "home")
    home = outside / "home"
    (home / ".ssh").mkdir()
    (home / ".netrc").write_text("machine x password y\n")
    Path(paths.state_root(), "key").mkdir(parents=True)
    readonly, hidden = guards.boundary(str(project))
    assert protected.with_policy(str(project), ["config/prod.toml", "secrets/later.env"]) \
        == readonly
    assert {paths.data_root(), paths.state_root(), paths.config_root(), *protected.unreadable(),
            *(str(home / s) for s in credentials.HOME_STORES)} == set(hidden)
    plan = bwrap.plan(str(project), readonly, hidden)
    try:
        assert [("--ro-bind", "home/.netrc"), ("--tmpfs", "home/.ssh"),
                ("--tmpfs", "smllm-home"),
                ("--tmpfs", "proj"), ("--ro-bind-fd", "proj/.claude"),
                ("--ro-bind-fd", "proj/.smllm"), ("--bind-fd", "proj/README"),
                ("--tmpfs", "proj/config"), ("--bind-fd", "proj/config/dev.toml"),
                ("--ro-bind-fd", "proj/config/prod.toml"), ("--symlink", "proj/link"),
                ("--tmpfs", "proj/secrets"), ("--bind-fd", "proj/secrets/kept.txt"),
                ("--bind-fd", "proj/tests")] == _mounts(plan.args, outside)
        assert plan.args[:12] == list(bwrap.BASE)
        bound = {plan.args[i + 2]: int(plan.args[i + 1]) for i, a in enumerate(plan.args)
                 if a in ("--bind-fd", "--ro-bind-fd")}
        assert {p: os.lstat(p).st_ino for p in bound} == {
            p: os.fstat(fd).st_ino for p, fd in bound.items()}
        at = plan.args.index(str(project / "link"))
        assert str(outside / "home") == plan.args[at - 1]
    finally:
        plan.close()


def _listener() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    return server, server.getsockname()[1]


HOSTILE = """\
r=tests/report.txt; : > $r
try() {{ if ( eval "$2" ) >/dev/null 2>&1; then echo "$1 done" >> $r; else echo "$1 refused" >> $r; fi; }}
try policy 'echo "mode = \\"yolo\\"" >> .smllm/policy.toml'
try settings 'echo "{{}}" > .claude/settings.json'
try mcp 'echo "{{}}" > .mcp.json'
try link 'echo x > link/marker'
try home 'echo x > "$HOME/marker"'
try ssh 'cat "$HOME/.ssh/id_rsa"'
try key 'cat "$SMLLM_HOME/key/journal.key"'
try journals 'ls "$SMLLM_HOME/sessions" | grep -q .'
try network 'python3 -c "import socket; socket.create_connection((\\"127.0.0.1\\", {port}), 2)"'
try unix 'python3 -c "import socket; socket.socket(socket.AF_UNIX).connect(\\"tests/host.sock\\")"'
try signal 'kill -0 {pid}'
try project 'echo cached > tests/cache.txt'
echo new > newfile
cat "$HOME/.ssh/id_rsa" "$SMLLM_HOME/key/journal.key" 2>/dev/null
exit 1
"""


def test_a_hostile_check_changes_and_reads_nothing_it_must_not(outside: Path) -> None:
    """Issue 19, acceptance 2 in small: the check the agent wrote (a failing "test" that
    attacks) runs and fails as expected (the event is accepted), writes inside the project,
    but cannot change the project's .smllm/ or .claude/, create .mcp.json, write through a
    link or into the home folder, read a credential store or smllm's key, list the
    journals, reach the network or a Unix socket of the host (one in the project, here) or
    see a process outside; none of its secrets reaches the audit, and what it created at the
    project's top level is gone."""
    project = Project(outside / "proj", _guarded("sh tests/hostile.sh", "fail"))
    root = project.root
    (root / "tests").mkdir()
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    (root / ".smllm" / "policy.toml").write_text("")
    (root / "link").symlink_to(outside / "home")
    (outside / "home" / ".ssh").mkdir()
    (outside / "home" / ".ssh" / "id_rsa").write_text("SSH-SECRET-91f\n")
    key = Path(paths.key_root(), "journal.key")
    key.parent.mkdir(parents=True)
    key.write_text("KEY-SECRET-3c7\n")
    Path(paths.data_root(), "sessions", "2026").mkdir(parents=True)
    server, port = _listener()
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(root / "tests" / "host.sock"))
    unix.listen(1)
    (root / "tests" / "hostile.sh").write_text(HOSTILE.format(project=root, port=port,
                                                              pid=os.getpid()))
    before = {p: p.read_bytes() for p in (root / ".smllm").iterdir()}
    before[root / ".claude" / "settings.json"] = (root / ".claude" /
                                                  "settings.json").read_bytes()
    try:
        _, key_, _ = project.fire(None, "enter", stateMachine="m")
        ok, _, text = project.fire(key_, "check")
    finally:
        server.close()
        unix.close()
    report = dict(line.split() for line in (root / "tests" / "report.txt").read_text()
                  .splitlines())
    # .mcp.json is written in the run's own private top folder, and gone afterwards
    assert {"policy": "refused", "settings": "refused", "mcp": "done", "link": "refused",
            "home": "refused", "ssh": "refused", "key": "refused", "journals": "refused",
            "network": "refused", "unix": "refused", "signal": "refused",
            "project": "done"} == report
    assert (True, "cached\n") == (ok, (root / "tests" / "cache.txt").read_text())
    assert before == {p: p.read_bytes() for p in before}
    assert [] == [p.name for p in (root, outside / "home")
                  for p in p.iterdir() if p.name in ("newfile", ".mcp.json", "marker")]
    audit = (Path(locations.audit_path(key_))).read_text()
    assert ("SSH-SECRET" in text, "SSH-SECRET" in audit, "KEY-SECRET" in audit) == (
        False, False, False)
    assert "bwrap" == locations.read_audit(key_)[-1]["trace"][0]["sandbox"]


def test_a_link_swapped_in_while_the_sandbox_is_prepared_redirects_nothing(
        outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's race: right after smllm lists the project, a sandboxed process replaces
    tests/ with a link to a folder outside it. The entry is opened without following links,
    so the sandbox recreates the link (read-only where it leads) instead of binding its
    target writable: the check's write through it fails."""
    project = outside / "proj"
    (project / "tests").mkdir(parents=True)
    target = outside / "home" / "target"
    target.mkdir()
    listdir = os.listdir
    swapped: list[bool] = []

    def racing(fd: int) -> list[str]:
        names = listdir(fd)
        if not swapped:
            swapped.append(True)
            (project / "tests").rename(project / "tests.real")
            (project / "tests").symlink_to(target)
        return names

    monkeypatch.setattr(osfast, "listdir", racing)  # bwrap calls os through it
    readonly, hidden = guards.boundary(str(project))
    done = bwrap.run(["/bin/sh", "-c", "echo x > tests/x"], bwrap=bwrap.find(),
                     project=str(project), readonly=readonly, hidden=hidden,
                     env=dict(os.environ), timeout=30)
    monkeypatch.undo()
    assert (True, 2, False) == (bool(swapped), done.code, (target / "x").exists()), done.output
    assert b"Read-only file system" in done.output


def _refusal(project: Project) -> tuple[bool, str, dict[str, object]]:
    _, key, _ = project.fire(None, "enter", stateMachine="m")
    ok, _, text = project.fire(key, "check")
    return ok, text, locations.read_audit(key)[-1]


def test_without_bwrap_the_check_does_not_run(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """No bwrap where smllm looks (simulated: the places it looks are empty), a guard that
    expects its check to fail does not hold: the check never ran, and the reason says what
    to install."""
    monkeypatch.setattr(bwrap, "CANDIDATES", (str(tmp_path / "none" / "bwrap"),))
    project = Project(tmp_path / "p", _guarded("touch ran; exit 1", "fail"))
    ok, text, line = _refusal(project)
    missing = (f"bubblewrap (bwrap) is not installed ({tmp_path / 'none' / 'bwrap'}) "
               f"(install it: apt-get install -y bubblewrap)")
    assert (False, "refused", f"guard failed: check `touch ran; exit 1` did not run: {missing}",
            False) == (ok, line["outcome"], line["reason"], (project.root / "ran").exists())
    assert ("none", None) == (line["trace"][0]["sandbox"], line["trace"][0]["exit"])
    assert missing in text


FAKE_BWRAP = """#!/bin/sh
echo "bwrap: No permissions to create a new namespace, likely because the kernel does not \
allow non-privileged user namespaces." >&2
exit 1
"""


def test_a_bwrap_that_cannot_make_namespaces_fails_closed(tmp_path: Path,
                                                          smllm_home: Path) -> None:
    """A bwrap that cannot set the sandbox up exits 1 before the check runs: with a guard
    that expects failure, that exit must not pass for the check's (`smllm fire`, with the
    bwrap named by the user's config)."""
    fake = tmp_path / "bwrap"
    fake.write_text(FAKE_BWRAP)
    fake.chmod(stat.S_IRWXU)
    smllm_home.mkdir(parents=True, exist_ok=True)
    (smllm_home / "config.toml").write_text(f'[guards]\nbwrap = "{fake}"\n')
    project = Project(tmp_path / "p", _guarded("exit 1", "fail"))
    entered = project.cli("fire", "enter", "--param", "stateMachine=m", "--json")
    key = json.loads(entered.stdout)["session"]
    proc = project.cli("fire", "--session", key, "check")
    assert (1, "refused") == (proc.returncode, locations.read_audit(key)[-1]["outcome"])
    assert ("guard failed: check `exit 1` did not run: bubblewrap could not set up the "
            "sandbox (bwrap: No permissions to create a new namespace, likely because the "
            "kernel does not allow non-privileged user namespaces.) (it needs user "
            "namespaces") in proc.stdout


def test_a_bwrap_that_cannot_start_fails_closed(tmp_path: Path, smllm_home: Path) -> None:
    """A file named as bwrap that the system cannot run: the guard fails, saying so."""
    fake = tmp_path / "bwrap"
    fake.write_bytes(b"\x00not a program\n")
    fake.chmod(stat.S_IRWXU)
    smllm_home.mkdir(parents=True, exist_ok=True)
    (smllm_home / "config.toml").write_text(f'[guards]\nbwrap = "{fake}"\n')
    ok, _, line = _refusal(Project(tmp_path / "p", _guarded("exit 1", "fail")))
    assert (False, f"guard failed: check `exit 1` did not run: cannot start {fake}: Exec "
                   "format error (install it: apt-get install -y bubblewrap)") == (
        ok, line["reason"])


def test_no_filter_for_an_unknown_architecture() -> None:
    """The Unix-socket filter is written per architecture; on another the check fails closed."""
    with pytest.raises(SandboxUnavailable) as info:
        bwrap.seccomp_filter("riscv64")
    assert "no system-call filter for programs on riscv64 (smllm knows x86_64, aarch64)" == \
        info.value.what
    assert 88 == len(bwrap.seccomp_filter("x86_64")) == len(bwrap.seccomp_filter("aarch64"))


def test_no_sandbox_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off Linux smllm has no sandbox for checks: finding one fails, saying how to opt out."""
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(SandboxUnavailable) as info:
        bwrap.find("/usr/bin/bwrap")
    assert ("no sandbox for programs smllm runs on darwin (smllm uses bubblewrap, on Linux)",
            "run the agent on Linux, or opt out in smllm's user config: [guards] sandbox = "
            "false") == (info.value.what, info.value.fix)


def test_a_broken_policy_fails_the_check(tmp_path: Path) -> None:
    """The sensitive paths come from the policy: while it cannot be loaded, nothing runs."""
    project = Project(tmp_path / "p", _guarded("touch ran", "pass"))
    (project.root / ".smllm" / "policy.toml").write_text("mode = \n")
    ok, _, line = _refusal(project)
    assert (False, False) == (ok, (project.root / "ran").exists())
    assert "the policy cannot be loaded, so the paths it protects are unknown" in str(
        line["reason"])


def test_the_users_opt_out_runs_the_check_bare(tmp_path: Path, smllm_home: Path) -> None:
    """`[guards] sandbox = false` in smllm's user config runs the check without a sandbox
    (a write outside the project lands), and the trace says so."""
    smllm_home.mkdir(parents=True, exist_ok=True)
    (smllm_home / "config.toml").write_text("[guards]\nsandbox = false\n")
    marker = tmp_path / "outside-marker"
    project = Project(tmp_path / "p", _guarded(f"touch {marker}", "pass"))
    _, key, _ = project.fire(None, "enter", stateMachine="m")
    ok, _, _ = project.fire(key, "check")
    assert (True, True, "off") == (ok, marker.exists(),
                                   locations.read_audit(key)[-1]["trace"][0]["sandbox"])


def test_guards_settings_belong_to_the_users_config_only(tmp_path: Path) -> None:
    """Issue 19: the opt-out of the guards' sandbox is read from smllm's user config; a
    project's config that sets [guards] is an error, so nobody believes it took effect."""
    path = tmp_path / ".smllm" / "config.toml"
    path.parent.mkdir()
    path.write_text("[machines]\nfiles = []\n[guards]\nsandbox = false\n")
    with pytest.raises(ConfigError) as info:
        catalog.read_config(str(path))
    assert ("[guards] is read from smllm's user config only, never a project's",
            f"move it to {paths.user_config_file()}") == (info.value.what, info.value.fix)
    assert (True, None) == guards.settings()
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[guards]\nsandbox = false\nbwrap = "/opt/bwrap"\n')
    assert (False, "/opt/bwrap") == guards.settings()
    user.write_text('[guards]\nsandbox = "no"\n')
    with pytest.raises(ConfigError) as info:
        guards.settings()
    assert (str(user), "[guards] sandbox must be true or false") == (info.value.where,
                                                                     info.value.what)
