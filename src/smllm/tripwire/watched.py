"""What the tripwire watches, and what of each file counts (its security-relevant view).

The watched files are the protected set's *files* (:mod:`smllm.base.protected`):

* a project's ``.claude/`` and ``.smllm/`` folders, every file in them (settings, agents,
  skills, commands, hooks scripts; the policy, configs and machines), and ``.mcp.json``;
* the user's Claude Code settings (``~/.claude/settings.json``) and the MCP servers of
  ``~/.claude.json``; smllm's user ``config.toml`` and ``policy.toml``; the hook
  executable; the ``smllm`` command where install recorded it (a link: its target).

A file's *view* is what the tripwire compares once its bytes changed:

``settings``
    a Claude Code settings file, less what Claude Code writes itself on a person's answer
    at its permission prompt: ``permissions.allow`` (measured on 2.1.332: "don't ask again"
    adds ``Bash(touch x *)`` there, in ``.claude/settings.local.json``) and
    ``permissions.additionalDirectories``. Everything else (``hooks``, ``disableAllHooks``,
    ``env``, ``sandbox``, ``enabledPlugins``, ``permissions.defaultMode``, ``deny`` and
    ``ask``, ``apiKeyHelper``, ``statusLine``…) is security-relevant. smllm's gate answers
    before Claude Code's allow rules matter: its deny and ask verdicts stand whatever they
    say.
``claude-json``
    ``~/.claude.json``, which Claude Code rewrites all the time: only the MCP servers it
    starts (``mcpServers`` at the top and per project, the per-project approvals of
    ``.mcp.json`` servers) count.
``bytes``
    every byte counts (``.mcp.json``, TOML, Markdown, the hook executable).
``link``
    where the link points.

Slow path (the keeper's): imports what it needs.
"""

from __future__ import annotations

import os

from smllm import tripwire
from smllm.base import digest, jsonfast, paths, protected

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: folders of the project watched as trees (every file in them), and single files
PROJECT_TREES = (".claude", ".smllm")
#: settings keys Claude Code itself writes on a person's answer at its prompt
HOST_WRITTEN = {"permissions": ("allow", "additionalDirectories")}
#: the keys of ``~/.claude.json`` that start programs (top level and per project)
MCP_KEYS = ("mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
            "enableAllProjectMcpServers")
#: a tree holding more files than this is watched at its top level only (a checkout kept
#: under .claude/, say): the tripwire stays cheap; the sandbox still protects all of it
MAX_TREE_FILES = 400
SETTINGS_NAMES = ("settings.json", "settings.local.json")
#: the view of a settings file holding only what Claude Code writes on a person's answer
EMPTY_VIEW = digest.sha256_hex(jsonfast.dumps_utf8({}))


def project_files(project: str) -> tuple[list[str], dict[str, str]]:
    """``(trees, files)`` of ``project``: the watched folders, and single files with
    their view."""
    assert set(PROJECT_TREES) <= set(protected.PROJECT_PARTS)
    trees = [os.path.join(project, t) for t in PROJECT_TREES]
    files = {os.path.join(project, p): "bytes" for p in protected.PROJECT_PARTS
             if p not in PROJECT_TREES}
    return trees, files


def user_files() -> dict[str, str]:
    """The user's watched files, each with its view."""
    out = {os.path.join(paths.claude_root(), "settings.json"): "settings",
           paths.claude_json(): "claude-json",
           paths.user_config_file(): "bytes",
           os.path.join(paths.config_root(), "policy.toml"): "bytes",
           protected.hook_executable(): "bytes"}
    for command in protected.recorded_commands():
        out[command] = "link"
    return out


def view_of(path: str, kind: str) -> str:
    """The view a file's tree entry takes: a settings file of ``.claude/`` is ``settings``."""
    if kind == "bytes" and os.path.basename(path) in SETTINGS_NAMES \
            and os.path.basename(os.path.dirname(path)) == ".claude":
        return "settings"
    return kind


def walk(tree: str) -> tuple[dict[str, list[int] | None], list[str]]:
    """Every folder of ``tree`` (with its signature) and every file in it (links and
    other non-folders included: a link planted there is a change too)."""
    dirs: dict[str, list[int] | None] = {tree: tripwire.signature(tree)}
    files: list[str] = []
    todo = [tree] if os.path.isdir(tree) and not os.path.islink(tree) else []
    while todo:
        folder = todo.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                dirs[entry.path] = tripwire.signature(entry.path)
                todo.append(entry.path)
            else:
                files.append(entry.path)
        if len(files) > MAX_TREE_FILES:
            top = [f for f in files if os.path.dirname(f) == tree]
            return {tree: dirs[tree]}, top
    return dirs, files


