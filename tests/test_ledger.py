"""smllm ledger: seed 000's plain rows, colour lanes on a terminal, the HTML page."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import smllm
from smllm import journal
from smllm.journal import records

FIXTURES = Path(__file__).parent / "fixtures" / "sessions" / "billing"
BILLING_ID = "c7dfaecc-adf6-4348-87df-95576e15136e"
SEED_HEADER = ("audit ledger  c7dfaecc-adf6-4348-87df-95576e15136e  "
               "(233 events, termination: clean)")
SEED_ROWS = [
    "  43  +  16.9s  tool run   bash       auth=allow:policy",
    "  71  +  20.7s  edit       edit_file  auth=allow:policy",
    " 193  +  57.8s  approval   REQUESTED  bash: rm -rf stale_cache.txt",
    " 196  +  57.8s  approval   APPROVED  by llm_judge",
    " 200  +  57.8s  tool run   bash       auth=allow:llm_judge",
]


@pytest.fixture
def trajectory(tmp_path: Path) -> Path:
    log = tmp_path / BILLING_ID / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(FIXTURES / BILLING_ID / "session.jsonl", log)
    out = tmp_path / "trajectory.json"
    proc = smllm("export", "--journal", str(log), "--out", str(out))
    expected = 0
    assert expected == proc.returncode, proc.stderr
    return out


def test_effects_are_exactly_the_seed_rows(trajectory: Path) -> None:
    """`--effects --plain` on seed 000's session prints its header and its five effect rows,
    byte for byte, in its order (no model calls, no reads)."""
    proc = smllm("ledger", str(trajectory), "--effects", "--plain")
    expected = (0, "\n".join([SEED_HEADER, *SEED_ROWS]) + "\n")
    assert expected == (proc.returncode, proc.stdout)


EFFECT_CASES = [
    ("bash", True, False),
    ("bash", False, True),
    ("bash", None, True),  # an older intent without known_safe: it may change something
    ("bash", "true", True),  # only the boolean counts
    ("read", None, False),
    ("read_file", None, False),
    ("grep", False, False),
    ("edit", None, True),
    ("write", False, True),
    ("mcp__smllm__smllm", None, True),
    ("mcp__db__query", True, False),
]


@pytest.mark.parametrize(("tool", "known_safe", "effect"), EFFECT_CASES)
def test_what_is_a_side_effect(tool: str, known_safe: object, effect: bool) -> None:
    """Reads (read-only tools, calls whose intent says the gate proved them read-only) are
    not side effects; nothing is analysed again at audit time."""
    from smllm.audit import ledger

    assert effect == ledger.is_effect(tool, known_safe)


RAN_CASES = [
    ("bash", {"command": "ls  -la\n  | wc -l"}, "ls -la | wc -l"),
    ("edit", {"file_path": "src/app.py", "old_string": "a"}, "src/app.py"),
    ("mcp__smllm__smllm", {"event": "enter", "params": {"stateMachine": "fix"}},
     '{"event":"enter","params":{"stateMachine":"fix"}}'),
    ("bash", {"command": "x" * 80}, "x" * 59 + "…"),
    ("bash", None, ""),
]


@pytest.mark.parametrize(("tool", "tool_input", "shown"), RAN_CASES)
def test_what_ran_is_one_short_line(tool: str, tool_input: object, shown: str) -> None:
    """A row shows the command, else the path, else the input as JSON: one line, ≤ 60 chars."""
    from smllm.audit import ledger

    assert shown == ledger.ran_text(tool, tool_input)


def test_plain_ledger_is_the_golden_file(trajectory: Path) -> None:
    """The whole plain ledger (model calls included) matches the reviewed golden file."""
    proc = smllm("ledger", str(trajectory), "--plain")
    expected = (FIXTURES / "ledger.plain.txt").read_text()
    assert (0, expected) == (proc.returncode, proc.stdout)


def test_authorization_column_counts(trajectory: Path) -> None:
    """Four tool actions by static policy, one by the reviewer, every model call not_applicable."""
    lines = smllm("ledger", str(trajectory), "--plain").stdout.splitlines()[1:]
    auth = [ln.split("auth=", 1)[1].split()[0] for ln in lines if "auth=" in ln]
    models = [ln for ln in lines if "  model  " in ln]
    assert (4, 1, len(models)) == (auth.count("allow:policy"), auth.count("allow:llm_judge"),
                                   auth.count("not_applicable"))


def _tty_output(args: list[str], env: dict[str, str]) -> str:

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "smllm", *args], stdout=slave,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            env={**os.environ, **env})
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    proc.wait(timeout=30)
    os.close(master)
    return data.decode()


COLOUR_CASES = [
    ("terminal", [], {}, True),
    ("NO_COLOR", [], {"NO_COLOR": "1"}, False),
    ("--plain", ["--plain"], {}, False),
]


@pytest.mark.parametrize(("name", "flags", "env", "coloured"), COLOUR_CASES,
                         ids=[c[0] for c in COLOUR_CASES])
def test_colour_lanes_on_a_terminal(trajectory: Path, name: str, flags: list[str],
                                    env: dict[str, str], coloured: bool) -> None:
    """Lanes are coloured on a terminal, unless NO_COLOR is set or --plain is given."""
    text = _tty_output(["ledger", str(trajectory), *flags], env)
    lanes = {code for code, lane in (("\x1b[34m", "model"), ("\x1b[32m", "tool run"),
                                     ("\x1b[35m", "edit"), ("\x1b[33m", "approval"))
             if f"{code}" in text and lane in text}
    assert (coloured, 4 if coloured else 0) == ("\x1b[" in text, len(lanes))


def test_html_page_is_self_contained_and_deterministic(trajectory: Path, tmp_path: Path) -> None:
    """--html writes one page with every row, no scripts, no external resources, and the
    table is printed as well (its help says "also")."""
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    smllm("ledger", str(trajectory), "--html", str(a))
    proc = smllm("ledger", str(trajectory), "--plain", "--html", str(b))
    page = a.read_text()
    actual = (proc.stdout, proc.stderr, a.read_bytes() == b.read_bytes(), "<script" in page,
              "http://" in page or "https://" in page or "src=" in page, page.count("<tr class"),
              "rm -rf stale_cache.txt" in page and "auth=allow:llm_judge" in page)
    expected = ((FIXTURES / "ledger.plain.txt").read_text(),
                f"smllm: wrote the HTML ledger to {b}\n", True, False, False, 14, True)
    assert expected == actual


def test_ledger_of_a_non_export_is_a_clear_error(tmp_path: Path) -> None:
    """A file that is not an export gets one error line, not a traceback."""
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}))
    proc = smllm("ledger", str(bad))
    expected = (1, f"smllm: error: {bad} is not an smllm export (export_schema_version None, "
                   "expected 1) (export the session again with `smllm export`)\n")
    assert expected == (proc.returncode, proc.stderr)


def test_subagent_rows_follow_a_stream_marker(tmp_path: Path) -> None:
    """Rows of a subagent's stream come after a `-- subagent/<id> --` line, with its own clock."""
    main = tmp_path / "sid-sub" / "session.jsonl"
    child = main.parent / "subagent" / "agent-1" / "session.jsonl"
    child.parent.mkdir(parents=True)
    journal.append(main, [journal.fact("session.start", {"session_id": "sid-sub"})])
    journal.append(child, [
        journal.fact("session.start", {"session_id": "sid-sub", "agent_id": "agent-1"}),
        journal.event("side_effect_intent", operation="tool:grep", tool_name="Grep",
                      tool_use_id="t1", idempotency_key="k1", policy_decision="allow:host",
                      input={"pattern": "x"}),
    ])
    out = tmp_path / "t.json"
    smllm("export", "--journal", str(main), "--out", str(out))
    lines = smllm("ledger", str(out), "--plain").stdout.splitlines()
    expected = ["audit ledger  sid-sub  (3 events, termination: none recorded)",
                "-- subagent/agent-1 --",
                "   2  +   0.0s  tool run   grep       auth=allow:host  [waiting]  x"]
    assert expected == lines


