"""The registry of record kinds: the docs page, the writers and the readers all agree with it."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO, base, hook, smllm
from machine_project import Project
from smllm import journal
from smllm.audit import approvals, export
from smllm.base.errors import JournalError
from smllm.journal import records
from smllm.machine import locations

SRC = REPO / "src" / "smllm"
DOCS = REPO / "docs" / "concepts" / "journal.md"
SID = "5e1f0c2a-7b3d-4e8f-9a6c-1d2e3f4a5b6c"


def _docs_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """kind -> (type, holds) from the "Record kinds" table of docs/concepts/journal.md."""
    section = DOCS.read_text().split("## Record kinds", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, tuple[str, ...]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], tuple(re.findall(r"`([^`]+)`", cells[3])))
    return rows


def test_docs_page_lists_every_kind_of_the_registry() -> None:
    """The docs table and the registry name the same kinds, types and required fields."""
    expected = dict(records.KINDS)
    assert expected == _docs_table()


def test_export_knows_exactly_the_registry() -> None:
    """`smllm export` counts as unknown exactly the kinds the registry lacks."""
    assert set(records.KINDS) == set(export.KNOWN_KINDS)


def test_reader_tables_name_registered_kinds() -> None:
    """The approval chain's steps and export's lifecycle kinds are registered kinds."""
    assert set() == (set(approvals.STEPS) | set(export._LIFECYCLE)) - set(records.KINDS)


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return f"{_name(func.value)}.{func.attr}"
    return func.id if isinstance(func, ast.Name) else "?"


def _sources() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(SRC)), ast.parse(p.read_text())) for p in sorted(SRC.rglob("*.py"))]


def test_writers_build_records_through_the_registry() -> None:
    """No product module builds a record around the registry (journal.fact/event, Entry)."""
    allowed = {"journal/codec.py", "journal/records.py"}  # the codec defines them
    bypass = sorted(
        f"{rel}:{c.lineno}: {_name(c.func)}"
        for rel, tree in _sources() if rel not in allowed for c in _calls(tree)
        if _name(c.func) in ("journal.fact", "journal.event", "fact", "event", "Entry",
                             "journal.Entry"))
    assert [] == bypass


def test_every_kind_a_writer_names_is_registered() -> None:
    """Each literal kind given to records.new() is in the registry."""
    named = {c.args[0].value for _, tree in _sources() for c in _calls(tree)
             if _name(c.func) in ("records.new", "new") and c.args
             and isinstance(c.args[0], ast.Constant)}
    assert set() == named - set(records.KINDS)
    assert len(named) > 15  # the scan saw the writers


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's ``NAME = "text"`` constants."""
    return {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            for t in n.targets if isinstance(t, ast.Name)}


