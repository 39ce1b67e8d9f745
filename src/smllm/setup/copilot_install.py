"""``smllm install|uninstall|doctor --harness copilot``: smllm's hooks for GitHub Copilot CLI.

Copilot 1.0.102 reads hook files in its native format (camelCase events,
``{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": …, "timeoutSec": …}]}}``)
from the project's ``.github/hooks/*.json`` (loaded **only in a trusted folder**, silently
skipped otherwise) and from ``$COPILOT_HOME/hooks/*.json`` (``~/.copilot/hooks``: ``--user``,
no trust needed). smllm writes one file of its own, ``smllm.json``, in the native format
(:mod:`smllm.harness.copilot` says why not the Claude Code format Copilot also reads).
A project install also trusts the project: it adds the folder to ``trusted_folders`` in
``$COPILOT_HOME/config.json`` (the persisted trust, which ``--resume`` needs too; Copilot
rewrites the key as ``trustedFolders``, and both are read here).

Each hook runs ``<folder>/smllm-hook EVENT --harness copilot`` (the executable Claude
Code's install writes, :mod:`smllm.setup.install`; its start-up guard exits 2 when smllm
cannot even import, which Copilot treats as a block) with the timeout Claude Code's
install gives (``timeoutSec``: 300 s for preToolUse, whose own deadline is 270 s, since a
timed-out hook lets the tool run on Copilot).

Uninstall removes exactly what install added: the hook file (and the folders install
made for it), and the folder trust install added; a config.json whose rest is unchanged
gets its original bytes back.

>>> sorted(desired("/v/bin/python", ["-IS"])["hooks"])[:3]
['agentStop', 'postToolUse', 'postToolUseFailure']
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smllm.base.errors import InstallError
from smllm.harness import copilot
from smllm.hooks import INSTALLED
from smllm.setup import codex_install, install
from smllm.setup.codex_install import Change, Plan, Status

HARNESS = copilot.HARNESS
#: the flag that makes a hook command Copilot's (after the event)
MARK = "--harness copilot"
#: the hook file smllm owns, in the project's .github/hooks or the user's hooks folder
FILE_NAME = "smllm.json"
#: the keys under which Copilot keeps trusted folders (the documented one, its rewrite)
TRUST_KEYS = ("trusted_folders", "trustedFolders")
#: an smllm hook command for Copilot: the executable's, or the inline ``python -c`` form's
_SMLLM_COPILOT = re.compile(r"(?:smllm-hook|cli\(\))['\"]? ([A-Za-z]+) --harness copilot\b")


def home() -> Path:
    """``$COPILOT_HOME``, else ``~/.copilot``."""
    return Path(copilot.copilot_home())


@dataclass(frozen=True)
class Target(codex_install.Target):
    """Copilot's hook file (``path``) and the config.json of folder trust (``config``)."""

    @property
    def project(self) -> Path | None:
        return self.path.parent.parent.parent if self.scope == "project" else None


def resolve_target(project: str | None, user: bool) -> Target:
    """The hook file ``--project DIR | --user`` names, and the config.json of trust."""
    config = home() / "config.json"
    root = install.project_root(project, user)
    if root is None:
        return Target("user", home() / "hooks" / FILE_NAME, config)
    return Target("project", root / ".github" / "hooks" / FILE_NAME, config)


def event_of(hook: Any) -> str | None:
    """The smllm event an ``smllm install --harness copilot`` hook object runs, else None."""
    if not isinstance(hook, dict) or hook.get("type", "command") != "command":
        return None
    match = _SMLLM_COPILOT.search(str(hook.get("bash") or hook.get("command") or ""))
    return match.group(1) if match else None


