"""The embedded index: smllm sessions, search, the picker and --last, kept up to date on read."""

from __future__ import annotations

import io
import json
import os
import pty
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, smllm
from journalgen import Effect, append, write_session
from smllm import index, journal
from smllm.audit import picker
from smllm.base.errors import SessionNotFound
from smllm.index import Filters, database
from smllm.journal import lookup

T0 = 1_767_603_600_000  # 2026-01-05T09:00:00Z


def _lines(stdout: str) -> list[dict[str, Any]]:
    """A --json list: JSON Lines, one object a line."""
    return [json.loads(line) for line in stdout.splitlines()]


def _two_projects(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    write_session("aaaa0001-run", cwd=str(a), start_ms=T0, prompt="fix   the\nflaky test",
                  effects=[Effect("pytest -q")])
    write_session("bbbb0001-run", cwd=str(b), start_ms=T0 + 60_000, prompt="write docs",
                  end=None)
    write_session("aaaa0002-run", cwd=str(a / "sub"), start_ms=T0 + 120_000,
                  prompt="clean up", effects=[Effect("rm -rf build", "allow:llm_judge",
                                                     "fs.delete")], end="crash_inferred")
    return a, b


def test_sessions_json_lists_the_sessions_of_each_project(tmp_path: Path) -> None:
    """`smllm sessions --json` in each of two projects lists that project's sessions (and
    below), newest first, with started, folder, records, termination and first prompt."""
    a, b = _two_projects(tmp_path)
    in_a = _lines(smllm("sessions", "--json", cwd=a).stdout)
    in_b = _lines(smllm("sessions", "--json", cwd=b).stdout)
    assert [("aaaa0002-run", str(a / "sub"), 7, "crash_inferred", "clean up",
             "2026-01-05T09:02:00.000Z"),
            ("aaaa0001-run", str(a), 7, "clean", "fix the flaky test",
             "2026-01-05T09:00:00.000Z")] == [
        (r["session_id"], r["folder"], r["records"], r["termination"], r["first_prompt"],
         r["started_at"]) for r in in_a]
    assert [("bbbb0001-run", str(b), 3, "open", "write docs")] == [
        (r["session_id"], r["folder"], r["records"], r["termination"], r["first_prompt"])
        for r in in_b]
    assert in_b[0]["journal"] == str(journal.log_path("bbbb0001-run"))
    everything = _lines(smllm("sessions", "--json", "--all", cwd=b).stdout)
    assert ["aaaa0002-run", "bbbb0001-run", "aaaa0001-run"] == [
        r["session_id"] for r in everything]


def test_sessions_filters_by_time_and_folder(tmp_path: Path) -> None:
    """--since/--until select by start time; --project selects a folder from anywhere."""
    a, _ = _two_projects(tmp_path)
    out = smllm("sessions", "--all", "--since", "2026-01-05T09:01", "--until",
                "2026-01-05T09:02", "--json", cwd=tmp_path)
    assert ["bbbb0001-run"] == [r["session_id"] for r in _lines(out.stdout)]
    out = smllm("sessions", "--project", str(a / "sub"), "--json", cwd=tmp_path)
    assert ["aaaa0002-run"] == [r["session_id"] for r in _lines(out.stdout)]
    bad = smllm("sessions", "--since", "last tuesday", cwd=tmp_path)
    assert (2, "smllm: error: --since: not a time: 'last tuesday' (use 2026-01-05, "
               "2026-01-05T09:00 (UTC) or an age like 12h, 7d)\n") == (bad.returncode,
                                                                       bad.stderr)


def test_sessions_plain_rows(tmp_path: Path) -> None:
    """The plain listing: one row a session; an empty folder says so on stderr."""
    a, _ = _two_projects(tmp_path)
    out = smllm("sessions", cwd=a)
    assert [
        f"2026-01-05 09:02  aaaa0002-run       7  crash_inferred  {a}/sub  clean up",
        f"2026-01-05 09:00  aaaa0001-run       7  clean           {a}  fix the flaky test",
    ] == out.stdout.splitlines()
    (tmp_path / "empty").mkdir()
    empty = smllm("sessions", cwd=tmp_path / "empty")
    assert ("", f"no journal sessions in {tmp_path / 'empty'} (--all lists every folder)\n") == (
        empty.stdout, empty.stderr)


def _on_a_terminal(*args: str, cwd: Path) -> str:
    """What ``smllm ARGS`` prints with its stdout on a terminal (a pty), newlines as \\n."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "smllm", *args], cwd=cwd, stdout=follower,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(leader)
    return out.decode().replace("\r\n", "\n")


def test_sessions_on_a_terminal_name_the_columns(tmp_path: Path) -> None:
    """On a terminal the rows come under a header naming each column (the record count
    included); piped, the same rows come alone (test_sessions_plain_rows)."""
    a, _ = _two_projects(tmp_path)
    lines = _on_a_terminal("sessions", cwd=a).splitlines()
    assert [
        f"started (UTC)     session       records  termination     folder{' ' * len(str(a))}"
        "first prompt",
        f"2026-01-05 09:02  aaaa0002-run        7  crash_inferred  {a}/sub  clean up",
        f"2026-01-05 09:00  aaaa0001-run        7  clean           {a}      fix the flaky test",
    ] == lines


def test_the_two_session_commands_say_which_sessions_they_list() -> None:
    """`smllm sessions` lists Claude Code sessions and `smllm session list` state-machine
    sessions: each one's help says so and names the other."""
    sessions = " ".join(smllm("sessions", "--help").stdout.split())
    machine = " ".join(smllm("session", "list", "--help").stdout.split())
    assert (True, True, True, True) == (
        "List Claude Code sessions" in sessions, "are `smllm session list`" in sessions,
        "List smllm's state-machine sessions" in machine, "are `smllm sessions`" in machine)


def test_sessions_of_real_hooks_with_a_crash_and_resume(tmp_path: Path) -> None:
    """Sessions written by the real hooks, one crashed and resumed, list as the journal says."""
    env = {"SMLLM_NOW": str(T0)}
    sid = "c0ffee00-0000-4000-8000-000000000001"
    hook("SessionStart", base("SessionStart", sid, cwd=str(tmp_path), source="startup"), env=env)
    hook("UserPromptSubmit", base("UserPromptSubmit", sid, cwd=str(tmp_path), prompt="hello"),
         env=env)
    rows = index.sessions(Filters(project=str(tmp_path)))
    assert [(sid, "open", "hello", 3)] == [
        (r.session_id, r.termination, r.first_prompt, r.records) for r in rows]
    hook("SessionStart", base("SessionStart", sid, cwd=str(tmp_path), source="resume"), env=env)
    hook("SessionEnd", base("SessionEnd", sid, cwd=str(tmp_path), reason="other"), env=env)
    rows = index.sessions(Filters(project=str(tmp_path)))
    assert [(sid, "clean", "hello", 6)] == [
        (r.session_id, r.termination, r.first_prompt, r.records) for r in rows]


def test_refresh_reads_only_what_was_appended(tmp_path: Path) -> None:
    """A second refresh reads nothing; an append is read alone; a replaced file is re-read."""
    path = write_session("dddd0001-run", cwd=str(tmp_path), start_ms=T0, end=None)
    first = index.refresh()
    assert (1, 3, 0) == (first.read, first.records, first.rebuilt)
    again = index.refresh()
    assert (0, 0) == (again.read, again.records)
    append(path, [journal.event("completed", turn=1)], T0 + 10)
    grown = index.refresh()
    assert (1, 1, 0) == (grown.read, grown.records, grown.rebuilt)
    lines = Path(path).read_bytes().splitlines(keepends=True)
    tmp = Path(path + ".new")
    tmp.write_bytes(b"".join(lines[:2]))
    os.replace(tmp, path)
    cut = index.refresh()
    assert (1, 2, 1) == (cut.read, cut.records, cut.rebuilt)
    assert [2] == [r.records for r in index.sessions(Filters(session="dddd0001-run"))]


def test_a_torn_last_line_waits_for_the_next_refresh(tmp_path: Path) -> None:
    """A line without its newline is not indexed until the writer completes the log."""
    path = write_session("eeee0001-run", cwd=str(tmp_path), start_ms=T0, end=None)
    with open(path, "ab") as fh:
        fh.write(b'{"sequence": 4, "tor')
    assert 3 == index.refresh().records
    with journal.transaction(path, now_ms=T0 + 5) as txn:
        txn.append(journal.event("completed", turn=1))
    assert (1, 4) == (index.refresh().records,
                      index.sessions(Filters(session="eeee0001-run"))[0].records)


def test_search_filters(tmp_path: Path) -> None:
    """Each audit filter of search selects the records it names; an intent carries its
    effect's effective authorization and outcome."""
    write_session("ffff0001-run", cwd=str(tmp_path), start_ms=T0, effects=[
        Effect("rm -rf build", "allow:llm_judge", "fs.delete"),
        Effect("ls", "defer:host", "default", authorized_by="allow:user"),
        Effect("rm -rf /", "deny:policy", "fs.root", outcome="failed"),
        Effect("git push", "allow:policy", "git.push", outcome=None)])
    cases = {
        "judge-approved rm -rf": (Filters(kind="side_effect_intent", decision="allow",
                                          authorizer="llm_judge", text="rm -rf"), [4]),
        "authorizer user (observed on the terminal)": (
            Filters(kind="side_effect_intent", authorizer="user"), [7]),
        "denied": (Filters(decision="deny"), [12, 10]),
        "rule": (Filters(rule="git.push"), [13]),
        "text anywhere": (Filters(text="rm -rf"), [10, 4]),
        "tool in its host spelling": (Filters(tool="Bash", kind="tool_batch.effect.terminal"),
                                      [12, 9, 6]),
        "time range": (Filters(since_ms=T0 + 12, until_ms=T0 + 13), [13]),
    }
    for name, (f, expected) in cases.items():
        assert (name, expected) == (name, [h.sequence for h in index.search(f)])
    judge = index.search(Filters(text="rm -rf build", kind="side_effect_intent"))[0]
    assert ("allow:llm_judge", "succeeded", 6, "bash", "rm -rf build") == (
        judge.authorization, judge.outcome, judge.terminal_sequence, judge.tool, judge.text)
    pending = index.search(Filters(rule="git.push"))[0]
    assert (None, None) == (pending.outcome, pending.terminal_sequence)


def test_search_cli_counts_by_user(tmp_path: Path) -> None:
    """`smllm search --count-by` groups the hits; --json gives the rows."""
    write_session("gggg0001-run", cwd=str(tmp_path), start_ms=T0, effects=[
        Effect("rm -rf a", "allow:llm_judge"), Effect("rm -rf b", "allow:llm_judge")])
    out = smllm("search", "--effects", "--authorizer", "llm_judge", "--text", "rm -rf",
                "--count-by", "folder", "--json", cwd=tmp_path)
    assert [{"folder": str(tmp_path), "count": 2}] == _lines(out.stdout)
    rows = _lines(smllm("search", "--effects", "--json", cwd=tmp_path).stdout)
    assert [("rm -rf b", "allow:llm_judge"), ("rm -rf a", "allow:llm_judge")] == [
        (h["text"], h["authorization"]) for h in rows]


def test_last_and_prefix_resolution_use_the_index(tmp_path: Path, smllm_home: Path) -> None:
    """--last takes the most recently active session of the folder; a prefix resolves;
    an unknown id points at `smllm sessions`."""
    a, b = _two_projects(tmp_path)
    assert journal.log_path("aaaa0002-run") == picker.latest(str(a / "sub"))
    assert journal.log_path("bbbb0001-run") == picker.latest(str(b))
    assert journal.log_path("bbbb0001-run") == lookup.resolve("bbbb")
    with pytest.raises(SessionNotFound) as err:
        lookup.resolve("aaaa")
    assert ("session id prefix 'aaaa' is ambiguous (matches: aaaa0002-run, aaaa0001-run)"
            == str(err.value))
    with pytest.raises(SessionNotFound) as err:
        lookup.resolve("zzzz")
    assert (f"no session 'zzzz' in {smllm_home / 'sessions'}"
            " (list them with `smllm sessions --all`, or give a path to session.jsonl)"
            == str(err.value))


def test_picker_shows_the_first_prompt(tmp_path: Path) -> None:
    """The picker's prompt column shows each session's first prompt (it was always empty)."""
    _two_projects(tmp_path)
    out = io.StringIO()
    chosen = picker.pick("export", stdin=io.StringIO("2\n"), out=out)
    rows = out.getvalue().splitlines()[1:4]
    assert [("aaaa0002-run", "clean up"), ("bbbb0001-run", "write docs"),
            ("aaaa0001-run", "fix the flaky test")] == [
        (r.split()[3], r.split("  ")[-1]) for r in rows]
    assert journal.log_path("bbbb0001-run") == chosen


def test_a_corrupt_index_is_rebuilt(tmp_path: Path) -> None:
    """An index file SQLite cannot read is replaced, and rebuilt from the journals."""
    write_session("hhhh0001-run", cwd=str(tmp_path), start_ms=T0)
    index.refresh()
    file = database.path()
    file.write_bytes(b"this is not a database" * 100)
    for extra in ("-wal", "-shm"):
        Path(f"{file}{extra}").unlink(missing_ok=True)
    assert ["hhhh0001-run"] == [r.session_id for r in index.sessions()]
    assert 0o600 == file.stat().st_mode & 0o777
    with sqlite3.connect(file) as db:
        assert database.SCHEMA_VERSION == db.execute("PRAGMA user_version").fetchone()[0]


def test_a_deleted_journal_leaves_the_index(tmp_path: Path) -> None:
    """A session whose journal was removed is no longer listed."""
    path = write_session("iiii0001-run", cwd=str(tmp_path), start_ms=T0)
    assert 1 == len(index.sessions())
    os.unlink(path)
    assert [] == index.sessions()


def test_search_text_finds_what_the_model_said(tmp_path: Path) -> None:
    """A model call's text is a searchable facet: `smllm search --text` finds the response
    that said it (and only that one), with its kind; the viewer's row shows the text too."""
    from smllm.serve import views

    path = write_session("mmmm0001-run", cwd=str(tmp_path), start_ms=T0, end=None)
    said = ["I will run the migration first.", "Done: the table has 12 rows."]
    append(path, [journal.event("model.call", message_id=f"msg_{i}", model="m",
                                stop_reason="end_turn", usage={}, tool_use_ids=[],
                                text=text, thinking=None) for i, text in enumerate(said)],
           T0 + 1000)
    rows = _lines(smllm("search", "--text", "migration", "--json", cwd=tmp_path).stdout)
    assert [("model.call", said[0])] == [(r["kind"], r["text"]) for r in rows]
    body = {"model": "m", "stop_reason": "end_turn", "tool_use_ids": ["toolu_1"],
            "usage": {"input_tokens": 5, "output_tokens": 7}, "text": said[1]}
    assert ("m · end_turn · 5 in / 7 out · 1 tool use(s) — Done: the table has 12 rows."
            == views.summarize("model.call", body))
    assert ("m · end_turn · 5 in / 7 out · 1 tool use(s)"
            == views.summarize("model.call", {**body, "text": None}))
