"""Store locations: platformdirs' on every platform, SMLLM_HOME, private permissions."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import platformdirs
import pytest

from helpers import base, hook
from smllm import journal
from smllm.base import paths
from smllm.base.errors import InvalidSessionId


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the stdlib path is Linux-only")
@pytest.mark.parametrize("xdg", [False, True])
def test_linux_locations_match_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            xdg: bool) -> None:
    """Without SMLLM_HOME, the stdlib computation equals platformdirs (with and without XDG_*)."""
    monkeypatch.delenv("SMLLM_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        if xdg:
            monkeypatch.setenv(var, str(tmp_path / var.lower()))
        else:
            monkeypatch.delenv(var, raising=False)
    assert Path(platformdirs.user_data_dir("smllm", appauthor=False)) == paths.data_dir()
    assert Path(platformdirs.user_state_dir("smllm", appauthor=False)) == paths.state_dir()
    assert Path(platformdirs.user_config_dir("smllm", appauthor=False)) == paths.config_dir()


STATE = [
    ("darwin", {}, "{home}/.local/state/smllm"),
    ("darwin", {"XDG_STATE_HOME": "{home}/st"}, "{home}/st/smllm"),
    ("win32", {"APPDATA": "{home}/AppData/Roaming"}, "{home}/AppData/Roaming/smllm"),
    ("win32", {}, "{home}/AppData/Roaming/smllm"),
    ("linux", {}, "{home}/.local/state/smllm"),
]


@pytest.mark.parametrize(("platform", "env", "expected"), STATE)
def test_audit_folder_is_seed_001s_on_every_platform(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, platform: str,
                                                     env: dict[str, str], expected: str) -> None:
    """smllm sessions and their audit: $XDG_STATE_HOME/smllm (~/.local/state/smllm) on Linux
    and macOS, %APPDATA%\\smllm on Windows (seed 001), not platformdirs' native folders."""
    monkeypatch.delenv("SMLLM_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_STATE_HOME", "APPDATA"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value.format(home=tmp_path))
    monkeypatch.setattr(sys, "platform", platform)
    assert (expected.format(home=tmp_path), expected.format(home=tmp_path) + "/audit") == (
        paths.state_root().replace("\\", "/"), str(paths.audit_dir()).replace("\\", "/"))


def test_journals_keep_platformdirs_data_folder_off_linux(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """Journals stay in platformdirs' data folder on macOS (~/Library/Application Support)."""
    monkeypatch.delenv("SMLLM_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(platformdirs, "user_data_dir",
                        lambda app, appauthor: f"{tmp_path}/Library/Application Support/{app}")
    assert f"{tmp_path}/Library/Application Support/smllm" == paths.data_root()


def test_smllm_home_holds_everything(smllm_home: Path) -> None:
    """SMLLM_HOME=DIR puts data, state and config under DIR."""
    assert (smllm_home, smllm_home, smllm_home) == (
        paths.data_dir(), paths.state_dir(), paths.config_dir())


def test_journal_is_private(smllm_home: Path) -> None:
    """Every directory the hooks create is 0700 and every file 0600."""
    old = os.umask(0o022)
    try:
        sid = "2d3c4b5a-6978-4a1b-9c8d-7e6f5a4b3c2d"
        assert hook("SessionStart", base("SessionStart", sid, source="startup")).returncode == 0
    finally:
        os.umask(old)
    log = journal.log_path(sid)
    assert log.is_relative_to(smllm_home / "sessions")
    for p in [smllm_home, *smllm_home.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert (p, 0o700 if p.is_dir() else 0o600) == (p, mode)


@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "a/b", "a\\b", "-rf", "x" * 129, "a\x00b",
                                 "é", "a..b"])
def test_unsafe_ids_are_refused(bad: str) -> None:
    """Ids that could escape the store or confuse a shell are refused."""
    with pytest.raises(InvalidSessionId):
        paths.check_id(bad)


def test_journal_path_is_dated_by_first_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """sessions/YYYY/MM/DD/<id>/session.jsonl, dated by the first record, stable afterwards."""
    monkeypatch.setenv("SMLLM_NOW", "1767603600000")  # 2026-01-05
    path = journal.log_path("abc-1", create=True)
    assert ("2026", "01", "05", "abc-1", "session.jsonl") == path.parts[-5:]
    monkeypatch.setenv("SMLLM_NOW", "1800000000000")  # a later day
    assert path == journal.log_path("abc-1", create=True)


def test_write_private_replaces_atomically(tmp_path: Path) -> None:
    """write_private: the new bytes, mode 0600 under a lax umask, and no temporary file left."""
    target = tmp_path / "state.json"
    target.write_text("old")
    old = os.umask(0o022)
    try:
        paths.write_private(target, b'{"new": true}')
    finally:
        os.umask(old)
    assert (b'{"new": true}', 0o600) == (target.read_bytes(),
                                         stat.S_IMODE(target.stat().st_mode))
    assert ["state.json"] == sorted(p.name for p in tmp_path.iterdir())


def test_write_private_failure_keeps_the_old_file(tmp_path: Path) -> None:
    """A write that cannot complete leaves the old file whole and no temporary behind."""
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(TypeError):
        paths.write_private(target, None)  # type: ignore[arg-type]
    assert ("old", ["state.json"]) == (target.read_text(),
                                       sorted(p.name for p in tmp_path.iterdir()))


@pytest.mark.parametrize("planted", ["link", "loose file"])
def test_write_private_never_writes_through_a_planted_temporary(tmp_path: Path,
                                                                planted: str) -> None:
    """A link or a 0666 file planted where write_private puts its temporary file is
    replaced, not written through: the target is a fresh 0600 file, the link's target is
    unchanged."""
    target = tmp_path / "state.json"
    victim = tmp_path / "victim"
    victim.write_text("mine")
    tmp = tmp_path / f".state.json.{os.getpid()}.tmp"
    if planted == "link":
        tmp.symlink_to(victim)
    else:
        tmp.write_text("stale")
        tmp.chmod(0o666)
    paths.write_private(target, b"{}")
    assert ("mine", b"{}", 0o600, False, ["state.json", "victim"]) == (
        victim.read_text(), target.read_bytes(), stat.S_IMODE(target.lstat().st_mode),
        target.is_symlink(), sorted(p.name for p in tmp_path.iterdir()))


@pytest.mark.parametrize(("config_dir", "root", "state"), [
    (None, "home/.claude", "home/.claude.json"),
    ("", "home/.claude", "home/.claude.json"),
    ("cc", "cc", "cc/.claude.json"),
])
def test_claude_codes_folders(tmp_path: Path, config_dir: str | None, root: str,
                              state: str) -> None:
    """Claude Code's user folder and state file: inside ``$CLAUDE_CONFIG_DIR`` when it is
    set, else ``~/.claude`` and ``~/.claude.json``."""
    env = {"HOME": str(tmp_path / "home")}
    if config_dir is not None:
        env["CLAUDE_CONFIG_DIR"] = str(tmp_path / config_dir) if config_dir else "  "
    old = os.environ.get("HOME")
    os.environ["HOME"] = env["HOME"]
    try:
        found = (paths.claude_root(env), paths.claude_json(env))
    finally:
        os.environ["HOME"] = old or ""
    assert (str(tmp_path / root), str(tmp_path / state)) == found
