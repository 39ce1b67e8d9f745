"""``smllm doctor --harness gemini``: Gemini CLI's side, and which guarantees hold there.

Gemini CLI 0.61 skips or fails open where Claude Code would not (shared/ref/gemini-hooks.md,
measured), so doctor checks what decides whether smllm's hooks run and hold:

* smllm's hooks are in the project's or the user's ``settings.json`` for every event,
  each with a timeout (milliseconds) past the hook's own deadline: Gemini kills a hook at
  its timeout and runs the tool;
* no settings file turns the hooks off (``hooksConfig.enabled: false``, which a
  project's file may set over the user's) or disables one of smllm's
  (``hooksConfig.disabled``);
* the folder is trusted (Gemini runs no project hook in an untrusted one);
* Gemini's tool sandbox is on and ``.geminiignore`` keeps ``.gemini/`` and ``.smllm/`` out
  of its reach; without them smllm's protected set is advisory.

Then one line per guarantee (:func:`guarantees`): journal before effect, gate, stop
enforcement, protected set, resume: how it stands on this host (the protected set: with
the tripwire where install armed it) and why.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from smllm.base.errors import InstallError
from smllm.harness import gemini
from smllm.hooks import DEADLINES, DEFAULT_DEADLINE
from smllm.setup import doctor, gemini_install
from smllm.setup.doctor import Status

Finding = tuple[Status, str]
#: the file Gemini CLI keeps the folders a person trusted in (in the user's .gemini)
TRUSTED_FOLDERS = "trustedFolders.json"


def min_timeout_ms(event: str) -> int:
    """The shortest timeout (ms) under which Gemini would not kill ``event``'s hook before
    the hook's own deadline answers (a gating hook then denies itself)."""
    return int(DEADLINES.get(event, DEFAULT_DEADLINE) * 1000) + 5000


def _settings(path: Path) -> tuple[dict[str, Any] | None, Finding | None]:
    try:
        return gemini_install.read_settings(path)[1], None
    except InstallError as exc:
        return None, ("error", exc.render())


def _hooks_of(scope: str, path: Path, data: dict[str, Any]) -> list[Finding]:
    """smllm's hooks in one settings file: every event there, each timeout long enough,
    the executable present."""
    owned = gemini_install.ours(data)
    events = {gemini_install.smllm_event_of(h) for hooks in owned.values() for h in hooks}
    missing = [event for event, _ in gemini.EVENTS if event not in events]
    out: list[Finding] = [("ok" if not missing else "error",
                           f"Gemini CLI hooks ({scope}): {path}: "
                           f"{sum(len(v) for v in owned.values())} smllm hook(s)"
                           + (f"; missing {', '.join(missing)} (re-run `smllm install "
                              f"--harness gemini{' --user' if scope == 'user' else ''}`)"
                              if missing else ""))]
    for hooks in owned.values():
        for hook in hooks:
            event = str(gemini_install.smllm_event_of(hook))
            timeout = hook.get("timeout", 60000)
            if not isinstance(timeout, int) or timeout < min_timeout_ms(event):
                gating = event == gemini.GATING_EVENT
                out.append(("error" if gating else "warn",
                            f"  {event} hook: timeout {timeout!r} ms is shorter than its own "
                            f"deadline: Gemini CLI kills it and "
                            f"{'runs the tool' if gating else 'goes on without it'} "
                            f"(timeouts are milliseconds; re-run `smllm install --harness "
                            f"gemini`)"))
    for cmd in sorted({str(h.get("command")) for v in owned.values() for h in v})[:1]:
        exe = cmd.split(" ", 1)[0].strip("'\"")
        if not (os.path.isabs(exe) and os.access(exe, os.X_OK)):
            out.append(("error", f"  hooks run {exe}: not an executable file (re-run `smllm "
                                 f"install --harness gemini`)"))
    return out


def _switches(files: list[tuple[str, Path, dict[str, Any]]]) -> list[Finding]:
    """``hooksConfig`` in any settings file that turns smllm's hooks off."""
    out: list[Finding] = []
    names = {f"{gemini_install.NAME}{event}" for event, _ in gemini.EVENTS}
    for _, path, data in files:
        config = data.get("hooksConfig")
        if not isinstance(config, dict):
            continue
        if config.get("enabled") is False:
            out.append(("error", f"{path}: hooksConfig.enabled is false: Gemini CLI runs no "
                                 f"hook at all, smllm's included (remove it)"))
        disabled = config.get("disabled")
        hit = sorted(d for d in disabled if isinstance(d, str) and (
            d in names or d.rstrip().endswith(gemini_install.MARK))) \
            if isinstance(disabled, list) else []
        if hit:
            out.append(("error", f"{path}: hooksConfig.disabled turns off {', '.join(hit)} "
                                 f"(remove them from the list)"))
    return out