def test_guard_mode_rows_name_the_observed_authorizer(tmp_path: Path) -> None:
    """Under authority = guard the row says who actually allowed the call (the terminal's
    authorized_by), and an intent whose outcome was never seen keeps its stamp, last, marked
    waiting (Claude Code has not let it start, as far as smllm saw, and the session has not
    ended)."""
    from helpers import base, hook, smllm

    sid = "ledger-guard-1"
    hook("SessionStart", base("SessionStart", sid, source="startup", cwd=str(tmp_path)))
    for tid, cmd in (("toolu_1", "ls"), ("toolu_2", "cat a.txt")):
        tool = {"tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": tid,
                "cwd": str(tmp_path)}
        hook("PreToolUse", base("PreToolUse", sid, **tool))
        if tid == "toolu_1":
            hook("PostToolUse", base("PostToolUse", sid, tool_response={"stdout": ""}, **tool))
    out = tmp_path / "t.json"
    assert 0 == smllm("export", "--journal", sid, "--out", str(out)).returncode
    lines = smllm("ledger", str(out), "--plain").stdout.splitlines()
    rows = [(int(line.split()[0]), line.split("auth=", 1)[1]) for line in lines[1:]]
    assert [(2, "allow:host  ls"), (5, "defer:host  [waiting]  cat a.txt")] == rows


def test_rows_come_in_sequence_order(tmp_path: Path) -> None:
    """A deferred row waits for its terminal record, yet rows still come in sequence order."""
    from helpers import base, hook, smllm

    sid = "ledger-order-1"
    hook("SessionStart", base("SessionStart", sid, source="startup", cwd=str(tmp_path)))
    tools = [{"tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": tid,
              "cwd": str(tmp_path)} for tid, cmd in (("toolu_1", "ls"), ("toolu_2", "pwd"))]
    for tool in tools:  # two calls of one response: both intents, then both outcomes
        hook("PreToolUse", base("PreToolUse", sid, **tool))
    for tool in reversed(tools):
        hook("PostToolUse", base("PostToolUse", sid, tool_response={"stdout": ""}, **tool))
    out = tmp_path / "t.json"
    assert 0 == smllm("export", "--journal", sid, "--out", str(out)).returncode
    lines = smllm("ledger", str(out), "--plain").stdout.splitlines()[1:]
    # defer:host: each intent alone, its start written with its outcome (journal/hostcall)
    assert [(2, "ls"), (3, "pwd")] == [(int(ln.split()[0]), ln.split("  ")[-1]) for ln in lines]


def test_a_late_part_of_a_model_call_is_not_another_row(tmp_path: Path) -> None:
    """Transcript lines of a response read after it was recorded become a model.call with
    ``part: 2``: the same call, so the ledger shows one model row for it."""
    log = tmp_path / "session.jsonl"
    call = {"message_id": "msg_1", "model": "m", "stop_reason": "tool_use", "usage": None,
            "tool_use_ids": [], "text": "a", "thinking": None}
    journal.append(log, [records.new("model.call", **call),
                         records.new("model.call", **{**call, "part": 2, "text": "b"})])
    out = smllm("ledger", "--journal", str(log), "--plain")
    rows = [ln for ln in out.stdout.splitlines() if " model " in ln]
    assert (0, 1) == (out.returncode, len(rows)), out.stdout + out.stderr
