"""Claude Code settings files: find them, parse them strictly, edit them surgically.

Claude Code reads ``~/.claude/settings.json`` (user), ``.claude/settings.json``
(project) and ``.claude/settings.local.json`` (local). A file that is not valid JSON,
or whose ``hooks`` has the wrong shape, is **silently ignored** in ``-p`` mode: none of
its hooks fire. So :func:`parse` refuses such a file with ``file:line`` and the caller
leaves it untouched.

Writing keeps the file's own layout where it can: key order is preserved, the indent
and the trailing newline are detected and reused (:class:`Layout`), and
:func:`write_atomic` replaces the file only when the bytes change.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from smllm.base import paths
from smllm.base.errors import ConfigError

Scope = Literal["user", "project", "local"]
SCOPES: tuple[Scope, ...] = ("user", "project", "local")
SILENT = "Claude Code silently ignores a malformed settings file: none of its hooks fire"


@dataclass(frozen=True)
class Layout:
    """How a JSON file was written: indent (None = one line) and a final newline."""

    indent: str | None = "  "
    newline: bool = True

    def dump(self, data: Any) -> str:
        if self.indent is None:
            text = json.dumps(data, ensure_ascii=False)
        else:
            text = json.dumps(data, ensure_ascii=False, indent=self.indent)
        return text + ("\n" if self.newline else "")


@dataclass(frozen=True)
class SettingsFile:
    """One settings file as read: its text (None when absent) and parsed content."""

    path: Path
    text: str | None
    data: dict[str, Any]
    layout: Layout

    @property
    def exists(self) -> bool:
        return self.text is not None


def claude_config_dir() -> Path:
    """``~/.claude``, or ``$CLAUDE_CONFIG_DIR`` (which Claude Code honours too)."""
    return Path(paths.claude_root())


def settings_path(scope: Scope, project: Path | None = None) -> Path:
    """The settings file of one scope (``project``/``local`` need the project folder)."""
    if scope == "user":
        return claude_config_dir() / "settings.json"
    base = (project or Path.cwd()).absolute() / ".claude"
    return base / ("settings.json" if scope == "project" else "settings.local.json")


def detect_layout(text: str) -> Layout:
    """The indent and final newline of a JSON document."""
    newline = text.endswith("\n")
    body = text.strip()
    if "\n" not in body:
        return Layout(None, newline)
    for line in body.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped:
            indent = line[: len(line) - len(stripped)]
            return Layout(indent or "  ", newline)
    return Layout("  ", newline)


def _line_of(text: str, needle: str) -> int:
    idx = text.find(needle)
    return text.count("\n", 0, idx) + 1 if idx >= 0 else 1


def _shape_error(path: Path, text: str, needle: str, what: str) -> ConfigError:
    return ConfigError(what, f"fix it by hand; {SILENT}", where=f"{path}:{_line_of(text, needle)}")


def _check_hooks(path: Path, text: str, hooks: Any) -> None:
    """The ``hooks`` shape Claude Code needs: {Event: [{matcher?, hooks: [{...}]}]}."""
    if not isinstance(hooks, dict):
        raise _shape_error(path, text, '"hooks"', "\"hooks\" must be an object of events")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise _shape_error(path, text, f'"{event}"',
                               f"hooks.{event} must be a list of matcher groups")
        for i, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not all(isinstance(h, dict) for h in inner):
                raise _shape_error(path, text, f'"{event}"',
                                   f"hooks.{event}[{i}] must be an object with a \"hooks\" list")


def parse(path: Path, text: str) -> dict[str, Any]:
    """Parse a settings file's text or raise ``ConfigError`` with ``file:line``."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        lines = text.splitlines()
        near = lines[exc.lineno - 1][max(exc.colno - 1, 0):][:20] \
            if exc.lineno <= len(lines) else ""
        what = (f"not valid JSON at column {exc.colno}, near {near!r}" if near.strip()
                else "not valid JSON: it ends too early")
        raise ConfigError(what,
                          f"fix or remove the file; {SILENT}",
                          where=f"{path}:{exc.lineno}") from None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a JSON object", f"fix the file; {SILENT}",
                          where=f"{path}:1")
    if "hooks" in data:
        _check_hooks(path, text, data["hooks"])
    return data


def read(path: Path) -> SettingsFile:
    """Read and parse one settings file; an absent file reads as ``{}``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return SettingsFile(path, None, {}, Layout())
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror}", "check its permissions",
                          where=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"not UTF-8 (byte {exc.start})", f"re-save it as UTF-8; {SILENT}",
                          where=f"{path}:{line}") from None
    return SettingsFile(path, text, parse(path, text), detect_layout(text))


def write_atomic(path: Path, text: str, *, mode: int | None = None) -> bool:
    """Replace ``path`` with ``text`` (temp file + fsync + rename); False if unchanged.

    A symlinked settings file (dotfile managers) is written through: its target is
    replaced and the link stays a link."""
    if path.is_symlink():
        path = path.resolve()
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
        current_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        current_mode = None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode if mode is not None else (current_mode or 0o644))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


#: ``<folder>/smllm-hook EVENT`` (current: the executable install writes), or the forms
#: earlier versions installed, still recognised so that uninstall and doctor know them:
#: ``python -c '... from smllm.hooks import cli; cli()' EVENT`` and ``python -m smllm hook EVENT``
#: the ``--home HOME`` an installed command ends with (smllm's home, pinned)
_HOME = r"(?:\s+--home\s+(?:'[^']*'|\S+))?"
_SMLLM_COMMAND = re.compile(
    r"(?:(?:^|\s)-m\s+smllm\s+hook|from smllm\.hooks import cli; cli\(\)')\s+(\w+)"
    + _HOME + r"\s*$")
_SMLLM_EXE = re.compile(r"^(?:'/[^']*/smllm-hook'|/\S*/smllm-hook)\s+(\w+)" + _HOME
                        + r"\s*$")


def smllm_event_of(hook: Any) -> str | None:
    """The event named by an ``smllm install`` hook entry (``.../smllm-hook EVENT``, or an
    older ``... cli()' EVENT``)."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return None
    command = str(hook.get("command", ""))
    match = _SMLLM_EXE.search(command) or _SMLLM_COMMAND.search(command)
    return match.group(1) if match else None


def is_executable_form(command: str) -> bool:
    """Is this hook command the short form (the executable ``smllm-hook`` and an event)?"""
    return _SMLLM_EXE.search(command) is not None
