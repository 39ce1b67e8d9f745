"""``smllm install|uninstall|doctor --harness codex``: smllm's hooks for OpenAI's Codex CLI.

Codex 0.169 reads hooks from a ``hooks.json`` in Claude Code's shape: the project's
``.codex/hooks.json`` (loaded only in a trusted project) or ``$CODEX_HOME/hooks.json``
(``--user``; ``CODEX_HOME`` defaults to ``~/.codex``). It runs a hook only once it is
**trusted**: ``[hooks.state."<key>"] trusted_hash = "sha256:…"`` in the user's
``$CODEX_HOME/config.toml``, where the key is ``<hooks.json>:<event_snake>:<group>:<handler>``
and the hash is over the hook's configuration (:func:`trust_hash`, computed as Codex
computes it). An untrusted or edited hook is skipped *silently*: so install trusts exactly
the hooks it writes (never another one), and doctor fails when a hook of smllm is missing,
untrusted or modified.

Each hook runs ``<folder>/smllm-hook EVENT --harness codex`` (the executable Claude Code's
install writes, :mod:`smllm.setup.install`; the event first, so its start-up guard still
blocks with exit 2 and a reason when smllm cannot even import — Codex blocks on that too).
Uninstall removes exactly what install added: smllm's hook objects, and the trust tables
of the hooks it owned; a file install created and nothing else uses is removed, and a file
whose rest is unchanged gets its original bytes back.

>>> trust_hash("PreToolUse", "*", {"type": "command", "command": "x", "timeout": 300})
'sha256:ee47fc76d9e885cc5878fc687fcd3158313d2b8972c485adc63bdf504c032a9d'
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from smllm.base import paths
from smllm.base.errors import InstallError
from smllm.hooks import INSTALLED
from smllm.setup import install, settings

if TYPE_CHECKING:
    from collections.abc import Callable

Scope = Literal["project", "user"]
Status = Literal["ok", "info", "warn", "error"]

#: the flag that makes a hook command Codex's (after the event: see the module's text)
MARK = "--harness codex"
#: Codex's names of the events smllm handles (PostToolUseFailure does not exist there)
CODEX_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
                "PostToolUse", "Stop", "SubagentStart", "SubagentStop", "SessionEnd")
#: Codex clamps a SessionEnd hook to 3 s (and defaults it to 1 s)
SESSION_END_MAX = 3
#: the events whose matcher Codex ignores (and leaves out of the hash)
NO_MATCHER = frozenset({"user_prompt_submit", "stop", "pre_model_request",
                        "post_model_request"})
#: an smllm hook command for Codex: the executable's, or the inline ``python -c`` form's
_SMLLM_CODEX = re.compile(r"(?:smllm-hook|cli\(\))['\"]? ([A-Za-z]+) --harness codex\b")


def snake(event: str) -> str:
    """``PreToolUse`` -> ``pre_tool_use`` (Codex's name in keys and hashes)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, matcher: str | None, hook: dict[str, Any]) -> str:
    """The hash Codex 0.169 trusts a hook by: sha256 of the compact, key-sorted JSON of
    ``{event_name, matcher?, hooks: [{type, command, timeout, async, statusMessage?}]}``,
    the timeout defaulting to 600 s (SessionEnd: 1 s, at most 3 s)."""
    name = snake(event)
    raw = hook.get("timeout", hook.get("timeoutSec"))
    if name == "session_end":
        timeout = min(max(1, int(raw)), SESSION_END_MAX) if raw is not None else 1
    else:
        timeout = max(1, int(raw)) if raw is not None else 600
    norm: dict[str, Any] = {"type": "command", "command": hook.get("command"),
                            "timeout": timeout, "async": bool(hook.get("async", False))}
    if hook.get("statusMessage") is not None:
        norm["statusMessage"] = hook["statusMessage"]
    identity: dict[str, Any] = {"event_name": name, "hooks": [norm]}
    if matcher is not None and name not in NO_MATCHER:
        identity["matcher"] = matcher
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    value = os.environ.get("CODEX_HOME")
    return Path(value).expanduser().absolute() if value else Path.home() / ".codex"


@dataclass(frozen=True)
class Target:
    scope: Scope
    path: Path  # the hooks.json
    config: Path  # the user's config.toml, where trust lives

    @property
    def project(self) -> Path | None:
        return self.path.parent.parent if self.scope == "project" else None


def resolve_target(project: str | None, user: bool) -> Target:
    """The hooks file ``--project DIR | --user`` names, and the config.toml of trust."""
    config = codex_home() / "config.toml"
    root = install.project_root(project, user)
    if root is None:
        return Target("user", codex_home() / "hooks.json", config)
    return Target("project", root / ".codex" / "hooks.json", config)


def codex_event_of(hook: Any) -> str | None:
    """The event an ``smllm install --harness codex`` hook object runs, else None."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return None
    match = _SMLLM_CODEX.search(str(hook.get("command", "")))
    return match.group(1) if match else None


def command(event: str, python: str, flags: list[str]) -> str:
    """The hook command for ``event``: Claude Code's, with the harness named after it."""
    return install.hook_command(event, python, flags, MARK)


def desired(python: str, flags: list[str]) -> dict[str, dict[str, Any]]:
    """The matcher group install adds for each event."""
    out: dict[str, dict[str, Any]] = {}
    for event in CODEX_EVENTS:
        timeout, matcher = INSTALLED[event]
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command(event, python, flags),
                           "timeout": min(timeout, SESSION_END_MAX)
                           if event == "SessionEnd" else timeout}]
        out[event] = group
    return out


