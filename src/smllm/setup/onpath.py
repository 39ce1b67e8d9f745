"""The plugin route's ``smllm`` command on PATH: what ``/smllm:cli`` does, once.

The plugin brings no ``smllm`` command to the shell (``export``, ``serve``, ``resume``...).
``/smllm:cli`` (``hooks/launcher @path DATA``) writes a two-line ``smllm`` script into the
plugin's data folder (``$CLAUDE_PLUGIN_DATA/bin/smllm``: it runs the plugin's launcher, so
the plugin's code and its private environment) and links it into the user's bin folder the
way ``installer/install.sh`` links the settings route's: ``$SMLLM_BIN_DIR``, else
``$XDG_BIN_HOME``, else ``~/.local/bin``, with the same marked line in ``~/.profile`` when
that folder is not on PATH. A link or file there that is not the plugin's is left alone:
the step stops and says why (the installer's link means the settings route is in use too).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from smllm.base import protected
from smllm.base.errors import InstallError

#: the line the installer and this step add to ~/.profile (the installer greps for it)
MARK = "# added by smllm's installer: the smllm command"
#: the first line after ``#!/bin/sh`` of the script this step writes (how doctor knows it)
HEADER = "# the smllm command of the Claude Code plugin (written by /smllm:cli)"


def bin_dir() -> Path:
    """Where the ``smllm`` link goes (as in installer/install.sh)."""
    found = os.environ.get("SMLLM_BIN_DIR") or os.environ.get("XDG_BIN_HOME")
    return Path(found) if found else Path.home() / ".local" / "bin"


def script_text(root: str, data: str) -> str:
    return (f"#!/bin/sh\n{HEADER}\nCLAUDE_PLUGIN_ROOT={shlex.quote(root)}\n"
            f"CLAUDE_PLUGIN_DATA={shlex.quote(data)}\n"
            "export CLAUDE_PLUGIN_ROOT CLAUDE_PLUGIN_DATA\n"
            'exec "$CLAUDE_PLUGIN_ROOT/hooks/launcher" "$@"\n')


def plugin_root_of(command: str) -> str | None:
    """The plugin folder a ``smllm`` command runs, if it is one this step wrote."""
    try:
        with open(os.path.realpath(command), encoding="utf-8") as fh:
            lines = fh.read(4096).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if lines[1:2] != [HEADER]:
        return None
    for line in lines:
        if line.startswith("CLAUDE_PLUGIN_ROOT="):
            words = shlex.split(line.partition("=")[2])
            return words[0] if words else None
    return None


def _on_path(folder: Path) -> bool:
    return str(folder) in os.environ.get("PATH", "").split(os.pathsep)


def _add_to_profile(folder: Path) -> str | None:
    """Append the marked PATH line to ~/.profile, and to ~/.bash_profile, ~/.bash_login or
    ~/.zprofile where they exist (as the installer does), unless there; the files changed,
    or None."""
    home = Path.home()
    shown = f"$HOME/{folder.relative_to(home)}" if home in folder.parents else str(folder)
    changed = []
    for name in (".profile", ".bash_profile", ".bash_login", ".zprofile"):
        profile = home / name
        if name != ".profile" and not profile.exists():
            continue
        try:
            if MARK in profile.read_text(encoding="utf-8", errors="replace"):
                continue
        except FileNotFoundError:
            pass
        with open(profile, "a", encoding="utf-8") as fh:
            fh.write(f'\n{MARK}\nexport PATH="{shown}:$PATH"\n')
        changed.append(f"~/{name}")
    return ", ".join(changed) or None


def plugin_data(root: str) -> str:
    """``$CLAUDE_PLUGIN_DATA`` of the plugin at ``root`` when Claude Code did not pass it:
    ``~/.claude/plugins/data/<plugin>-<marketplace>`` of the install that reads ``root``
    (its copy, or its marketplace folder read in place), else ``smllm-inline``
    (``--plugin-dir``)."""
    from smllm.setup import doctor, settings  # noqa: PLC0415 - the plugin files, this path only

    plugins = settings.claude_config_dir() / "plugins"
    for name in doctor.plugin_names():
        if doctor.reads_from(name) == os.path.realpath(root):
            plugin, _, market = name.partition("@")
            return str(plugins / "data" / f"{plugin}-{market}")
    return str(plugins / "data" / "smllm-inline")


def link(root: str, data: str) -> list[str]:
    """Write the plugin's ``smllm`` script and link it on PATH; what was done, in lines."""
    if not data:
        raise InstallError("the plugin's data folder is unknown ($CLAUDE_PLUGIN_DATA is unset)",
                           "run /smllm:cli inside Claude Code")
    script = Path(data) / "bin" / "smllm"
    script.parent.mkdir(parents=True, exist_ok=True)
    tmp = script.with_name(".smllm.tmp")
    tmp.write_text(script_text(root, data), encoding="utf-8")
    tmp.chmod(0o755)
    tmp.replace(script)
    folder = bin_dir()
    target = folder / "smllm"
    if target.is_symlink() or target.exists():
        current = os.path.realpath(target)
        if current != os.path.realpath(script) and plugin_root_of(str(target)) is None:
            raise InstallError(
                f"{target} exists and runs {current}, not this plugin (the smllm of "
                f"installer/install.sh? with both routes every hook runs twice)",
                "keep one route (smllm uninstall, or claude plugin uninstall), or set "
                "SMLLM_BIN_DIR to another folder on your PATH and run /smllm:cli again")
        target.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    target.symlink_to(script)
    protected.record_command(str(target))  # protected without consulting PATH
    out = [f"linked {target} -> {script} (the plugin at {root})"]
    if _on_path(folder):
        out.append(f"smllm is on your PATH ({folder}): run `smllm --help` in a shell")
    else:
        changed = _add_to_profile(folder)
        where = f"added {folder} to PATH in {changed}" if changed else \
            f"your profile already adds {folder} to PATH"
        out.append(f"{where} (new login shells); for this shell run: "
                   f'export PATH="{folder}:$PATH"')
    return out