def _trusted(project: Path, user: dict[str, Any]) -> Finding:
    """Is the folder trusted, so that Gemini CLI runs the project's hooks?"""
    folder_trust = (user.get("security") or {}).get("folderTrust") if isinstance(
        user.get("security"), dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return ("ok", f"  folder trust is off in the user's settings: Gemini reads "
                      f"{project}/.gemini")
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return ("ok", "  GEMINI_CLI_TRUST_WORKSPACE=true: Gemini trusts the folder")
    try:
        table = json.loads((gemini_install.gemini_dir() / TRUSTED_FOLDERS).read_text())
    except (OSError, ValueError):
        table = {}
    for key, level in (table.items() if isinstance(table, dict) else []):
        root = Path(key) if level == "TRUST_FOLDER" else Path(key).parent \
            if level == "TRUST_PARENT" else None
        if root is not None and (project == root or root in project.parents):
            return ("ok", f"  {project} trusted by Gemini CLI ({TRUSTED_FOLDERS})")
    return ("warn", f"  {project} is not a trusted folder of Gemini CLI, which then ignores "
                    f"its .gemini/settings.json (trust it when Gemini asks; headless runs: "
                    f"GEMINI_CLI_TRUST_WORKSPACE=true)")


def sandboxed(project: Path) -> tuple[bool, bool, str]:
    """(the tool sandbox is on, .geminiignore keeps .gemini/ and .smllm/ from it, why)."""
    flags = []
    for path in (gemini_install.gemini_dir() / "settings.json",
                 project / ".gemini" / "settings.json"):
        data, _ = _settings(path)
        security = (data or {}).get("security")
        if isinstance(security, dict) and "toolSandboxing" in security:
            flags.append((path, security["toolSandboxing"] is True))
    on = bool(flags) and flags[-1][1]  # the project's file overrides the user's
    where = f" ({flags[-1][0]})" if flags else ""
    if on and shutil.which("bwrap") is None and os.name == "posix" and \
            not os.path.exists("/usr/bin/sandbox-exec"):
        return False, False, "security.toolSandboxing is on but bubblewrap (bwrap) is missing"
    try:
        lines = {ln.strip() for ln in (project / ".geminiignore").read_text().splitlines()}
    except OSError:
        lines = set()
    kept = all(p in lines or p.rstrip("/") in lines for p in gemini_install.IGNORED)
    state = f"Gemini's tool sandbox is {'on' if on else 'off'}{where}"
    return on, kept, state


def guarantees(project: Path) -> list[tuple[str, Status, str]]:
    """The guarantees smllm gives on Gemini CLI in ``project``, and why: ``(name, status,
    "standing: why")`` (docs/security.md, the guarantees table)."""
    on, kept, state = sandboxed(project)
    armed = doctor.tripwire_armed(project, gemini_install.HARNESS)
    wire = "advisory + tripwire" if armed else "advisory"
    caught = (", and the tripwire puts back Gemini's settings, .geminiignore and smllm's "
              "files after a change it could not see and denies every call until a person "
              "answers" if armed else
              " (`smllm install --harness gemini` arms the tripwire, which puts them back)")
    if on and kept:
        protected = (f"{wire} across sessions, enforced by the OS within a session: {state} "
                     f"and .geminiignore keeps .gemini/ and .smllm/ from it, so smllm's files "
                     f"and Gemini's hooks are read-only to the agent's commands and file "
                     f"tools; but Gemini keeps .geminiignore itself writable, and reads it "
                     f"at the next start: the gate denies the writes to it that it can "
                     f"see{caught}")
    elif on:
        protected = (f"{wire}: {state}, but .geminiignore does not name "
                     f"{' and '.join(gemini_install.IGNORED)}, so the agent can write the "
                     f"project's .gemini/ (its hooks) and .smllm/; the gate denies the "
                     f"writes it can see{caught} (re-run `smllm install --harness gemini`)")
    else:
        protected = (f"{wire}: {state}, so only smllm's hooks stand between the agent and "
                     f"smllm's files: the gate denies the writes it can see{caught} "
                     f"(`smllm install --harness gemini` turns the sandbox on)")
    return [
        ("journal before effect", "ok", "holds: Gemini CLI waits for the BeforeTool hook, "
         "which makes the intent durable before it answers"),
        ("gate", "ok", "holds, failing closed on every path smllm controls: every answer "
         "is a deny with a reason or nothing, never `ask` (which hangs a headless run); a "
         "crash or smllm's own deadline denies; only a hook Gemini itself kills (its "
         "timeout, a signal) lets the call run, which the timeouts install writes leave to "
         "smllm's deadline"),
        ("stop enforcement", "ok", "holds: an AfterAgent block sends the state machine's "
         "text back as the next prompt; Gemini sets no cap on blocks, so the machine's "
         "runaway rule lets the second stop in a row without a fire through"),
        ("protected set", "warn", protected),
        ("resume", "ok", "holds: `gemini --resume` starts the same session again "
         "(SessionStart source resume): a crash is inferred and unknown effects are held"),
    ]


def diagnose(project: Path) -> list[Finding]:
    """Gemini CLI's side, as ``(status, text)``: smllm's hooks present, switched on, trusted
    and sandboxed, then the guarantees that hold."""
    out: list[Finding] = []
    files: list[tuple[str, Path, dict[str, Any]]] = []
    for scope, path in (("project", project / ".gemini" / "settings.json"),
                        ("user", gemini_install.gemini_dir() / "settings.json")):
        data, error = _settings(path)
        if error is not None:
            out.append(error)
        elif data is not None:
            files.append((scope, path, data))
    found = [(scope, path, data) for scope, path, data in files if gemini_install.ours(data)]
    for scope, path, data in found:
        out += _hooks_of(scope, path, data)
        if scope == "project":
            user = next((d for s, _, d in files if s == "user"), {})
            out.append(_trusted(project, user))
    if not found:
        out.append(("error", f"smllm is not installed for Gemini CLI in {project} (run `smllm "
                             f"install --harness gemini --project {project}`)"))
    out += _switches(files)
    return out + doctor.guarantee_lines(guarantees(project))