def loads(text: str) -> Any:
    """JSON, its ``//`` comment lines blanked (Copilot writes its config.json with some; a
    JSON string holds no newline, so such a line is never inside one, and an error's line
    number stays right)."""
    body = "".join("\n" if line.lstrip().startswith("//") else line
                   for line in text.splitlines(keepends=True))
    return json.loads(body) if body.strip() else {}


def read_text(path: Path) -> str | None:
    """A host's file as text (None when there is none); an :class:`InstallError` when it
    cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None


def read_object(path: Path) -> tuple[str | None, dict[str, Any]]:
    """A JSON object file's text and object (``(None, {})`` when there is none); an
    :class:`InstallError` at ``file:line`` when it cannot be read or is not one."""
    text = read_text(path)
    if text is None:
        return None, {}
    try:
        data = loads(text)
    except ValueError as exc:
        raise InstallError(f"{path}:{getattr(exc, 'lineno', 1)}: not JSON ({exc})",
                           "fix the file by hand, then run this again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}:1: not a JSON object",
                           "fix the file by hand, then run this again")
    return text, data


def _read_json(path: Path) -> tuple[str | None, dict[str, Any]]:
    text, data = read_object(path)
    if not isinstance(data.get("hooks", {}), dict):
        raise InstallError(f"{path}:1: not a Codex hooks file (an object with a 'hooks' "
                           f"object)", "fix the file by hand, then run this again")
    return text, data


def ours(path: Path, data: dict[str, Any]) -> dict[str, tuple[str, str | None, dict[str, Any]]]:
    """smllm's hooks in ``data`` (the hooks file at ``path``): trust key -> (event, matcher,
    hook object)."""
    found: dict[str, tuple[str, str | None, dict[str, Any]]] = {}
    for event, groups in (data.get("hooks") or {}).items():
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, dict):
                continue
            for hi, hook in enumerate(group.get("hooks") or []):
                if codex_event_of(hook) is not None:
                    found[f"{path}:{snake(event)}:{gi}:{hi}"] = (event, group.get("matcher"),
                                                                 hook)
    return found


def strip(data: dict[str, Any], event_of: Callable[[Any], str | None] | None = None
          ) -> dict[str, Any]:
    """``data`` without smllm's hooks (``event_of``: which hook objects are smllm's, by
    default Codex's; a group, an event or ``hooks`` only when removing ours left it
    empty)."""
    mine = codex_event_of if event_of is None else event_of
    out = copy.deepcopy(data)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = []
        for group in hooks[event]:
            kept = [h for h in group.get("hooks", []) if mine(h) is None]
            if kept or not group.get("hooks"):
                groups.append({**group, "hooks": kept})
        if groups or not hooks[event]:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks and data.get("hooks"):
        del out["hooks"]
    return out


# ------------------------------------------------------------------ config.toml (trust)


def _quoted(key: str) -> str:
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header(key: str) -> str:
    """The table header install writes for ``key``'s trust."""
    return f"[hooks.state.{_quoted(key)}]"


