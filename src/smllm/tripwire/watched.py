"""What the tripwire watches, and what of each file counts (its security-relevant view).

The watched files are the protected set's *files* (:mod:`smllm.base.protected`):

* a project's ``.claude/`` and ``.smllm/`` folders, every file in them (settings, agents,
  skills, commands, hooks scripts; the policy, configs and machines), and ``.mcp.json``;
* the user's Claude Code settings (``~/.claude/settings.json``) and the MCP servers of
  ``~/.claude.json``; smllm's user ``config.toml`` and ``policy.toml``; the hook
  executable; the ``smllm`` command where install recorded it (a link: its target);
* once smllm is installed for another host there (:data:`HOSTS`, the manifest's
  ``hosts``), that host's own files that decide whether smllm's hooks run
  (:func:`host_files`): Gemini CLI's ``.gemini/settings.json``, ``.geminiignore`` and
  ``~/.gemini/settings.json``; GitHub Copilot CLI's ``.github/hooks/smllm.json``,
  ``.github/copilot/settings.json``, the project's trust in ``~/.copilot/config.json``,
  ``~/.copilot/settings.json`` and ``~/.copilot/hooks/smllm.json``.

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
``gemini-settings``
    a Gemini CLI settings file, less what Gemini writes on a person's harmless choice
    (``ui``: the theme and the like; ``security.auth``: the sign-in method). Everything
    else (``hooks``, ``hooksConfig``, ``security.toolSandboxing``, ``tools``,
    ``mcpServers``…) counts.
``copilot``
    a Copilot CLI settings file: only what switches hooks off or adds some
    (``disableAllHooks``, ``hooks``) counts.
``copilot-trust:<project>``
    Copilot's ``config.json``, which Copilot rewrites for its own state (and rewrites
    ``trusted_folders`` as ``trustedFolders``): the same keys, and whether ``<project>`` is
    a trusted folder (Copilot skips an untrusted folder's hooks silently); another folder
    trusted meanwhile (a person's answer in another session) does not count.
``bytes``
    every byte counts (TOML, Markdown, the hook executable).
``document``
    every byte counts, but an empty file is no file (``.mcp.json``, which Claude Code reads
    as no servers either way; its sandbox creates it empty to mount a missing one
    read-only, measured on 2.1.332, and removes it in a later session).
``link``
    where the link points.

Slow path (the keeper's): imports what it needs.
"""

from __future__ import annotations

from smllm import tripwire
from smllm.base import digest, jsonfast, paths, protected
from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: folders of the project watched as trees (every file in them), and single files
PROJECT_TREES = (".claude", ".smllm")
#: the hosts besides Claude Code whose own files are watched where smllm is installed for
#: them (:func:`host_files`)
HOSTS = ("copilot", "gemini")
#: what a host itself writes into a settings file on a person's answer, by view: key ->
#: its inner keys the host writes (None: the whole key). Claude Code: "don't ask again" at
#: its permission prompt; Gemini CLI: /theme (and the other ``ui`` settings) and /auth
HOST_WRITTEN: dict[str, dict[str, tuple[str, ...] | None]] = {
    "settings": {"permissions": ("allow", "additionalDirectories")},
    "gemini-settings": {"ui": None, "security": ("auth",)},
}
#: the keys of ``~/.claude.json`` that start programs (top level and per project)
MCP_KEYS = ("mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
            "enableAllProjectMcpServers")
#: the keys of a Copilot CLI settings or config file that switch hooks off or add some
COPILOT_KEYS = ("disableAllHooks", "hooks")
#: the keys under which Copilot keeps its trusted folders (the documented one, its rewrite)
TRUST_KEYS = ("trusted_folders", "trustedFolders")
#: the views of files the host rewrites for its own state, of which only these keys count
#: (a restore puts back these and keeps the rest of the host's state)
KEPT_KEYS: dict[str, tuple[str, ...]] = {
    "claude-json": MCP_KEYS, "copilot": COPILOT_KEYS, "copilot-trust": COPILOT_KEYS}
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
    files = {os.path.join(project, p): "document" for p in protected.PROJECT_PARTS
             if p not in PROJECT_TREES}
    return trees, files