def _compared_kinds(tree: ast.Module) -> set[str]:
    """The strings a reader compares a record's kind with (``kind == "x"``, ``in (...)``,
    ``kind == INTENT`` with ``INTENT = "side_effect_intent"``)."""
    constants = _constants(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        about_kind = (isinstance(left, ast.Name) and left.id in ("kind", "pt")) or (
            isinstance(left, ast.Call) and _name(left.func).endswith("kind_of")) or (
            isinstance(left, ast.Call) and _name(left.func).endswith(".get") and left.args
            and isinstance(left.args[0], ast.Constant) and left.args[0].value == "payload_type")
        if not about_kind:
            continue
        for comp in node.comparators:
            elts = comp.elts if isinstance(comp, (ast.Tuple, ast.List, ast.Set)) else [comp]
            for e in elts:
                if isinstance(e, ast.Constant) and isinstance(e.value, str):
                    found.add(e.value)
                elif isinstance(e, ast.Name) and e.id in constants:
                    found.add(constants[e.id])
    return found


def test_every_kind_a_reader_compares_with_is_registered() -> None:
    """The journal's readers (sidecar, recovery, verify, lookup, export, ledger, approvals,
    picker, the index, the team store, the web viewer) and the hooks compare record kinds
    only with registered names."""
    readers = {rel: _compared_kinds(tree) for rel, tree in _sources()
               if rel.startswith(("journal/", "audit/", "hooks/", "gate/review", "index/",
                                  "store/", "serve/"))
               and rel != "base/secrets.py"}  # its `kind` is a secret pattern's
    unknown = {rel: sorted(k - set(records.KINDS)) for rel, k in readers.items()
               if k - set(records.KINDS)}
    assert {} == unknown
    assert {"journal/sidecar.py", "journal/recovery.py", "journal/verify.py",
            "audit/ledger.py", "audit/approvals.py", "index/facets.py"} <= {
                r for r, k in readers.items() if k}


@pytest.mark.parametrize(("name", "fields", "message"), [
    ("session.begun", {"session_id": "s"},
     "unknown record kind 'session.begun' (add it to smllm.journal.records.KINDS and "
     "docs/concepts/journal.md)"),
    ("stop_blocked", {"turn": 1}, "a stop_blocked record needs reason"),
    ("subagent.started", {}, "a subagent.started record needs agent_id, agent_type, journal"),
])
def test_new_refuses_unknown_kinds_and_missing_fields(name: str, fields: dict[str, Any],
                                                      message: str) -> None:
    """records.new() names the unknown kind or the missing fields."""
    with pytest.raises(JournalError) as info:
        records.new(name, **fields)
    assert message == info.value.render()


def test_new_builds_events_and_facts() -> None:
    """An event lands in payload.event, a fact in payload.record under its payload_type."""
    ev = records.new("completed", turn=3)
    fact = records.new("session.compacted", session_id="s")
    assert ({"event": {"kind": "completed", "turn": 3}}, None) == (ev.payload, ev.payload_type)
    assert ({"kind": "session_compacted", "record": {"session_id": "s"}},
            "session.compacted") == (fact.payload, fact.payload_type)


# ------------------------------------------------------------ one record of every kind

JUDGE = """import json, sys
json.load(sys.stdin)
print(json.dumps({"verdict": "always_allow_in_workspace", "reason": "a build folder"}))
"""


def _assistant(mid: str, tool_use_id: str) -> str:
    return json.dumps({"type": "assistant", "uuid": f"u-{mid}", "timestamp": "2026-01-05T09:00:00Z",
                       "message": {"id": mid, "model": "claude-test", "stop_reason": "tool_use",
                                   "usage": {"input_tokens": 1, "output_tokens": 1},
                                   "content": [{"type": "tool_use", "id": tool_use_id,
                                                "name": "Bash", "input": {}}]}}) + "\n"


class Session:
    """One host session in a project with a machine and a command reviewer, driven through
    the real hooks (subprocesses, as Claude Code runs them) and the real CLI."""

    def __init__(self, root: Path) -> None:
        self.project = Project(root)
        (root / ".git").mkdir()
        (root / "judge.py").write_text(JUDGE)
        (root / ".smllm" / "policy.toml").write_text(
            'reviewers = ["command", "user"]\n[command]\n'
            f'argv = [{json.dumps(sys.executable)}, "judge.py"]\n')
        self.root = root
        self.transcript = root / "transcript.jsonl"
        self.transcript.write_text("")
        self.cli("install", "--project", str(root), "--no-sandbox")  # arms the tripwire

    def hook(self, event: str, **extra: Any) -> dict[str, Any] | None:
        payload = base(event, SID, cwd=str(self.root), transcript_path=str(self.transcript),
                       **extra)
        proc = hook(event, payload, cwd=self.root)
        assert (0, False) == (proc.returncode, b"Traceback" in proc.stderr), proc.stderr
        out: dict[str, Any] | None = json.loads(proc.stdout) if proc.stdout.strip() else None
        return out

    def bash(self, tool_use_id: str, command: str) -> dict[str, Any] | None:
        return self.hook("PreToolUse", tool_name="Bash", tool_input={"command": command},
                         tool_use_id=tool_use_id)

    def machine_key(self) -> str:
        key = locations.read_binding("claude", SID)
        assert key is not None
        return key

    def cli(self, *args: str) -> str:
        proc = smllm(*args, cwd=self.root)
        assert 0 == proc.returncode, proc.stderr
        return proc.stdout


def _every_kind(root: Path) -> Path:
    """Drive one session through everything smllm journals; return its export."""
    s = Session(root)
    s.hook("SessionStart", source="startup")  # session.start (and the machine's binding)
    s.hook("UserPromptSubmit", prompt="clean the build")  # proposed, accepted
    s.hook("UserPromptSubmit", prompt="and the cache")
    log = Path(journal.locate(SID))  # `head -n -1`: the next hook finds the log cut
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))
    with s.transcript.open("a") as fh:
        fh.write(_assistant("msg_1", "toolu_1"))  # model.call, at the next hook
    # the command reviewer answers always_allow_in_workspace: the whole approval chain
    s.bash("toolu_1", "rm -rf build")
    s.hook("PostToolUse", tool_name="Bash", tool_input={"command": "rm -rf build"},
           tool_use_id="toolu_1", tool_response={"stdout": ""})
    s.hook("PermissionRequest", tool_name="Read", tool_input={"file_path": "/etc/hostname"})
    s.bash("toolu_2", "ls")  # left in flight: the resume finds it unknown
    s.hook("SessionStart", source="resume")  # session.end crash_inferred, session.resumed
    intent = next(r for r in journal.iter_records(journal.locate(SID))
                  if journal.body_of(r).get("tool_use_id") == "toolu_2")
    s.cli("reconcile", str(intent["sequence"]), "--outcome", "applied", "--journal", SID)
    s.hook("SessionStart", source="compact")
    s.hook("SubagentStart", agent_id="agent-1", agent_type="general-purpose")
    s.hook("SubagentStop", agent_id="agent-1", agent_type="general-purpose",
           agent_transcript_path=str(s.transcript), last_assistant_message="done")
    s.hook("Notification", message="waiting for input")  # host.event
    raw = json.dumps(base("PreToolUse", SID, tool_name="Bash", tool_input="ls",
                          tool_use_id="toolu_3"))
    assert hook("PreToolUse", raw, cwd=root).returncode == 0  # hook.input_rejected
    grant = json.loads(s.cli("policy", "grants", "--json").splitlines()[0])["id"]
    s.cli("policy", "grants", "--revoke", grant)
    # Claude Code's write on a person's "don't ask again" (tripwire.adopted), and a change
    # to .mcp.json outside smllm (tripwire.violation), seen by the next hook; a person's
    # `smllm tripwire revert` (tripwire.resolved)
    (root / ".claude" / "settings.local.json").write_text(
        '{"permissions": {"allow": ["Bash(ls *)"]}}\n')
    (root / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "sh"}}}\n')
    s.hook("Stop", stop_hook_active=False)  # completed: the machine is idle
    s.cli("tripwire", "revert")
    s.project.fire(s.machine_key(), "enter", stateMachine="fix")
    assert "block" == (s.hook("Stop", stop_hook_active=False) or {}).get("decision")
    s.hook("SessionEnd", reason="other")
    out = root / "export.json"
    s.cli("export", "--journal", SID, "--out", str(out))
    return out


def test_a_session_with_every_kind_exports_with_no_unknown_kind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real hooks and commands write one record (at least) of every registered kind, and
    the export of that session reports unknown_payload_kinds: 0."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the user's Claude Code files
    doc = json.loads(_every_kind(tmp_path / "project").read_text())
    kinds = {journal.kind_of(e["envelope"]) for e in doc["events"] if e["kind"] == "record"}
    assert (sorted(records.KINDS), 0) == (sorted(kinds),
                                          doc["diagnostics"]["unknown_payload_kinds"])
