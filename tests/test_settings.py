"""smllm.setup.settings: locating, parsing, laying out and atomically writing settings files."""


from __future__ import annotations

import os
from pathlib import Path

import pytest

from smllm.base.errors import ConfigError
from smllm.setup import settings

LAYOUTS = [
    ('{"a": 1}\n', settings.Layout(None, True)),
    ('{"a": 1}', settings.Layout(None, False)),
    ('{\n  "a": 1\n}\n', settings.Layout("  ", True)),
    ('{\n    "a": 1\n}', settings.Layout("    ", False)),
    ('{\n\t"a": 1\n}\n', settings.Layout("\t", True)),
    ('{\n\n  "a": 1\n}\n', settings.Layout("  ", True)),
]


@pytest.mark.parametrize(("text", "layout"), LAYOUTS)
def test_detect_layout(text: str, layout: settings.Layout) -> None:
    """Indent and final newline are read from the text."""
    assert layout == settings.detect_layout(text)


@pytest.mark.parametrize("text", ['{"a": 1}\n', '{\n  "a": [\n    1\n  ]\n}\n',
                                  '{\n\t"a": {\n\t\t"b": "é"\n\t}\n}'])
def test_layout_dump_round_trips_canonical_text(text: str) -> None:
    """Dumping parsed data in the detected layout gives back the same text."""
    data = settings.parse(Path("x.json"), text)
    assert text == settings.detect_layout(text).dump(data)


PARSE_ERRORS = [
    ('{\n  "a": 1,\n  "b": \n}\n', "s.json:4: not valid JSON at column 1, near '}'"),
    ('{"a": 1,\n', "s.json:2: not valid JSON: it ends too early"),
    ("[]", "s.json:1: the top level must be a JSON object"),
    ('{"hooks": {"Stop": {}}}', "s.json:1: hooks.Stop must be a list of matcher groups"),
    ('{\n"hooks": {\n"Stop": [{"hooks": ["echo"]}]}}',
     "s.json:3: hooks.Stop[0] must be an object with a \"hooks\" list"),
]


@pytest.mark.parametrize(("text", "where_what"), PARSE_ERRORS)
def test_parse_errors_name_file_and_line(text: str, where_what: str) -> None:
    """Malformed settings raise ConfigError with `file:line` and the reason."""
    with pytest.raises(ConfigError) as info:
        settings.parse(Path("s.json"), text)
    assert where_what == f"{info.value.where}: {info.value.what}"


@pytest.mark.parametrize(("text", "data"), [("", {}), ("  \n", {}), ('{"x": null}', {"x": None})])
def test_parse_accepts_empty_and_plain_objects(text: str, data: dict[str, object]) -> None:
    """An empty file reads as {} (Claude Code treats it the same way)."""
    assert data == settings.parse(Path("s.json"), text)


def test_read_reports_undecodable_bytes(tmp_path: Path) -> None:
    """A file that is not UTF-8 is refused with its line."""
    path = tmp_path / "s.json"
    path.write_bytes(b'{\n"a": "\xff"}')
    with pytest.raises(ConfigError) as info:
        settings.read(path)
    assert (f"{path}:2", "not UTF-8 (byte 8)") == (info.value.where, info.value.what)


def test_write_atomic_only_when_bytes_change(tmp_path: Path) -> None:
    """Same bytes: no write (inode and mtime kept); new bytes: replaced, mode kept."""
    path = tmp_path / "s.json"
    path.write_text("{}\n")
    os.chmod(path, 0o640)
    before = path.stat()
    assert False is settings.write_atomic(path, "{}\n")
    assert (before.st_ino, before.st_mtime_ns) == (path.stat().st_ino, path.stat().st_mtime_ns)
    assert True is settings.write_atomic(path, '{"a": 1}\n')
    assert ('{"a": 1}\n', 0o640, ["s.json"]) == (path.read_text(), path.stat().st_mode & 0o777,
                                                 os.listdir(tmp_path))


def test_write_atomic_creates_parents_with_default_mode(tmp_path: Path) -> None:
    """A new file gets its folder and mode 0644 (what Claude Code itself writes)."""
    path = tmp_path / "a" / ".claude" / "settings.json"
    assert True is settings.write_atomic(path, "{}\n")
    assert 0o644 == path.stat().st_mode & 0o777


def test_write_atomic_writes_through_a_symlink(tmp_path: Path) -> None:
    """A settings file that is a symlink keeps being one; its target gets the new text."""
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text("{}\n")
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    assert True is settings.write_atomic(link, '{"a": 1}\n')
    assert (True, '{"a": 1}\n') == (link.is_symlink(), target.read_text())


SMLLM_COMMANDS = [
    ({"type": "command", "command": "/v/bin/python -I -m smllm hook PreToolUse"}, "PreToolUse"),
    ({"type": "command", "command": "'/my dir/python' -m smllm hook Stop"}, "Stop"),
    ({"type": "command",
      "command": "/v/bin/python -I -c 'from smllm.hooks import cli; cli()' SessionEnd"},
     "SessionEnd"),
    ({"command": "/usr/bin/python3 -m  smllm  hook SessionEnd"}, "SessionEnd"),
    ({"type": "command", "command": "python3 guard.py"}, None),
    ({"type": "command", "command": "echo -m smllm-hook"}, None),
    ({"type": "http", "url": "http://x", "command": "-m smllm hook Stop"}, None),
    ("not a dict", None),
]


@pytest.mark.parametrize(("hook", "event"), SMLLM_COMMANDS)
def test_smllm_event_of_recognises_only_our_commands(hook: object, event: str | None) -> None:
    """The command signature (`-c '…cli()' EVENT`, or the older `-m smllm hook EVENT`) is the
    mark of what install owns."""
    assert event == settings.smllm_event_of(hook)


@pytest.mark.parametrize(("scope", "tail"), [("project", ".claude/settings.json"),
                                              ("local", ".claude/settings.local.json")])
def test_settings_path_of_project_scopes(tmp_path: Path, scope: settings.Scope,
                                         tail: str) -> None:
    """Project and local files live in the project's .claude folder."""
    assert tmp_path / tail == settings.settings_path(scope, tmp_path)


def test_user_settings_honour_claude_config_dir(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """CLAUDE_CONFIG_DIR moves ~/.claude, as in Claude Code."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert tmp_path / "cfg" / "settings.json" == settings.settings_path("user")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tmp_path / ".claude" / "settings.json" == settings.settings_path("user")
