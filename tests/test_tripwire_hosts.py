"""The tripwire on GitHub Copilot CLI and Gemini CLI (issue 22): their installs arm it with
the host's own files (the hook file, the settings that switch hooks off, the folder trust,
Gemini's .geminiignore), and a change to one that smllm did not make is put back,
journaled and answered by denying every gated call, through the hooks as installed
(``smllm-hook EVENT --harness copilot|gemini``, the command line the host runs); the
host's own state (another folder trusted, a theme chosen) is not fought; uninstall stops
watching what it leaves."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers import kind, records, smllm
from smllm import tripwire
from smllm.harness import gemini
from smllm.tripwire import keeper, watched

SID = "4b2a1c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
#: Gemini CLI's names of smllm's events
GEMINI_NAMES = dict(gemini.EVENTS)
#: how Copilot 1.0.102 writes its config.json (JSON with a comment head)
COPILOT_HEAD = "// This file is managed automatically.\n"


class Host:
    """A project with smllm installed for one host (``smllm install --harness NAME``) in a
    scratch home, and that host's hooks run as installed."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, harness: str) -> None:
        self.harness = harness
        self.home = tmp_path / "home"
        self.home.mkdir()
        monkeypatch.setenv("HOME", str(self.home))
        for name in ("COPILOT_HOME", "GEMINI_CLI_HOME", "CLAUDE_PROJECT_DIR", "CLAUDECODE"):
            monkeypatch.delenv(name, raising=False)
        self.root = tmp_path / "proj"
        (self.root / ".git").mkdir(parents=True)
        (self.root / ".smllm").mkdir()
        (self.root / ".smllm" / "policy.toml").write_text('mode = "on-request"\n')
        self.install()
        self.n = 0
        #: the command lines as install wrote them (the agent may take them out)
        self.commands = {e: self.command(e) for e in ("SessionStart", "PreToolUse")}

    def install(self, *extra: str, action: str = "install") -> str:
        proc = smllm(action, "--harness", self.harness, "--project", str(self.root), *extra,
                     cwd=self.root)
        assert 0 == proc.returncode, proc.stderr
        return proc.stdout

    def command(self, event: str) -> str:
        """The command line the host runs for smllm's ``event``, read from the file install
        wrote (Gemini's settings.json, Copilot's hook file)."""
        if self.harness == "gemini":
            data = json.loads((self.root / ".gemini" / "settings.json").read_text())
            (group,) = data["hooks"][GEMINI_NAMES[event]]
            return str(group["hooks"][0]["command"])
        data = json.loads((self.root / ".github" / "hooks" / "smllm.json").read_text())
        native = {"SessionStart": "sessionStart", "PreToolUse": "preToolUse",
                  "PostToolUse": "postToolUse"}[event]
        return str(data["hooks"][native][0]["bash"])

    def hook(self, event: str, **fields: Any) -> dict[str, Any] | None:
        """Run smllm's ``event`` hook as the host does; its answer."""
        if self.harness == "gemini":
            payload: dict[str, Any] = {
                "session_id": SID, "cwd": str(self.root), "hook_event_name":
                GEMINI_NAMES[event], "timestamp": f"2026-12-01T10:00:{self.n:02d}.000Z",
                "transcript_path": str(self.home / "chat.jsonl"), **fields}
            env = {"GEMINI_PROJECT_DIR": str(self.root), "CLAUDE_PROJECT_DIR": str(self.root)}
        else:
            payload = {"sessionId": SID, "cwd": str(self.root),
                       "timestamp": 1796530021588 + self.n, **fields}
            env = {}
        proc = subprocess.run(["bash", "-c", self.commands[event]],
                              input=json.dumps(payload).encode(), capture_output=True,
                              cwd=self.root, env={**os.environ, **env}, timeout=60,
                              check=False)
        assert 0 == proc.returncode, proc.stderr.decode()
        out = proc.stdout.decode()
        return json.loads(out) if out.strip() else None

    def start(self) -> None:
        self.hook("SessionStart", source="startup")

    def shell(self, command: str = "ls") -> tuple[str, str]:
        """A shell call's gate: (decision, reason) in the host's own answer."""
        self.n += 1
        if self.harness == "gemini":
            out = self.hook("PreToolUse", tool_name="run_shell_command",
                            tool_input={"command": command}) or {}
            return str(out.get("decision", "none")), str(out.get("reason", ""))
        out = self.hook("PreToolUse", toolName="bash", toolArgs={"command": command}) or {}
        return (str(out.get("permissionDecision", "none")),
                str(out.get("permissionDecisionReason", "")))

    def tripwire(self) -> list[dict[str, Any]]:
        return [r["payload"]["record"] | {"kind": kind(r)} for r in records(SID)
                if kind(r).startswith("tripwire")]