def _load_toml(path: Path, text: str) -> dict[str, Any]:
    from smllm.base import tomlread  # noqa: PLC0415 - install and doctor only

    try:
        return tomlread.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path}: not valid TOML ({exc})",
                           "fix the file by hand (Codex does not start with it either)"
                           ) from None


def trusted(config: Path) -> dict[str, Any]:
    """``[hooks.state]`` of the user's config.toml: key -> its table."""
    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    state = (_load_toml(config, text).get("hooks") or {}).get("state") or {}
    return state if isinstance(state, dict) else {}


def without_tables(text: str, keys: set[str]) -> str:
    """``text`` without the ``[hooks.state."K"]`` tables install wrote for ``keys`` (each
    from its header to the next header, and the blank line install put before it)."""
    headers = {header(k) for k in keys}
    out: list[str] = []
    skip = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            skip = stripped in headers
            if skip and out and not out[-1].strip():
                out.pop()
        if not skip:
            out.append(line)
    return "".join(out)


def with_trust(config: Path, text: str, entries: dict[str, str], drop: set[str]) -> str:
    """``text`` (config.toml) with one trust table per entry (key -> hash), after removing
    the tables of ``drop`` and of the entries; refuses a key trusted in some other form,
    which would make a duplicate table (Codex then does not start)."""
    body = without_tables(text, drop | set(entries))
    if body.strip():
        state = (_load_toml(config, body).get("hooks") or {}).get("state") or {}
        clash = sorted(k for k in entries if isinstance(state, dict) and k in state)
        if clash:
            raise InstallError(f"{config}: the trust of {clash[0]} is written in a form smllm "
                               f"did not write", "remove that [hooks.state] entry by hand, "
                               "then run this again")
    if body and not body.endswith("\n"):
        body += "\n"
    for key, value in entries.items():
        body += f'\n{header(key)}\ntrusted_hash = "{value}"\n'
    _load_toml(config, body)  # what Codex will read must parse
    return body


# ------------------------------------------------------------------ the sandbox profile

#: the permission profile install writes into the project's .codex/config.toml
PROFILE = "smllm"
#: the keys that choose Codex's sandbox; one already set is the user's choice, kept
SANDBOX_KEYS = ("default_permissions", "sandbox_mode")


def profile_text(project: Path) -> tuple[str, str]:
    """(the top-level line, the tables) of smllm's permission profile: the workspace as
    Codex's ``:workspace`` gives it, with smllm's protected set read-only to the agent's
    commands (the project's ``.smllm/`` and ``.claude/``, smllm's own folders)."""
    from smllm.base import protected  # noqa: PLC0415 - install only

    # a folder the profile names must exist: smllm's own are made (private) here, the
    # project's are named when they are there
    for folder in protected.own_folders():
        paths.ensure_private_tree(Path(folder), Path(folder))
    inside = "".join(f', "{part}" = "read"' for part in protected.PROJECT_PARTS
                     if (project / part).is_dir())
    own = "".join(f'{_quoted(folder)} = "read"\n'
                  for folder in dict.fromkeys(protected.own_folders())
                  if not Path(folder).is_relative_to(project))
    return (f'default_permissions = "{PROFILE}"  # smllm: its protected set read-only to the '
            f'agent\n',
            f'\n[permissions.{PROFILE}]\nextends = ":workspace"\n\n'
            f'[permissions.{PROFILE}.filesystem]\n'
            f'":project_roots" = {{ "." = "write"{inside} }}\n{own}')


def with_profile(path: Path, text: str | None, project: Path) -> tuple[str | None, str]:
    """``text`` (the project's .codex/config.toml) with smllm's permission profile, and a
    line for the summary; unchanged when it chooses a sandbox itself (or has the profile)."""
    body = text or ""
    data = _load_toml(path, body) if body.strip() else {}
    if PROFILE in (data.get("permissions") or {}):
        return text, f"sandbox: {path} has smllm's permission profile already"
    chosen = [key for key in SANDBOX_KEYS if key in data]
    if chosen:
        return text, (f"sandbox: {path} sets {chosen[0]} itself, so smllm's permission profile "
                      f"is not written (its protected set is then only as read-only as that "
                      f"sandbox makes it)")
    top, tables = profile_text(project)
    out = top + body
    if out and not out.endswith("\n"):
        out += "\n"
    out += tables
    _load_toml(path, out)
    return out, (f"sandbox: Codex's permission profile {PROFILE!r} in {path} keeps smllm's "
                 f"protected set read-only to the agent's commands")


