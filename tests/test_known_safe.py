"""Issue 26: ``approve = "known-safe"``: under the guard authority smllm answers ``allow``
(``allow:policy``, rule ``policy.known-safe``) for calls its analysis proves read-only,
compound commands included, and decides everything else as without the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import smllm
from smllm.base.errors import PolicyError
from smllm.gate.policy import _compile
from smllm.gate.shell import analyse

KNOWN_SAFE = 'approve = "known-safe"\n'
READ_ONLY = [
    "grep -rn foo src | sort | uniq -c",
    "cd src && git log --oneline | head",
    "git status && git diff --stat",
    "ls -la; wc -l README.md",
]


def _explain(tmp_path: Path, policy_text: str, *argv: str) -> dict[str, object]:
    (tmp_path / ".smllm").mkdir(exist_ok=True)
    (tmp_path / ".smllm" / "policy.toml").write_text(policy_text)
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "README.md").write_text("hello\n")
    out: dict[str, object] = json.loads(
        smllm("policy", "explain", "--json", *argv, cwd=tmp_path).stdout)
    return out


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_approved(tmp_path: Path, command: str) -> None:
    out = _explain(tmp_path, KNOWN_SAFE, "--", command)
    assert (out["decision"], out["answer"], out["rule"], out["source"]) == (
        "allow:policy", "allow", "policy.known-safe", f"{tmp_path}/.smllm/policy.toml:1")
    assert "proves it read-only" in str(out["reason"])


@pytest.mark.parametrize("command", READ_ONLY)
def test_without_the_setting_the_host_decides(tmp_path: Path, command: str) -> None:
    out = _explain(tmp_path, "", "--", command)
    assert (out["decision"], out["answer"], out["rule"]) == ("defer:host", "none",
                                                             "default.allow")


@pytest.mark.parametrize(("command", "decision", "rule"), [
    # not read-only: decided as today
    ("echo hi > notes.txt", "defer:host", "default.allow"),
    ("make build && ls", "defer:host", "default.allow"),
    ("rm -rf build", "ask:user", "fs.delete-recursive-workspace"),
    ("cat ~/.aws/credentials", "ask:user", "exfil.read-credentials"),
    ("ls && rm -rf ~", "deny:policy", "fs.delete-recursive-critical"),
    ("format disk --help", "defer:host", "shell.not-installed"),
])
def test_everything_else_is_decided_as_before(tmp_path: Path, command: str, decision: str,
                                              rule: str) -> None:
    out = _explain(tmp_path, KNOWN_SAFE, "--", command)
    assert (out["decision"], out["rule"]) == (decision, rule)


def test_read_only_tools_are_approved_and_credential_reads_are_not(tmp_path: Path) -> None:
    readme = json.dumps({"file_path": str(tmp_path / "README.md")})
    out = _explain(tmp_path, KNOWN_SAFE, "--tool", "Read", "--", readme)
    assert (out["decision"], out["rule"]) == ("allow:policy", "policy.known-safe")
    key = json.dumps({"file_path": str(Path.home() / ".ssh" / "id_rsa")})
    out = _explain(tmp_path, KNOWN_SAFE, "--tool", "Read", "--", key)
    assert out["decision"] == "ask:user"


def test_under_the_gate_authority_nothing_changes(tmp_path: Path) -> None:
    out = _explain(tmp_path, 'authority = "gate"\n' + KNOWN_SAFE, "--", READ_ONLY[0])
    assert (out["decision"], out["rule"]) == ("allow:policy", "default.allow")


def test_the_setting_compiles_with_its_source(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("# ours\n" + KNOWN_SAFE)
    compiled = _compile.compile_files([path])
    assert (compiled["approve"], compiled["sources"]["approve"]) == ("known-safe",
                                                                    f"{path}:2")
    assert _compile.compile_files([])["approve"] == "never"
    path.write_text('approve = "always"\n')
    with pytest.raises(PolicyError, match=r"unknown approve 'always' \(use one of: never, "
                                          r"known-safe\)"):
        _compile.compile_files([path])


@pytest.mark.parametrize(("command", "read_only"), [
    ("git branch -a && git rev-parse --short HEAD", True),
    ("git branch --list 'feat*'", True),
    ("git -C sub branch -vv", True),
    ("git tag -l 'v*'", True),
    ("git remote -v", True),
    ("git remote show origin", True),
    ("git stash list", True),
    ("git stash show -p", True),
    ("git config --get user.name", True),
    ("git config --list --show-origin", True),
    # the same subcommands when they write
    ("git branch newb", False),
    ("git branch -m a b", False),
    ("git tag v1", False),
    ("git remote add o http://127.0.0.1:9/x", False),
    ("git stash", False),  # git stash push: it reverts the working tree
    ("git config user.name x", False),
    ("git config --global --unset x", False),
    ("git config --get a b c", False),
])
def test_git_listing_forms_are_read_only(tmp_path: Path, command: str,
                                         read_only: bool) -> None:
    """The subcommands that also write (branch, tag, remote, stash, config) are read-only
    in their listing forms, so `approve = "known-safe"` approves them."""
    (tmp_path / ".git").mkdir()
    a = analyse(command, cwd=str(tmp_path), home=str(tmp_path / "home"))
    assert (a.decision, all(c.known_safe for c in a.commands)) == ("allow", read_only)


SCRATCH = [
    'mkdir -p "$TMPDIR/scratch" && echo hello > "$TMPDIR/scratch/a.txt" && cat "$TMPDIR/scratch/a.txt"',
    'sort README.md > "$TMPDIR/sorted.txt" && wc -l "$TMPDIR/sorted.txt"',
    'cp -r src "$TMPDIR/src-copy" && diff -r src "$TMPDIR/src-copy" && rm -rf "$TMPDIR/src-copy"',
    'rm -rf "$TMPDIR/scratch" "$TMPDIR/sorted.txt"',
    'ls | tee "$TMPDIR/listing.txt"',
]
WORKSPACE = [
    "mkdir -p out && sort README.md | uniq > out/unique.txt && wc -l out/unique.txt",
    "echo hi > notes.txt",
    "cp README.md README.bak && mv README.bak out.md",
]


def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, command: str
             ) -> dict[str, object]:
    tmp = tmp_path.parent / f"{tmp_path.name}-tmp"
    tmp.mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(tmp))
    return _explain(tmp_path, KNOWN_SAFE, "--permission-mode", mode, "--", command)


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
@pytest.mark.parametrize("command", SCRATCH)
def test_scratch_work_is_approved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  mode: str, command: str) -> None:
    """Commands that change files in the temp folders only, with file utilities whose every
    effect the analysis records: approved, journaled as confined (not as read-only)."""
    out = _scratch(tmp_path, monkeypatch, mode, command)
    assert (out["decision"], out["rule"]) == ("allow:policy", "policy.known-safe")
    assert "confined to the temp folders (scratch)" in str(out["reason"])


@pytest.mark.parametrize(("mode", "decision"), [
    ("default", "defer:host"), ("acceptEdits", "allow:policy"), ("plan", "defer:host")])
@pytest.mark.parametrize("command", WORKSPACE)
def test_workspace_writes_are_approved_where_the_host_accepts_edits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, decision: str,
        command: str) -> None:
    """A write confined to the workspace is approved only in Claude Code's acceptEdits
    mode, where it lets the agent edit the workspace without asking anyway."""
    out = _scratch(tmp_path, monkeypatch, mode, command)
    assert out["decision"] == decision


@pytest.mark.parametrize("command", [
    # the scratch neighbours: the temp folder itself, all of it, a link out of it, home
    'rm -rf "$TMPDIR"', 'rm -rf "$TMPDIR"/*', 'touch "$TMPDIR"',
    'ln -s ~ "$TMPDIR/h" && rm -rf "$TMPDIR/h/"', "echo x > ~/notes",
    'cp README.md ~/x', 'echo x >> .git/config',
    # programs whose effects the analysis does not all see: code, archives, wrappers
    'python3 -c "print(1)" > "$TMPDIR/out.txt"', 'tar xzf "$TMPDIR/a.tgz"',
    'ln -s README.md "$TMPDIR/r"', 'sudo touch "$TMPDIR/x"',
    'echo $(rm -rf src) > "$TMPDIR/a"', 'X=1 touch "$TMPDIR/a"',
    'xargs rm < "$TMPDIR/list"', 'rm -rf build',
])
@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_what_is_not_confined_is_decided_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, command: str) -> None:
    out = _scratch(tmp_path, monkeypatch, mode, command)
    assert out["rule"] != "policy.known-safe", out