@pytest.fixture
def gemini_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Host:
    return Host(tmp_path, monkeypatch, "gemini")


@pytest.fixture
def copilot_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Host:
    return Host(tmp_path, monkeypatch, "copilot")


def _violation_then_revert(host: Host, path: Path, change: str) -> None:
    """After ``path`` was changed mid-session: the next gated call is denied with the
    tripwire's reason, ``path`` holds install's bytes again, the violation is journaled,
    and calls pass again once a person reverts."""
    decision, reason = host.shell()
    assert ("deny", f"smllm's tripwire: {path} was {change} outside smllm") == (
        decision, reason.split(" after ", 1)[0].split(", and ", 1)[0])
    assert ["tripwire.violation"] == [r["kind"] for r in host.tripwire()]
    violation = host.tripwire()[0]
    assert (str(path), change, True) == (violation["path"], violation["change"],
                                         violation["restored"])
    proc = smllm("tripwire", "revert", "--project", str(host.root), cwd=host.root)
    assert 0 == proc.returncode, proc.stderr
    assert "none" == host.shell()[0]


@pytest.mark.parametrize("edit", ["hooks", "hooksConfig", "ignore"])
def test_gemini_hooks_settings_and_ignore_file_are_restored_and_gate(
        gemini_host: Host, edit: str) -> None:
    """Mid-session the agent switches smllm's Gemini hooks off (the hooks taken out of
    .gemini/settings.json, or ``hooksConfig.enabled: false``), or opens .gemini/ to the
    tool sandbox (.geminiignore emptied): the next hook puts install's bytes back, journals
    the violation and denies every gated call until a person answers."""
    host = gemini_host
    host.start()
    assert "none" == host.shell()[0]
    settings = host.root / ".gemini" / "settings.json"
    path = host.root / ".geminiignore" if edit == "ignore" else settings
    installed = path.read_bytes()
    if edit == "ignore":
        path.write_text("")
    else:
        data = json.loads(settings.read_text())
        if edit == "hooks":
            del data["hooks"]
        else:
            data["hooksConfig"] = {"enabled": False}
        settings.write_text(json.dumps(data))
    _violation_then_revert(host, path, "modified")
    assert installed == path.read_bytes()


def test_gemini_user_settings_are_watched_and_a_theme_is_not_fought(
        gemini_host: Host) -> None:
    """~/.gemini/settings.json is watched too: a theme chosen (``ui``) or a sign-in method
    (``security.auth``), which Gemini writes on a person's choice, pass; smllm's hook
    disabled there (``hooksConfig.disabled``) is a violation, restored."""
    host = gemini_host
    user = host.home / ".gemini" / "settings.json"
    user.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    host.install()  # armed with the user's settings as they are
    host.start()
    user.write_text(json.dumps({"ui": {"theme": "Dracula"},
                                "security": {"auth": {"selectedType": "oauth-personal"}}}))
    assert ("none", []) == (host.shell()[0], host.tripwire())
    chosen = user.read_bytes()
    user.write_text(json.dumps({"ui": {"theme": "Dracula"},
                                "hooksConfig": {"disabled": ["smllm-PreToolUse"]}}))
    _violation_then_revert(host, user, "modified")
    assert chosen == user.read_bytes()


def test_copilot_hook_file_removed_is_restored_and_gates(copilot_host: Host) -> None:
    """Mid-session the agent deletes smllm's Copilot hook file: the next hook writes it
    back, journals the violation and denies (in Copilot's flat answer) until a person
    answers."""
    host = copilot_host
    host.start()
    assert "none" == host.shell()[0]
    hooks = host.root / ".github" / "hooks" / "smllm.json"
    installed = hooks.read_bytes()
    hooks.unlink()
    _violation_then_revert(host, hooks, "removed")
    assert installed == hooks.read_bytes()