def without_profile(text: str) -> str:
    """``text`` without what :func:`with_profile` added."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skip = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(f'default_permissions = "{PROFILE}"  # smllm'):
            continue
        if stripped.startswith("["):
            skip = stripped in (f"[permissions.{PROFILE}]", f"[permissions.{PROFILE}.filesystem]")
            if skip and out and not out[-1].strip():
                out.pop()
        if not skip:
            out.append(line)
    return "".join(out)


# ------------------------------------------------------------------ plans


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None
    after: str | None  # None: remove the file


class Located(Protocol):
    """What a plan needs of its target: the file it is about (and its scope)."""

    @property
    def scope(self) -> str: ...

    @property
    def path(self) -> Path: ...


@dataclass(frozen=True)
class Plan:
    """Whole-file changes to a host's files (Codex's here; Gemini CLI's too,
    :mod:`smllm.setup.gemini_install`), and the install record to keep."""

    action: Literal["install", "uninstall"]
    target: Located
    changes: tuple[Change, ...]
    summary: str
    record: dict[str, Any] | None
    executable: tuple[Path, str] | None = None

    @property
    def changed(self) -> bool:
        return self.executable is not None or any(c.before != c.after for c in self.changes)


def _record_path(target: Located, harness: str = "codex") -> Path:
    key = hashlib.sha256(f"{harness}:{target.path}".encode()).hexdigest()[:32]
    return paths.state_dir() / "installs" / f"{key}.json"


def load_record(target: Located, harness: str = "codex") -> dict[str, Any] | None:
    """What install recorded about ``target`` (the bytes it found), if anything."""
    try:
        rec = json.loads(_record_path(target, harness).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("path") == str(target.path) else None


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def plan_install(target: Target, python: str, flags: list[str], *, sandbox: bool = True
                 ) -> Plan:
    """Our hooks in the hooks file (replacing earlier ones of ours), each trusted; in a
    project (unless ``sandbox`` is False) smllm's permission profile."""
    before, data = _read_json(target.path)
    old_keys = set(ours(target.path, data))
    new = strip(data)
    hooks = new.setdefault("hooks", {})
    for event, group in desired(python, flags).items():
        hooks.setdefault(event, []).append(group)
    after = before if before is not None and json.loads(before) == new else _dump(new)
    owned = ours(target.path, new)
    entries = {key: trust_hash(event, matcher, hook)
               for key, (event, matcher, hook) in owned.items()}
    try:
        cfg_before: str | None = target.config.read_text(encoding="utf-8")
    except FileNotFoundError:
        cfg_before = None
    current = trusted(target.config)
    if all(isinstance(current.get(k), dict) and current[k].get("trusted_hash") == v
           for k, v in entries.items()) and not (old_keys - set(entries)):
        cfg_after = cfg_before  # trusted as it should be: leave the bytes alone
    else:
        cfg_after = with_trust(target.config, cfg_before or "", entries, old_keys)
    record = load_record(target) or {
        "path": str(target.path), "hooks_before": before, "config": str(target.config),
        "config_before": cfg_before, "created_dir": not target.path.parent.exists()}
    record["trusted"] = entries
    changes: tuple[Change, ...] = (Change(target.path, before, after),
                                   Change(target.config, cfg_before, cfg_after))
    boxed = None
    if sandbox and target.project is not None:
        project_config = target.path.parent / "config.toml"
        try:
            box_before: str | None = project_config.read_text(encoding="utf-8")
        except FileNotFoundError:
            box_before = None
        box_after, boxed = with_profile(project_config, box_before, target.project)
        changes += (Change(project_config, box_before, box_after),)
        record.setdefault("profile_before", box_before)
        record["profile"] = box_after != box_before or record.get("profile", False)
    lines = [f"{'installed' if after != before else 'already installed'}: smllm's Codex "
             f"hooks ({len(owned)} events) in {target.path}",
             f"trusted: each of them in {target.config} (Codex runs no untrusted hook)"]
    if target.scope == "project":
        projects = _projects(target.config)
        if (projects.get(str(target.project)) or {}).get("trust_level") != "trusted":
            lines.append(f"note: Codex reads {target.path} only in a trusted project: trust "
                         f"{target.project} when Codex asks (or run `codex exec --trust`)")
    if boxed is not None:
        lines.append(boxed)
    return Plan("install", target, changes, "\n".join(lines), record,
                install.executable_plan(python, flags))