def user_files() -> dict[str, str]:
    """The user's watched files, each with its view."""
    out = {os.path.join(paths.claude_root(), "settings.json"): "settings",
           paths.claude_json(): "claude-json",
           paths.user_config_file(): "bytes",
           os.path.join(paths.config_root(), "policy.toml"): "bytes",
           protected.hook_executable(): "bytes",
           protected.python_hook(): "bytes"}
    for command in protected.recorded_commands():
        out[command] = "link"
    return out


def host_files(host: str, project: str | None) -> dict[str, str]:
    """``host``'s own files the tripwire watches where smllm is installed for it, each with
    its view: the project's (in its scope, ``project``) or the user's (None)."""
    if host == "gemini":
        from smllm.harness import gemini  # noqa: PLC0415 - the keeper's slow path only

        if project is None:
            return {os.path.join(gemini.gemini_home(), "settings.json"): "gemini-settings"}
        return {os.path.join(project, ".gemini", "settings.json"): "gemini-settings",
                os.path.join(project, ".geminiignore"): "bytes"}
    if host == "copilot":
        from smllm.harness import copilot  # noqa: PLC0415 - the keeper's slow path only

        home = copilot.copilot_home()
        if project is None:
            return {os.path.join(home, "settings.json"): "copilot",
                    os.path.join(home, "hooks", "smllm.json"): "bytes"}
        return {os.path.join(project, ".github", "hooks", "smllm.json"): "bytes",
                os.path.join(project, ".github", "copilot", "settings.json"): "copilot",
                os.path.join(home, "config.json"): "copilot-trust:" + project}
    return {}


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


def _head(data: bytes) -> bytes:
    """The ``//`` lines that open a file Copilot writes (its ``config.json`` is JSON with
    comments: "// This file is managed automatically.")."""
    end = 0
    for line in data.splitlines(keepends=True):
        if not line.lstrip().startswith(b"//"):
            break
        end += len(line)
    return data[:end]


def _json(data: bytes) -> Any:
    try:
        return jsonfast.loads(data[len(_head(data)):])
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
JSON_VIEWS = ("settings", "claude-json", "gemini-settings", "copilot", "copilot-trust")


def _name(kind: str) -> tuple[str, str]:
    """A view's name and its argument (``copilot-trust:/p`` -> ``("copilot-trust", "/p")``)."""
    name, _, arg = kind.partition(":")
    return name, arg


def host_state(kind: str) -> bool:
    """Is a file of view ``kind`` one its host rewrites for its own state (never restored
    over while half-written; a restore keeps the host's state)?"""
    return _name(kind)[0] in KEPT_KEYS


def trusted(doc: dict[str, Any]) -> list[str]:
    """The folders a Copilot ``config.json`` trusts, under either key."""
    return [f for key in TRUST_KEYS for f in doc.get(key) or [] if isinstance(f, str)]


def _without(doc: dict[str, Any], written: dict[str, tuple[str, ...] | None]
             ) -> dict[str, Any]:
    """``doc`` less what its host writes itself (:data:`HOST_WRITTEN`)."""
    kept = dict(doc)
    for key, inner in written.items():
        if inner is None:
            kept.pop(key, None)
        elif isinstance(kept.get(key), dict):
            kept[key] = {k: v for k, v in kept[key].items() if k not in inner}
            if not kept[key]:
                del kept[key]
    return kept


def _kept(doc: dict[str, Any], name: str, arg: str) -> dict[str, Any]:
    """What counts of a host's state file (:data:`KEPT_KEYS`)."""
    keys = KEPT_KEYS[name]
    view: dict[str, Any] = {k: doc.get(k) for k in keys if k in doc}
    projects = doc.get("projects")
    if name == "claude-json" and isinstance(projects, dict):
        view["projects"] = {p: {k: v.get(k) for k in keys if k in v}
                            for p, v in sorted(projects.items()) if isinstance(v, dict)
                            and any(k in v for k in keys)}
    if name == "copilot-trust":
        view["trusted"] = arg.rstrip("/") in {f.rstrip("/") for f in trusted(doc)}
    return view