def read(path: str) -> bytes | None:
    """The bytes that stand for ``path``: its content, a link's target (``link`` view,
    or any link: a file replaced by a link is a change of what it is), None if absent."""
    try:
        if os.path.islink(path):
            return b"link:" + os.fsencode(os.readlink(path))
        fd = paths.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a FIFO, a device: its nature is what we record
        return b"unreadable:" + str(exc).encode("utf-8", "replace")
    return tripwire.read_all(fd)


def _json(data: bytes) -> Any:
    try:
        return jsonfast.loads(data)
    except (ValueError, RecursionError):
        return None


def _sorted(value: Any) -> Any:
    """``value`` with every object's keys in order (a canonical view to digest)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


#: the views read from a JSON document, where an absent file says what an empty one says
JSON_VIEWS = ("settings", "claude-json")


def security_view(data: bytes | None, kind: str) -> bytes | None:
    """What of ``data`` counts, as canonical bytes (None: the file is absent). For a JSON
    view an absent or empty file counts as an empty document: Claude Code creating
    ``~/.claude.json`` with no MCP server, or ``settings.local.json`` holding only a
    person's "don't ask again", changes nothing that counts."""
    if (data is None or data == b"") and kind in JSON_VIEWS:
        return jsonfast.dumps_utf8({})
    if data is None or kind in ("bytes", "link") or data.startswith((b"link:", b"unreadable:")):
        return data
    doc = _json(data)
    if not isinstance(doc, dict):
        return data  # not a JSON object: every byte counts
    if kind == "settings":
        kept = dict(doc)
        for key, inner in HOST_WRITTEN.items():
            if isinstance(kept.get(key), dict):
                kept[key] = {k: v for k, v in kept[key].items() if k not in inner}
                if not kept[key]:
                    del kept[key]
        return jsonfast.dumps_utf8(_sorted(kept))
    view: dict[str, Any] = {k: doc.get(k) for k in MCP_KEYS if k in doc}
    projects = doc.get("projects")
    if isinstance(projects, dict):
        view["projects"] = {name: {k: v.get(k) for k in MCP_KEYS if k in v}
                            for name, v in sorted(projects.items()) if isinstance(v, dict)
                            and any(k in v for k in MCP_KEYS)}
    return jsonfast.dumps_utf8(_sorted(view))


def merged(current: bytes | None, kept: bytes, kind: str) -> bytes:
    """The content that puts ``kept``'s view back while keeping the rest of ``current``:
    for ``claude-json``, Claude Code's other state stays; any other view restores
    ``kept`` whole."""
    if kind != "claude-json" or current is None:
        return kept
    now, before = _json(current), _json(kept)
    if not isinstance(now, dict) or not isinstance(before, dict):
        return kept
    out = {k: v for k, v in now.items() if k not in MCP_KEYS}
    out.update({k: before[k] for k in MCP_KEYS if k in before})
    found_now, found_before = now.get("projects"), before.get("projects")
    projects_now: dict[str, Any] = found_now if isinstance(found_now, dict) else {}
    projects_before: dict[str, Any] = found_before if isinstance(found_before, dict) else {}
    if projects_now or projects_before:
        projects = {}
        for name in {*projects_now, *projects_before}:
            entry = {k: v for k, v in (projects_now.get(name) or {}).items()
                     if k not in MCP_KEYS}
            old = projects_before.get(name) or {}
            entry.update({k: old[k] for k in MCP_KEYS if k in old})
            projects[name] = entry
        out["projects"] = projects
    return jsonfast.dumps_utf8(out) + b"\n"


def parses(data: bytes | None, kind: str) -> bool:
    """Is ``data`` what a view of ``kind`` can read: absent, not JSON-read, or a JSON
    document (bytes that do not parse may be a write the host has not finished)?"""
    return not data or kind not in JSON_VIEWS or _json(data) is not None


def sha(data: bytes | None) -> str | None:
    return None if data is None else digest.sha256_hex(data)
