"""Policy files: validation with file:line errors, precedence, the cache, explain, check."""


from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import smllm
from smllm.base import paths
from smllm.base.errors import PolicyError
from smllm.gate import policy
from smllm.gate.policy import _compile

VALIDATION = [
    ('mode = "strict"\n', "{f}:1: unknown mode 'strict' (use one of: on-request, untrusted, "
     "deny-unmatched, yolo)"),
    ('authority = "boss"\n', "{f}:1: unknown authority 'boss' (use one of: guard, gate)"),
    ('reviewers = ["judge"]\n', "{f}:1: unknown reviewer 'judge' (use one of: user, llm_judge, "
     "command)"),
    ('reviewers = ["user", "user"]\n', "{f}:1: a reviewer is listed twice (list each reviewer "
     "once)"),
    ('colour = "red"\n', "{f}:1: unknown key 'colour' in the policy (use one of: mode, "
     "authority, reviewers, llm_judge, command, rule, sensitive, sandbox, approve)"),
    ('\n[[rule]]\nid = "a"\ncommand = "x"\ndecision = "maybe"\n', "{f}:5: unknown decision "
     "'maybe' (use one of: allow, ask, deny)"),
    ('[[rule]]\nid = "a"\ndecision = "allow"\n', "{f}:1: rule 'a' matches nothing (add tool, "
     "command or path; or use a built-in rule id to change that rule's decision)"),
    ('[[rule]]\nid = "a"\ncommand = "x"\ndecision = "allow"\n[[rule]]\nid = "a"\ncommand = "y"'
     '\ndecision = "deny"\n', "{f}:6: duplicate rule id 'a' (give each rule its own id)"),
    ('[[rule]]\nid = "git.discard"\ncommand = "git *"\ndecision = "allow"\n',
     "{f}:2: rule id 'git.discard' is a built-in rule (to change its decision keep only id and "
     "decision; give a rule of your own another id)"),
    ('[[rule]]\ncommand = "x"\ndecision = "allow"\n', "{f}:1: rule id None is missing or "
     "invalid (give every rule an id of letters, digits, '.', '_', ':' or '-')"),
    ('[[rule]]\nid = "a"\ncommand = "x"\ndecision = "allow"\nwhen = 1\n', "{f}:5: unknown key "
     "'when' in [[rule]] (use one of: id, tool, command, path, decision, reason)"),
    ('mode = "on-request"\nreviewers = ["user"]\n\ncolour = "red"\n', "{f}:4: unknown key "
     "'colour' in the policy (use one of: mode, authority, reviewers, llm_judge, command, rule, "
     "sensitive, sandbox, approve)"),
    ('mode = "on-request"\n[llm_judge]\nmodel = "m"\ntemperature = 1\n', "{f}:4: unknown key "
     "'temperature' in [llm_judge] (use one of: model, timeout, max_tokens, base_url)"),
    ('[llm_judge]\ntimeout = "20"\n', "{f}:2: llm_judge.timeout must be a positive number, "
     "not '20' (e.g. timeout = 20)"),
    ('[[rule]]\nid = "a"\ncommand = ""\ndecision = "allow"\n', "{f}:3: rule 'a': command must "
     "be a non-empty string"),
    ('sensitive = "secrets/"\n', "{f}:1: sensitive must be a list of paths (e.g. sensitive = "
     '["secrets/", "/srv/data"])'),
    ('reviewers = "user"\n', "{f}:1: reviewers must be a list (e.g. reviewers = "
     '["llm_judge", "user"])'),
    ('llm_judge = 3\n', "{f}:1: llm_judge must be a table (write it as [llm_judge])"),
    ('rule = 1\n', "{f}:1: rule must be an array of tables (write each rule as [[rule]])"),
    ('mode = "on-request"\n[colours]\nred = 1\n', "{f}:2: unknown key 'colours' in the policy "
     "(use one of: mode, authority, reviewers, llm_judge, command, rule, sensitive, sandbox, "
     "approve)"),
    ('reviewers = ["command"]\n', "{f}:1: the command reviewer is configured without [command] "
     'argv (add [command] with argv = ["program", "arg"])'),
    ('[llm_judge]\ntimeout = -1\n', "{f}:2: llm_judge.timeout must be a positive number, not -1 "
     "(e.g. timeout = 20)"),
    ('mode = "on-request"\nmode = "yolo"\n', "{f}:2: invalid TOML: Cannot overwrite a value "
     "(see https://toml.io for the syntax)"),
]


@pytest.mark.parametrize(("text", "message"), VALIDATION)
def test_validation_errors(tmp_path: Path, text: str, message: str) -> None:
    """Each mistake is reported whole, with file:line and how to fix it."""
    f = tmp_path / "policy.toml"
    f.write_text(text)
    with pytest.raises(PolicyError) as e:
        _compile.compile_files([f])
    assert message.format(f=f) == str(e.value)


def test_check_reports_problem(tmp_path: Path) -> None:
    """check() lists the problem of the policy in effect, for smllm doctor."""
    (tmp_path / ".smllm").mkdir()
    (tmp_path / ".smllm" / "policy.toml").write_text('mode = "strict"\n')
    problems = policy.check(tmp_path)
    assert [f"{tmp_path}/.smllm/policy.toml:1: unknown mode 'strict' (use one of: on-request, "
            "untrusted, deny-unmatched, yolo)"] == problems
    (tmp_path / ".smllm" / "policy.toml").write_text('mode = "untrusted"\n')
    assert [] == policy.check(tmp_path)