def security_view(data: bytes | None, kind: str) -> bytes | None:
    """What of ``data`` counts, as canonical bytes (None: the file is absent). For a JSON
    view an absent or empty file counts as an empty document: Claude Code creating
    ``~/.claude.json`` with no MCP server, or ``settings.local.json`` holding only a
    person's "don't ask again", changes nothing that counts."""
    name, arg = _name(kind)
    if data == b"" and name in (*JSON_VIEWS, "document"):
        data = None  # an empty file: an empty document, or none
    if data is None and name not in JSON_VIEWS:
        return None
    if data is not None and (name in ("bytes", "document", "link")
                             or data.startswith((b"link:", b"unreadable:"))):
        return data
    doc = {} if data is None else _json(data)
    if not isinstance(doc, dict):
        return data  # not a JSON object: every byte counts
    if name in HOST_WRITTEN:
        return jsonfast.dumps_utf8(_sorted(_without(doc, HOST_WRITTEN[name])))
    return jsonfast.dumps_utf8(_sorted(_kept(doc, name, arg)))


def _with_trust(doc: dict[str, Any], folder: str, on: bool) -> dict[str, Any]:
    """``doc`` (a Copilot ``config.json``) trusting ``folder`` or not, the rest as it is."""
    out = dict(doc)
    for key in TRUST_KEYS:
        if isinstance(out.get(key), list):
            out[key] = [f for f in out[key] if not (isinstance(f, str)
                                                    and f.rstrip("/") == folder.rstrip("/"))]
    if on:
        key = next((k for k in reversed(TRUST_KEYS) if isinstance(out.get(k), list)),
                   TRUST_KEYS[0])
        out[key] = [*(out.get(key) or []), folder]
    return out


def merged(current: bytes | None, kept: bytes | None, kind: str) -> bytes | None:
    """The content that puts ``kept``'s view back while keeping the rest of ``current``:
    for a host's state file (:func:`host_state`), the host's other state stays (``kept``
    None: its counted keys go, and the file when nothing else is in it); any other view
    restores ``kept`` whole."""
    name, arg = _name(kind)
    if name not in KEPT_KEYS or current is None:
        return kept
    now, before = _json(current), {} if kept is None else _json(kept)
    if not isinstance(now, dict) or not isinstance(before, dict):
        return kept
    keys = KEPT_KEYS[name]
    out = {k: v for k, v in now.items() if k not in keys}
    out.update({k: before[k] for k in keys if k in before})
    found_now, found_before = now.get("projects"), before.get("projects")
    projects_now: dict[str, Any] = found_now if isinstance(found_now, dict) else {}
    projects_before: dict[str, Any] = found_before if isinstance(found_before, dict) else {}
    if name == "claude-json" and (projects_now or projects_before):
        projects = {}
        for project in {*projects_now, *projects_before}:
            entry = {k: v for k, v in (projects_now.get(project) or {}).items()
                     if k not in keys}
            old = projects_before.get(project) or {}
            entry.update({k: old[k] for k in keys if k in old})
            projects[project] = entry
        out["projects"] = projects
    if name == "copilot-trust":
        out = _with_trust(out, arg, _kept(before, name, arg)["trusted"])
    if kept is None and not out:
        return None  # the file held only what counts, and was not there: it goes
    return _head(current) + jsonfast.dumps_utf8(out) + b"\n"


def parses(data: bytes | None, kind: str) -> bool:
    """Is ``data`` what a view of ``kind`` can read: absent, not JSON-read, or a JSON
    document (bytes that do not parse may be a write the host has not finished)?"""
    return not data or _name(kind)[0] not in JSON_VIEWS or _json(data) is not None


def sha(data: bytes | None) -> str | None:
    return None if data is None else digest.sha256_hex(data)