def _toml_undone(path: Path, current: str | None, undo: Callable[[str], str],
                 record: dict[str, Any], first_key: str) -> Change:
    """The change that takes smllm's part (``undo``) out of a TOML file: its bytes from
    before install when the rest is as it was then, no file when install made it."""
    after = current if current is None else undo(current)
    if after is not None and after != current and first_key in record:
        first = record[first_key]
        if first is None and not after.strip():
            after = None
        elif first is not None and _load_toml(path, first) == _load_toml(path, after):
            after = first
    return Change(path, current, after)


def json_undone(path: Path, before: str | None, data: dict[str, Any], *,
                stripped: dict[str, Any], original: str | None, record: dict[str, Any],
                dump: Callable[[dict[str, Any]], str]) -> Change:
    """The change that takes smllm's part out of a JSON file (``data`` as read, ``stripped``
    without smllm's part): its bytes from before install (``original``) when the rest is as
    it was then, no file when install made it and nothing else is in it, else the rest
    (``dump``)."""
    if before is None:
        after = None
    elif original is not None and json.loads(original or "{}") == stripped:
        after = original
    elif original is None and record and stripped == {}:
        after = None  # install made the file, and nothing else is in it
    elif stripped == data:
        after = before
    else:
        after = dump(stripped)
    return Change(path, before, after)


def _hooks_undone(target: Target, before: str | None, data: dict[str, Any],
                  record: dict[str, Any]) -> Change:
    return json_undone(target.path, before, data, stripped=strip(data),
                       original=record.get("hooks_before"), record=record, dump=_dump)


def plan_uninstall(target: Target) -> Plan:
    """Exactly what install added, out again."""
    before, data = _read_json(target.path)
    record = load_record(target) or {}
    keys = set(ours(target.path, data)) | set(record.get("trusted") or {})
    hooks = _hooks_undone(target, before, data, record)
    trust = _toml_undone(target.config, read_text(target.config),
                         lambda text: without_tables(text, keys), record, "config_before")
    changes: tuple[Change, ...] = ()
    if record.get("profile"):
        box = target.path.parent / "config.toml"
        changes = (_toml_undone(box, read_text(box), without_profile, record,
                                "profile_before"),)
    removed = len(ours(target.path, data))
    summary = (f"uninstalled: {removed} smllm hook(s) from {target.path} and their trust "
               f"from {target.config}" if removed or trust.after != trust.before
               else f"not installed: no smllm hook in {target.path}")
    return Plan("uninstall", target, (*changes, hooks, trust), summary, record or None)


def apply(plan: Plan, harness: str = "codex") -> None:
    """Write the plan: atomic replacements of what changes, the install record."""
    if plan.executable is not None:
        install.write_executable(*plan.executable)
    rp = _record_path(plan.target, harness)
    if plan.action == "install" and plan.record is not None and plan.changed:
        paths.ensure_private_tree(rp.parent, paths.state_dir())
        settings.write_atomic(rp, json.dumps(plan.record, ensure_ascii=False) + "\n",
                              mode=0o600)
    for change in plan.changes:
        if change.before == change.after:
            continue
        if change.after is None:
            change.path.unlink(missing_ok=True)
            if plan.record and plan.record.get("created_dir") and change.path == plan.target.path:
                with contextlib.suppress(OSError):  # not empty: something else lives there
                    change.path.parent.rmdir()
            continue
        change.path.parent.mkdir(parents=True, exist_ok=True)
        settings.write_atomic(change.path, change.after)
    if plan.action == "uninstall":
        rp.unlink(missing_ok=True)


def diff(plan: Plan) -> str:
    import difflib  # noqa: PLC0415 - --dry-run only

    text = ""
    for c in plan.changes:
        lines = difflib.unified_diff(
            (c.before or "").splitlines(keepends=True), (c.after or "").splitlines(keepends=True),
            fromfile=str(c.path) if c.before is not None else "/dev/null",
            tofile=str(c.path) if c.after is not None else "/dev/null")
        text += "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return text