def test_copilot_folder_trust_counts_and_its_own_rewrites_do_not(copilot_host: Host
                                                                 ) -> None:
    """Copilot's config.json: Copilot rewriting it (its comment head, ``trusted_folders``
    renamed ``trustedFolders``, another folder trusted, its own state) passes; the
    project's trust taken away (Copilot would then skip smllm's hooks silently) is a
    violation, and the restore puts the trust back while keeping the rest of Copilot's
    state; ``disableAllHooks`` in Copilot's settings.json is one too."""
    host = copilot_host
    config = host.home / ".copilot" / "config.json"
    assert [str(host.root)] == json.loads(config.read_text())["trusted_folders"]
    host.start()
    config.write_text(COPILOT_HEAD + json.dumps({
        "trustedFolders": [str(host.root), "/srv/other"], "banner": "never",
        "last_logged_in_user": {"login": "a"}}, indent=2))
    assert ("none", []) == (host.shell()[0], host.tripwire())
    config.write_text(COPILOT_HEAD + json.dumps({
        "trustedFolders": ["/srv/other"], "banner": "always"}, indent=2))
    _violation_then_revert(host, config, "modified")
    text = config.read_text()
    assert (COPILOT_HEAD, {"trustedFolders": ["/srv/other", str(host.root)],
                           "banner": "always"}) == (
        text[:len(COPILOT_HEAD)], json.loads(text[len(COPILOT_HEAD):]))
    settings = host.home / ".copilot" / "settings.json"
    settings.write_text(json.dumps({"disableAllHooks": True}))
    decision, reason = host.shell()
    assert ("deny", True) == (decision, f"{settings} was created outside smllm" in reason)
    assert not settings.exists()


def test_uninstall_stops_watching_the_hosts_files_and_keeps_the_others(
        copilot_host: Host) -> None:
    """With Claude Code and Copilot installed in one project, uninstalling Copilot's hooks
    stops watching Copilot's files (the project's and, no other project having them, the
    user's) while the project stays armed for Claude Code; uninstalling Claude Code's too
    disarms the project."""
    host = copilot_host
    proc = smllm("install", "--project", str(host.root), "--no-sandbox", cwd=host.root)
    assert 0 == proc.returncode, proc.stderr
    scope = tripwire.scope_of(str(host.root))
    armed = tripwire.read_manifest(scope)
    assert armed is not None
    copilots = set(watched.host_files("copilot", str(host.root)))
    assert (["claude", "copilot"], True) == (keeper.hosts_of(armed),
                                             copilots <= set(armed["files"]))
    host.install(action="uninstall")
    left = tripwire.read_manifest(scope)
    user = tripwire.read_manifest(tripwire.USER)
    assert left is not None
    assert user is not None
    assert (["claude"], set(), ["claude"], set()) == (
        keeper.hosts_of(left), copilots & set(left["files"]), keeper.hosts_of(user),
        set(watched.host_files("copilot", None)) & set(user["files"]))
    proc = smllm("uninstall", "--project", str(host.root), cwd=host.root)
    assert 0 == proc.returncode, proc.stderr
    assert tripwire.read_manifest(scope) is None


def test_doctor_says_whether_the_hosts_files_are_watched(gemini_host: Host) -> None:
    """``smllm doctor --harness gemini`` shows the tripwire armed with Gemini's files, or
    warns when it is armed without them (an install from before they were watched)."""
    host = gemini_host

    def line() -> str:
        proc = smllm("doctor", "--harness", "gemini", "--project", str(host.root), "--json",
                     cwd=host.root)
        found = [f for f in json.loads(proc.stdout)["findings"]
                 if f["text"].startswith("tripwire:")]
        return f"{found[0]['status']} {found[0]['text'].split(',')[0]}"

    assert "ok tripwire: armed" == line()
    keeper.disarm(str(host.root), "gemini")
    keeper.arm(str(host.root))
    assert "warn tripwire: armed" == line()
