"""The viewer's pass over a journal (incremental, budgeted) and its machine drawing."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from smllm import journal
from smllm.audit import export
from smllm.serve import diagram
from smllm.serve.sessionscan import SHOWN_DIAGNOSTICS, SessionScan, StreamScan
from smllm.serve.views import Redactor, path, row_of, visible, wrapping

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
LOGS = sorted(FIXTURES.glob("*/*/session.jsonl"))


@pytest.mark.parametrize("log", LOGS, ids=[p.parent.name for p in LOGS])
def test_diagnostics_match_the_export(log: Path) -> None:
    """The viewer counts a log's problems exactly as `smllm export` does."""
    scan = SessionScan(StreamScan("main", log))
    scan.update()
    head = export.header(export.streams(log), "raw")
    expected = {k: head.diagnostics[k] for k in SHOWN_DIAGNOSTICS}
    assert expected == scan.diagnostics()


def _line(seq: int, kind: str = "proposed", **fields: object) -> bytes:
    body = json.dumps({"turn": 1, **fields}, separators=(",", ":"))
    return (f'{{"sequence":{seq},"recorded_at":"2026-08-02T10:00:0{seq % 10}.000Z",'
            f'"payload_type":"{kind}","payload":{{"kind":"{kind}","record":{body}}}}}\n').encode()


#: (what is wrong, lines appended to a log of three records, the counter it raises)
PROBLEMS = [
    ("torn last line", [b'{"sequence":4,"rec'], "torn_lines"),
    ("unparseable line", [b"not a record\n", _line(4)], "unparseable_lines"),
    ("duplicate", [_line(3)], "duplicate_records"),
    ("sequence gap", [_line(9)], "sequence_gaps"),
    ("huge sequence", [_line(10**18)], "sequence_gaps"),
    ("unknown kind", [_line(4, "made.up")], "unknown_payload_kinds"),
    ("omitted field", [_line(4, prompt={"omitted_live_only": {"bytes": 9}})],
     "omitted_live_only"),
]


@pytest.mark.parametrize("stream", ["main", "subagent/a1"])
@pytest.mark.parametrize(("problem", "lines", "counter"), PROBLEMS,
                         ids=[p[0] for p in PROBLEMS])
def test_problem_logs_are_counted_as_the_export_counts_them(
        tmp_path: Path, stream: str, problem: str, lines: list[bytes], counter: str) -> None:
    """Each problem a log can have is counted once, by the viewer as by `smllm export`."""
    main = tmp_path / "s" / "session.jsonl"
    log = main if stream == "main" else main.parent / stream / "session.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as fh:
        fh.write(b"".join([_line(1), _line(2), _line(3), *lines]))
    if log != main:
        main.write_bytes(_line(1))
    scan = SessionScan(StreamScan("main", main))
    scan.update()
    counted = export.header(export.streams(main), "raw").diagnostics
    assert (1, {k: counted[k] for k in SHOWN_DIAGNOSTICS}) == (counted[counter],
                                                              scan.diagnostics())


def test_update_reads_only_what_was_appended(tmp_path: Path) -> None:
    """A second update reads the new records only; a torn tail waits until it is whole."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    journal.append(log, [journal.fact("session.start", {"session_id": "s", "cwd": "/p"}),
                         journal.event("proposed", turn=1, prompt="go")])
    scan = StreamScan("main", log)
    first = (scan.update(), scan.lines, scan.first_prompt)
    journal.append(log, [journal.event("side_effect_intent", operation="tool:bash",
                                       tool_name="Bash", tool_use_id="t1",
                                       policy_decision="allow:policy",
                                       input={"command": "ls"})])
    with open(log, "ab") as fh:
        fh.write(b'{"sequence":4,"rec')
    second = (scan.update(), scan.lines, [e.what for e in scan.effects], scan.torn_bytes)
    assert ((True, 2, "go"), (True, 3, ["ls"], 18)) == (first, second)


def test_a_deadline_stops_reading_and_the_next_update_goes_on(tmp_path: Path) -> None:
    """With a deadline already past, one block is read; later calls finish the log."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    big = "x" * 4000
    journal.append(log, [journal.event("proposed", turn=i, prompt=big) for i in range(600)])
    scan = StreamScan("main", log)
    scan.update(deadline=0.0)
    partial = (scan.complete, 0 < scan.lines < 600)
    while not scan.complete:
        scan.update(deadline=0.0)
    assert ((False, True), 600) == (partial, scan.lines)


