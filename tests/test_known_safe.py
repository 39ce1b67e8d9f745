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