# ------------------------------------------------------------------ doctor


def _projects(config: Path) -> dict[str, Any]:
    try:
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    projects = _load_toml(config, text).get("projects") or {}
    return projects if isinstance(projects, dict) else {}


def diagnose(project: Path) -> list[tuple[Status, str]]:
    """Codex's side, as ``(status, text)``: smllm's hooks present for every event, each
    trusted by its current hash (an untrusted or edited hook is an error: Codex skips it
    silently), the project trusted, and each hook's executable importing smllm."""
    config = codex_home() / "config.toml"
    out: list[tuple[Status, str]] = []
    try:
        state = trusted(config)
        projects = _projects(config)
    except InstallError as exc:
        return [("error", exc.render())]
    found_any = False
    for scope, path in (("project", project / ".codex" / "hooks.json"),
                        ("user", codex_home() / "hooks.json")):
        try:
            _, data = _read_json(path)
        except InstallError as exc:
            out.append(("error", exc.render()))
            continue
        owned = ours(path, data)
        if not owned:
            continue
        found_any = True
        events = sorted({event for event, _, _ in owned.values()})
        missing = [e for e in CODEX_EVENTS if e not in events]
        out.append(("ok" if not missing else "error",
                    f"Codex hooks ({scope}): {path}: {len(owned)} smllm hook(s)"
                    + (f"; missing {', '.join(missing)} (re-run `smllm install --harness "
                       f"codex`)" if missing else "")))
        untrusted = 0
        for key, (event, matcher, hook) in owned.items():
            entry = state.get(key)
            want = trust_hash(event, matcher, hook)
            have = entry.get("trusted_hash") if isinstance(entry, dict) else None
            if have == want:
                continue
            untrusted += 1
            why = "untrusted" if have is None else "modified since it was trusted"
            out.append(("error", f"  {event} hook {why}: Codex skips it silently ({key}; "
                                 f"run `smllm install --harness codex"
                                 f"{' --user' if scope == 'user' else ''}` to trust smllm's "
                                 f"hooks as they should be)"))
        if not untrusted:
            out.append(("ok", f"  every smllm hook trusted in {config}"))
        commands = {str(hook.get("command")) for _, _, hook in owned.values()}
        for cmd in sorted(commands)[:1]:
            exe = cmd.split(" ", 1)[0].strip("'\"")
            if not (os.path.isabs(exe) and os.access(exe, os.X_OK)):
                out.append(("error", f"  hooks run {exe}: not an executable file (re-run "
                                     f"`smllm install --harness codex`)"))
        if scope == "project":
            out.append(_sandbox_finding(path.parent / "config.toml", config))
            level = (projects.get(str(project)) or {}).get("trust_level")
            out.append(("ok", f"  project {project} trusted by Codex") if level == "trusted"
                       else ("error", f"  project {project} is not trusted by Codex, which then "
                                      f"ignores {path} (trust it when Codex asks, or run "
                                      f"`codex exec --trust`)"))
    if not found_any:
        out.append(("error", f"smllm is not installed for Codex in {project} (run `smllm "
                             f"install --harness codex --project {project}`)"))
    return out


def _sandbox_finding(box: Path, config: Path) -> tuple[Status, str]:
    """Is smllm's permission profile the project's sandbox (a warning, not an error: the
    gate still refuses the writes into the protected set it can see)?"""
    try:
        text = read_text(box)
        data = _load_toml(box, text) if text else {}
        user = _load_toml(config, read_text(config) or "")
    except InstallError as exc:
        return ("error", f"  {exc.render()}")
    if data.get("default_permissions") != PROFILE or PROFILE not in (
            data.get("permissions") or {}):
        return ("warn", f"  sandbox: {box} does not choose smllm's permission profile, so "
                        f"the agent's commands may write smllm's protected set where the "
                        f"gate cannot see it (re-run `smllm install --harness codex`)")
    chosen = [key for key in SANDBOX_KEYS if key in user]
    if chosen:
        return ("warn", f"  sandbox: {config} sets {chosen[0]}, which may take precedence "
                        f"over smllm's permission profile in {box}")
    return ("ok", f"  sandbox: smllm's permission profile in {box} keeps its protected set "
                  f"read-only to the agent's commands")