def desired(python: str, flags: list[str]) -> dict[str, Any]:
    """The whole hook file: one command hook per event smllm handles, under Copilot's
    native name, with Claude Code's install timeout as ``timeoutSec``."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, native in copilot.EVENTS.items():
        timeout, _ = INSTALLED[event]
        hooks[native] = [{"type": "command",
                          "bash": install.hook_command(event, python, flags, MARK),
                          "timeoutSec": timeout}]
    return {"version": 1, "hooks": hooks}


def _comments(text: str) -> str:
    """The ``//`` lines that open a file Copilot writes (its config.json is JSON with
    comments: "// This file is managed automatically.")."""
    head = []
    for line in text.splitlines(keepends=True):
        if not line.lstrip().startswith("//"):
            break
        head.append(line)
    return "".join(head)


def _parsed(text: str) -> dict[str, Any]:
    try:
        data = codex_install.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def owned(data: dict[str, Any]) -> dict[str, list[str]]:
    """smllm's hooks in a hook file: Copilot's event -> the smllm events its hooks run."""
    out: dict[str, list[str]] = {}
    hooks = data.get("hooks")
    for native, entries in (hooks.items() if isinstance(hooks, dict) else []):
        for hook in entries if isinstance(entries, list) else []:
            event = event_of(hook)
            if event is not None:
                out.setdefault(native, []).append(event)
    return out


def _foreign(data: dict[str, Any]) -> bool:
    """Does a hook file hold anything smllm did not write?"""
    hooks = data.get("hooks")
    if set(data) - {"version", "hooks"} or not isinstance(hooks, dict):
        return bool(data)
    return any(event_of(h) is None for entries in hooks.values()
               for h in (entries if isinstance(entries, list) else [entries]))


def trusted_folders(data: dict[str, Any]) -> list[str]:
    """The folders a config.json trusts (under either key)."""
    out: list[str] = []
    for key in TRUST_KEYS:
        value = data.get(key)
        out += [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return out


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _with_trust(data: dict[str, Any], folder: str) -> dict[str, Any]:
    out = dict(data)
    key = next((k for k in TRUST_KEYS if isinstance(out.get(k), list)), TRUST_KEYS[0])
    out[key] = [*(out.get(key) or []), folder]
    return out


def _without_trust(data: dict[str, Any], folder: str) -> dict[str, Any]:
    out = dict(data)
    for key in TRUST_KEYS:
        if isinstance(out.get(key), list):
            out[key] = [v for v in out[key] if v != folder]
            if not out[key]:
                del out[key]
    return out


def plan_install(target: Target, python: str, flags: list[str]) -> Plan:
    """smllm's hook file (replacing an earlier one of smllm's); in a project, the folder
    trusted in config.json."""
    before, data = codex_install.read_object(target.path)
    if _foreign(data):
        raise InstallError(f"{target.path} holds hooks smllm did not write",
                           f"move them to another file in {target.path.parent}, then install")
    want = desired(python, flags)
    after = before if before is not None and data == want else _dump(want)
    record = codex_install.load_record(target, HARNESS) or {
        "path": str(target.path), "hooks_before": before, "config": str(target.config),
        "created_dirs": [str(p) for p in (target.path.parent, target.path.parent.parent)
                         if not p.exists()]}
    changes: tuple[Change, ...] = (Change(target.path, before, after),)
    lines = [f"{'installed' if after != before else 'already installed'}: smllm's Copilot "
             f"hooks ({len(want['hooks'])} events) in {target.path}"]
    if target.project is not None:
        cfg_before, cfg = codex_install.read_object(target.config)
        folder = str(target.project)
        if folder in trusted_folders(cfg):
            lines.append(f"trusted: {folder} already, in {target.config}")
            changes += (Change(target.config, cfg_before, cfg_before),)
        else:
            record.setdefault("config_before", cfg_before)
            record["trusted"] = folder
            changes += (Change(target.config, cfg_before, _comments(cfg_before or "")
                               + _dump(_with_trust(cfg, folder))),)
            lines.append(f"trusted: {folder} in {target.config} (Copilot skips a project's "
                         f"hooks silently in a folder it does not trust)")
    return Plan("install", target, changes, "\n".join(lines), record,
                install.executable_plan(python, flags))


def plan_uninstall(target: Target) -> Plan:
    """Exactly what install added, out again."""
    before, data = codex_install.read_object(target.path)
    record = codex_install.load_record(target, HARNESS) or {}
    mine = before is not None and not _foreign(data)
    changes: tuple[Change, ...] = (Change(target.path, before, None if mine else before),)
    folder = record.get("trusted")
    if isinstance(folder, str):
        cfg_before, cfg = codex_install.read_object(target.config)
        after: str | None = cfg_before
        if cfg_before is not None and folder in trusted_folders(cfg):
            rest = _without_trust(cfg, folder)
            first = record.get("config_before")
            if first is None and not rest:
                after = None
            elif isinstance(first, str) and _parsed(first) == rest:
                after = first
            else:
                after = _comments(cfg_before) + _dump(rest)
        changes += (Change(target.config, cfg_before, after),)
    summary = (f"uninstalled: smllm's Copilot hooks from {target.path}"
               + (f" and the trust of {folder}" if isinstance(folder, str) else "")
               if mine else f"not installed: no smllm hook file at {target.path}")
    return Plan("uninstall", target, changes, summary, record or None)


def apply(plan: Plan) -> None:
    """Write the plan (:func:`smllm.setup.codex_install.apply`), then remove the folders
    install made that are empty again; arm the tripwire with Copilot's files, or stop
    watching them (:func:`smllm.setup.install.protect_for`)."""
    codex_install.apply(plan, HARNESS)
    if plan.action == "uninstall" and plan.record:
        for folder in plan.record.get("created_dirs") or []:
            with contextlib.suppress(OSError):  # not empty: something else lives there
                Path(folder).rmdir()
    target = plan.target
    assert isinstance(target, Target)
    install.protect_for(HARNESS, plan.action, target.scope, target.project or Path.cwd())


# ------------------------------------------------------------------ doctor

def guarantees(project: Path) -> list[tuple[str, Status, str]]:
    """The guarantees smllm gives on Copilot in ``project``, and why: ``(name, status,
    "standing: why")`` (docs/security.md, the guarantees table)."""
    from smllm.setup import doctor  # noqa: PLC0415 - doctor only

    if doctor.tripwire_armed(project, HARNESS):
        protected = ("advisory + tripwire: Copilot's hooks run inside its sandbox, so smllm's "
                     "store (the tripwire's record among it) stays writable to the agent's "
                     "commands; the gate denies the writes it can see, and the tripwire puts "
                     "back smllm's files, its hook file, the folder's trust and Copilot's "
                     "settings after a change it could not see, and denies every call until "
                     "a person answers")
    else:
        protected = ("advisory: Copilot's hooks run inside its sandbox, so smllm's store stays "
                     "writable to the agent's commands; only the gate stands, denying the "
                     "writes it can see (`smllm install --harness copilot` arms the tripwire)")
    return [
        ("journal before effect", "ok", "holds: the preToolUse hook journals the intent "
         "(fsynced) before it answers, and Copilot runs no tool before its preToolUse hooks "
         "return"),
        ("gate", "ok", "holds: a deny, a crash (exit 1/2/3, or smllm's own fail-closed deny) "
         "and smllm's own deadline (270 s, under the 300 s timeoutSec) block the call; "
         "Copilot runs a call whose hook times out or prints garbage, which smllm's hook "
         "never does on its own"),
        ("stop enforcement", "ok", "holds: agentStop's block is a new user turn; smllm ends "
         "a chain of refusals at 4, before Copilot's cap of 8 blocks in a row"),
        ("protected set", "warn", protected),
        ("resume", "ok", "holds: `copilot --resume` sends sessionStart source=resume with "
         "the same session id: the crash inference and unknown effects run as on Claude "
         "Code"),
    ]


def _disabled(project: Path) -> list[Path]:
    """The settings files that turn every hook off (``disableAllHooks: true``)."""
    out = []
    for path in (home() / "settings.json", project / ".github" / "copilot" / "settings.json"):
        with contextlib.suppress(InstallError):
            if codex_install.read_object(path)[1].get("disableAllHooks") is True:
                out.append(path)
    return out


def _under(path: str, roots: list[str]) -> str | None:
    """The first of ``roots`` that is ``path`` or holds it."""
    return next((r for r in roots if path == r.rstrip("/") or path.startswith(
        r.rstrip("/") + "/")), None)


def sandbox_policy(project: Path) -> tuple[list[str], list[str]]:
    """The folders Copilot's sandbox policy (``~/.copilot/settings.json``) makes read-only
    or hides, and those it makes writable; ``([], [])`` when the sandbox is off. Raises
    :class:`InstallError` for a settings file that is not JSON."""
    settings = codex_install.read_object(home() / "settings.json")[1]
    raw = settings.get("sandbox")
    box: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if not box.get("enabled"):
        return [], []
    policy = (box.get("userPolicy") or {}).get("filesystem") or {}

    def listed(*keys: str) -> list[str]:
        return [str(p) for key in keys for p in policy.get(key) or [] if isinstance(p, str)]

    return listed("readonlyPaths", "deniedPaths"), listed("readwritePaths") or [str(project)]


def _sandbox(project: Path) -> tuple[Status, str]:
    """Is Copilot's sandbox on, and can smllm's hooks, which run inside it, start and
    journal there? (Measured: a folder outside the project, the home and the system that
    the policy does not list is not there at all inside the sandbox.)"""
    import smllm  # noqa: PLC0415 - doctor only
    from smllm.base import paths  # noqa: PLC0415 - doctor only

    try:
        closed, open_ = sandbox_policy(project)
    except InstallError as exc:
        return ("error", f"  {exc.render()}")
    if not closed and open_ == []:
        return ("warn", "  sandbox: off (Copilot's is opt-in): the agent's commands run with "
                        "your rights, so smllm's protected set is advisory: the gate denies "
                        "the writes it can see, the tripwire detects and restores the rest")
    store = str(paths.data_root())
    blocked = _under(store, closed)
    if blocked is not None:
        return ("error", f"  sandbox: on, and {blocked} is read-only inside it, where "
                         f"smllm's hooks run too: they cannot journal, so every tool call is "
                         f"denied (list {store} under readwritePaths)")
    code = os.path.dirname(os.path.dirname(os.path.abspath(smllm.__file__)))
    visible = [str(Path.home()), str(project), *closed, *open_]
    hidden = [p for p in (code, sys.prefix, store) if _under(p, visible) is None]
    if hidden:
        return ("warn", f"  sandbox: on, and {hidden[0]} is outside the home, the project and "
                        f"the folders the policy lists: inside the sandbox it may not be "
                        f"there, and smllm's hooks then cannot start (every call denied); "
                        f"list smllm's code under readonlyPaths and its store under "
                        f"readwritePaths")
    return ("warn", f"  sandbox: on; smllm's hooks run inside it and write {store}, which "
                    f"the agent's commands can then write too: the protected set stays "
                    f"advisory (gate + tripwire)")


def diagnose(project: Path) -> list[tuple[Status, str]]:
    """Copilot's side, as ``(status, text)``: smllm's hook file present for every event, its
    executable importing smllm, the project trusted, no setting turning hooks off, the
    sandbox, and which guarantees hold on this host."""
    out: list[tuple[Status, str]] = []
    found = False
    try:
        config = codex_install.read_object(home() / "config.json")[1]
    except InstallError as exc:
        return [("error", exc.render())]
    for scope, path in (("project", project / ".github" / "hooks" / FILE_NAME),
                        ("user", home() / "hooks" / FILE_NAME)):
        try:
            _, data = codex_install.read_object(path)
        except InstallError as exc:
            out.append(("error", exc.render()))
            continue
        mine = owned(data)
        if not mine:
            continue
        found = True
        missing = [n for e, n in copilot.EVENTS.items() if e not in mine.get(n, [])]
        out.append(("ok" if not missing else "error",
                    f"Copilot hooks ({scope}): {path}: {sum(map(len, mine.values()))} smllm "
                    f"hook(s)" + (f"; missing {', '.join(missing)} (re-run `smllm install "
                                  f"--harness copilot`)" if missing else "")))
        hooks = data.get("hooks") or {}
        command = str(next(iter(hooks.get("preToolUse") or [{}])).get("bash") or "")
        exe = command.split(" ", 1)[0].strip("'\"")
        if not (os.path.isabs(exe) and os.access(exe, os.X_OK)):
            out.append(("error", f"  hooks run {exe}: not an executable file (re-run "
                                 f"`smllm install --harness copilot`)"))
        if scope == "project":
            out.append(("ok", f"  project {project} trusted by Copilot")
                       if str(project) in trusted_folders(config)
                       else ("error", f"  project {project} is not trusted by Copilot, which "
                                      f"then skips {path} silently (run `smllm install "
                                      f"--harness copilot` again, or trust the folder)"))
    for path in _disabled(project):
        out.append(("error", f"{path}: disableAllHooks is true: Copilot runs no hook, smllm's "
                             f"included (remove it)"))
    if not found:
        out.append(("error", f"smllm is not installed for Copilot in {project} (run `smllm "
                             f"install --harness copilot --project {project}`)"))
        return out
    out.append(_sandbox(project))
    from smllm.setup import doctor  # noqa: PLC0415 - doctor only

    return out + doctor.guarantee_lines(guarantees(project))