def test_project_overrides_user(tmp_path: Path, smllm_home: Path) -> None:
    """Project settings win over the user's; rules of both apply, project first."""
    smllm_home.mkdir(parents=True, exist_ok=True)
    (paths.config_dir() / "policy.toml").write_text(
        'mode = "untrusted"\nreviewers = ["llm_judge"]\n[[rule]]\nid = "u"\ncommand = "make *"'
        '\ndecision = "allow"\n')
    (tmp_path / ".smllm").mkdir()
    (tmp_path / ".smllm" / "policy.toml").write_text(
        'mode = "on-request"\n[[rule]]\nid = "p"\ncommand = "npm *"\ndecision = "ask"\n')
    data = policy.load(tmp_path)
    assert ("on-request", ["llm_judge"], ["p", "u"]) == (
        data["mode"], data["reviewers"], [r["id"] for r in data["rules"]])


def test_cache_follows_edits(tmp_path: Path) -> None:
    """The compiled policy is cached, and an edited file is recompiled."""
    (tmp_path / ".smllm").mkdir()
    f = tmp_path / ".smllm" / "policy.toml"
    f.write_text('mode = "untrusted"\n')
    first = policy.load(tmp_path)
    cached = sorted(p.name for p in paths.cache_dir().glob("policy-*.json"))
    f.write_text('mode = "deny-unmatched"  # edited\n')
    second = policy.load(tmp_path)
    assert (1, "untrusted", "deny-unmatched") == (len(cached), first["mode"], second["mode"])


def test_builtin_rules_match_the_analyser() -> None:
    """Every built-in rule id has a source line; ids used by the analyser all exist."""
    import re

    builtin = _compile.load_defaults()
    src = Path(_compile.__file__).parent.parent
    used = set()
    for py in [*(src / "shell").glob("*.py"), *src.glob("*.py"), src / "policy" / "assess.py"]:
        used |= set(re.findall(r'"((?:shell|fs|git|code|sys|remote|data|infra|file|mcp|mode|'
                               r'reviewer|exec|exfil|net|publish|install)\.[a-z-]+)"',
                               py.read_text()))
    assert set() == used - set(builtin)
    assert all(re.fullmatch(r"smllm/data/policy_defaults.toml:\d+", b["source"])
               for b in builtin.values())


EXPLAIN = [
    ("", ["--", "rm", "-rf", "stale_cache.txt"], "ask:user", "ask",
     "fs.delete-recursive-workspace"),
    ("", ["--", "sudo env rm -rf /"], "deny:policy", "deny", "fs.delete-recursive-critical"),
    ("", ["--", "grep -r 'rm -rf' ."], "defer:host", "none", "default.allow"),
    ("", ["--permission-mode", "bypassPermissions", "--", "grep -r 'rm -rf' ."],
     "allow:policy", "allow", "default.allow"),
    ('authority = "gate"\n', ["--", "grep -r 'rm -rf' ."], "allow:policy", "allow",
     "default.allow"),
    ('mode = "yolo"\n', ["--", "rm -rf build"], "allow:yolo", "none", "mode.yolo"),
    ('mode = "deny-unmatched"\n', ["--", "rm -rf build"], "deny:policy", "deny",
     "mode.deny-unmatched"),
    ('reviewers = ["llm_judge", "user"]\n', ["--", "rm -rf build"], "review:llm_judge,user",
     "ask", "fs.delete-recursive-workspace"),
    ("", ["--tool", "Write", "--", '{"file_path": "/etc/passwd", "content": "x"}'],
     "deny:policy", "deny", "file.sensitive"),
    # untrusted mode: a command that writes a file through a redirection is not read-only
    ('mode = "untrusted"\n', ["--", "echo hi > notes.txt"], "ask:user", "ask", "mode.untrusted"),
    ('mode = "untrusted"\n', ["--", "ls >> listing.txt"], "ask:user", "ask", "mode.untrusted"),
    ('mode = "untrusted"\n', ["--", "ls > /dev/null 2>&1"], "defer:host", "none",
     "default.allow"),
    ('mode = "untrusted"\n', ["--", "ls 2>&1 | head"], "defer:host", "none", "default.allow"),
]


@pytest.mark.parametrize(("policy_text", "argv", "expected_decision", "expected_answer",
                          "expected_rule"), EXPLAIN)
def test_explain_json(tmp_path: Path, policy_text: str, argv: list[str], expected_decision: str,
                      expected_answer: str, expected_rule: str) -> None:
    """smllm policy explain --json gives the hook's decision, its answer, the rule and reason."""
    (tmp_path / ".smllm").mkdir()
    (tmp_path / ".smllm" / "policy.toml").write_text(policy_text)
    proc = smllm("policy", "explain", "--json", *argv, cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert (expected_decision, expected_answer, expected_rule, True) == (
        out["decision"], out["answer"], out["rule"], bool(out["reason"]))


def test_explain_override(tmp_path: Path) -> None:
    """Overriding a built-in rule changes the decision and names the policy line."""
    (tmp_path / ".smllm").mkdir()
    (tmp_path / ".smllm" / "policy.toml").write_text(
        '# allow cleanups in the project\n[[rule]]\nid = "fs.delete-recursive-workspace"\n'
        'decision = "allow"\n')
    proc = smllm("policy", "explain", "--", "rm -rf build", cwd=tmp_path)
    expected = (f"decision: defer:host (answer: none)\nrule:     fs.delete-recursive-workspace "
                f"({tmp_path}/.smllm/policy.toml:2)\n")
    assert expected == proc.stdout[:len(expected)]