def test_effects_join_intent_start_and_terminal(tmp_path: Path) -> None:
    """An intent with its start and terminal is one effect with its outcome; one that
    started and never ended stays open (unknown once the session ends)."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    rec = journal.fact
    journal.append(log, [
        journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                      tool_use_id="t1", policy_decision="allow:policy", input={"command": "a"}),
        rec("tool_batch.effect.started", {"tool_use_id": "t1", "intent_sequence": 1}),
        rec("tool_batch.effect.terminal", {"tool_use_id": "t1", "intent_sequence": 1,
                                           "outcome": "succeeded", "observed_via": "hook"}),
        journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                      tool_use_id="t2", policy_decision="allow:policy", input={"command": "b"}),
        rec("tool_batch.effect.started", {"tool_use_id": "t2", "intent_sequence": 4}),
    ])
    scan = StreamScan("main", log)
    scan.update()
    got = [(e.what, e.started, e.outcome, e.terminal_line) for e in scan.effects]
    assert [("a", 2, "succeeded", 3), ("b", 5, None, None)] == got


def test_billing_fixture_chain_index(tmp_path: Path) -> None:
    """The seed's billing session: one chain, its eight records, decided by the judge."""
    src = FIXTURES / "billing" / "c7dfaecc-adf6-4348-87df-95576e15136e" / "session.jsonl"
    log = tmp_path / "b" / "session.jsonl"
    log.parent.mkdir()
    shutil.copyfile(src, log)
    scan = SessionScan(StreamScan("main", log))
    scan.update()
    chain = scan.chain("pa-7f3e2c1d9b")
    assert chain is not None
    assert ([193, 194, 195, 196, 197, 200, 201, 202], "approved", "llm_judge") == (
        chain.lines, chain.decision, chain.decided_by)


def test_diagram_marks_current_states_and_escapes_labels() -> None:
    """Each instance's state gets the current class and the instance's label, escaped."""
    machine = {"id": "m", "initial": "A", "states": {
        "A": {"final": False, "on": {"go": [{"target": "B", "guard": None}]}},
        "B": {"final": False, "on": {"back": [{"target": "A", "guard": None}],
                                     "stay": [{"target": None, "guard": None}]}},
        "C": {"final": True, "on": {}}}}
    svg = diagram.svg(machine, {"B": ["i-1 <b>"]})
    assert (1, True, False, 3) == (svg.count('class="state current"'), "i-1 &lt;b&gt;" in svg,
                                   "<b>" in svg, svg.count('class="transition"'))


def test_subagent_logs_are_streams_of_the_session(tmp_path: Path) -> None:
    """A subagent's log beside the main one is read as its own stream; its effects count."""
    main = tmp_path / "s" / "session.jsonl"
    sub = tmp_path / "s" / "subagent" / "a1" / "session.jsonl"
    sub.parent.mkdir(parents=True)
    journal.append(main, [journal.fact("session.start", {"session_id": "s"})])
    scan = SessionScan(StreamScan("main", main))
    scan.update()
    before = [s.name for s in scan.streams]
    journal.append(sub, [journal.event("side_effect_intent", operation="tool:bash",
                                       tool_name="Bash", tool_use_id="t9",
                                       policy_decision="allow:policy",
                                       input={"command": "make"})])
    scan.update()
    assert (["main"], ["main", "subagent/a1"], [("subagent/a1", "make")]) == (
        before, [s.name for s in scan.streams], [(e.stream, e.what) for e in scan.effects()])


@pytest.mark.parametrize("text", [
    "/tmp/pytest-of-root/billing_demo/check-costs.py",
    "truncate -s 0 generated/report-001/run.log  two  spaces\tand a tab",
    "<script>alert('x')</script>/a&b/\x1b[31m",
    "/" + "a" * 90 + "/end",
])
def test_wrapping_keeps_the_text_and_escapes_it(text: str) -> None:
    """A path or a command given break points shows exactly its (visible) text: no
    character added or lost, and markup in it stays text."""
    def shown(markup: str) -> str:
        return html.unescape(re.sub(r"<[^>]+>", "", markup))

    assert (visible(text), visible(text), False) == (
        shown(str(wrapping(text))), shown(str(path(text))),
        "<script>" in str(wrapping(text)) + str(path(text)))


def test_an_older_journals_synthetic_message_is_not_shown_as_a_model_call() -> None:
    """A model.call with the model <synthetic> (Claude Code's own message, recorded by
    older smllm) is shown in the host lane as what it is, not as a call of a model."""
    entry = journal.event("model.call", message_id="m", model="<synthetic>",
                          stop_reason="stop_sequence", tool_use_ids=[])
    line, _, _ = journal.encode_record(entry, sequence=1, prev=journal.GENESIS,
                                       recorded_at="2026-08-02T10:00:00.000Z", skipped=0)
    row = row_of("main", 1, line.rstrip(b"\n"), Redactor(raw=False), None)
    assert ("host", "a message Claude Code wrote itself (model <synthetic>, after a crash or "
                    "an API error): not a model call") == (row.lane, row.summary)
