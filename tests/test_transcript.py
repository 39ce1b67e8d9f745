"""Model calls come from the host transcript, incrementally; host-refused calls get a terminal."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, kind, records, smllm
from smllm import journal
from smllm.journal import transcript
from smllm.journal.verify import verify

SID = "7c6b5a49-3827-4615-a4b3-c2d1e0f9a8b7"


def _assistant(mid: str, blocks: list[dict[str, Any]], stop: str | None, n: int) -> dict[str, Any]:
    return {"type": "assistant", "uuid": f"u-{mid}-{n}", "timestamp": "2026-11-29T10:00:00.000Z",
            "message": {"id": mid, "model": "claude-opus-5-5", "role": "assistant",
                        "content": blocks, "stop_reason": stop,
                        "usage": {"input_tokens": 50 + n, "output_tokens": 10}}}


def _result(tid: str, content: str, is_error: bool) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}]}}


class Session:
    def __init__(self, tmp_path: Path) -> None:
        self.transcript = tmp_path / "t.jsonl"
        self.transcript.write_text("")

    def write(self, *lines: dict[str, Any]) -> None:
        with self.transcript.open("a") as fh:
            for line in lines:
                fh.write(json.dumps(line) + "\n")

    def hook(self, event: str, **extra: Any) -> None:
        payload = base(event, SID, transcript_path=str(self.transcript), **extra)
        proc = hook(event, payload)
        assert 0 == proc.returncode, proc.stderr.decode()


def _bash(tid: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": f"echo {tid}"}, "tool_use_id": tid}


def test_one_model_call_per_assistant_message(tmp_path: Path) -> None:
    """A message split over several lines is one model.call, recorded once, with its tool uses."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.write({"type": "user", "message": {"role": "user", "content": "go"}})
    s.hook("UserPromptSubmit", prompt="go")
    s.write(_assistant("msg_A", [{"type": "text", "text": "running"}], None, 1),
            _assistant("msg_A", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {}}], "tool_use", 2))
    s.hook("PreToolUse", **_bash("toolu_1"))
    s.hook("PostToolUse", **_bash("toolu_1"), tool_response={"stdout": "toolu_1"})
    s.write(_result("toolu_1", "toolu_1", False),
            _assistant("msg_B", [{"type": "text", "text": "done"}], "end_turn", 3))
    s.hook("Stop", stop_hook_active=False, last_assistant_message="done")
    s.hook("SessionEnd", reason="other")
    recs = records(SID)
    calls = [r["payload"]["event"] for r in recs if kind(r) == "model.call"]
    assert ["msg_A", "msg_B"] == [c["message_id"] for c in calls]
    assert (["toolu_1"], "tool_use", 52) == (
        calls[0]["tool_use_ids"], calls[0]["stop_reason"], calls[0]["usage"]["input_tokens"])
    assert ("end_turn", []) == (calls[1]["stop_reason"], calls[1]["tool_use_ids"])
    # msg_A is recorded before the intent it asked for
    order = [kind(r) for r in recs]
    assert order.index("model.call") < order.index("side_effect_intent")
    assert verify(journal.log_path(SID)).ok


def test_host_refused_call_gets_a_terminal_from_the_transcript(tmp_path: Path) -> None:
    """An intent the host refused (no PostToolUse) is closed once the model answered after it."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.hook("UserPromptSubmit", prompt="go")
    s.write(_assistant("msg_A", [{"type": "tool_use", "id": "toolu_2", "name": "Bash",
                                  "input": {}}], "tool_use", 1))
    s.hook("PreToolUse", **_bash("toolu_2"))
    s.write(_result("toolu_2", "This command requires approval", True))
    s.hook("PreToolUse", **_bash("toolu_3"))  # same batch: the model has not answered yet
    s.hook("PostToolUse", **_bash("toolu_3"), tool_response={"stdout": ""})
    assert [] == [r for r in records(SID) if kind(r) == "tool_batch.effect.terminal"
                  and r["payload"]["record"]["tool_use_id"] == "toolu_2"]
    s.write(_assistant("msg_B", [{"type": "text", "text": "it was refused"}], "end_turn", 2))
    s.hook("Stop", stop_hook_active=False)
    terminal = [r["payload"]["record"] for r in records(SID)
                if kind(r) == "tool_batch.effect.terminal"
                and r["payload"]["record"]["tool_use_id"] == "toolu_2"]
    assert 1 == len(terminal)
    assert ("refused_by_host", "transcript", "This command requires approval") == (
        terminal[0]["outcome"], terminal[0]["observed_via"], terminal[0]["detail"])


def test_ingestion_reads_only_new_bytes(tmp_path: Path) -> None:
    """A partial last line is left for the next hook; nothing is recorded twice."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    line = json.dumps(_assistant("msg_A", [{"type": "text", "text": "x"}], "end_turn", 1))
    with s.transcript.open("a") as fh:
        fh.write(line[:20])
    s.hook("UserPromptSubmit", prompt="a")
    with s.transcript.open("a") as fh:
        fh.write(line[20:] + "\n")
    s.write({"type": "user", "message": {"role": "user", "content": "next"}})
    s.hook("UserPromptSubmit", prompt="b")
    s.hook("Stop", stop_hook_active=False)
    assert ["msg_A"] == [r["payload"]["event"]["message_id"] for r in records(SID)
                         if kind(r) == "model.call"]


# --------------------------------------------------------------- what the model said


def _block_lines(mid: str, blocks: list[dict[str, Any]], stop: str | None,
                 first: int = 1) -> list[dict[str, Any]]:
    """One line per content block, each with the final stop reason: how Claude Code 2.1.332
    writes a response (``apiBlockIndex`` 0, 1, …, one ``message.id``)."""
    return [dict(_assistant(mid, [b], stop, first + i), apiBlockIndex=i)
            for i, b in enumerate(blocks)]


def _calls(sid: str = SID) -> list[dict[str, Any]]:
    return [r["payload"]["event"] for r in records(sid) if kind(r) == "model.call"]


def test_model_call_holds_the_text_every_tool_use_and_a_thinking_marker(tmp_path: Path) -> None:
    """A response written one block per line (thinking, text, two tool uses, each line with
    the final stop reason) is one model.call: its text, both tool uses, and the thinking
    only as a marker of its size and digest; it lands before the first intent."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.hook("UserPromptSubmit", prompt="go")
    thinking = "The user wants the costs; read the file first."
    s.write(*_block_lines("msg_A", [
        {"type": "thinking", "thinking": thinking, "signature": "c2lnbmF0dXJl"},
        {"type": "text", "text": "I will run both checks."},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
        {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}}], "tool_use"))
    s.hook("PreToolUse", **_bash("toolu_1"))
    s.hook("PreToolUse", **_bash("toolu_2"))
    calls = _calls()
    digest = "sha256:" + hashlib.sha256(thinking.encode()).hexdigest()
    assert [("msg_A", "I will run both checks.", ["toolu_1", "toolu_2"], "tool_use",
             {"omitted_live_only": {"bytes": len(thinking), "sha256": digest}})] == [
        (c["message_id"], c["text"], c["tool_use_ids"], c["stop_reason"], c["thinking"])
        for c in calls]
    assert thinking not in journal.log_path(SID).read_text()
    order = [(kind(r), r["payload"].get("event", r["payload"].get("record", {})).get(
        "tool_use_id")) for r in records(SID)]
    assert order.index(("model.call", None)) < order.index(("side_effect_intent", "toolu_1"))


def test_a_text_only_message_has_no_thinking_and_a_tool_only_one_no_text(tmp_path: Path) -> None:
    """``text`` is null for a response that said nothing, ``thinking`` null without any."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.write(*_block_lines("msg_A", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                     "input": {}}], "tool_use"))
    s.hook("PreToolUse", **_bash("toolu_1"))
    s.write(_result("toolu_1", "ok", False),
            *_block_lines("msg_B", [{"type": "text", "text": "first"},
                                    {"type": "text", "text": "second"}], "end_turn", 5))
    s.hook("Stop", stop_hook_active=False)
    assert [(None, None, ["toolu_1"]), ("first\nsecond", None, [])] == [
        (c["text"], c["thinking"], c["tool_use_ids"]) for c in _calls()]


def test_lines_read_after_their_message_was_recorded_are_a_second_part(tmp_path: Path) -> None:
    """A response whose lines reach the transcript in two reads gives two model.call records
    of one message id: the second (``part`` 2) holds only what is new; nothing is lost or
    recorded twice."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    lines = _block_lines("msg_A", [
        {"type": "text", "text": "running one"},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}},
        {"type": "text", "text": "and two"},
        {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}}], "tool_use")
    s.write(*lines[:2])
    s.hook("PreToolUse", **_bash("toolu_1"))
    s.write(*lines[2:])
    s.hook("PreToolUse", **_bash("toolu_2"))
    s.hook("PostToolUse", **_bash("toolu_2"), tool_response={"stdout": ""})
    assert [("msg_A", None, "running one", ["toolu_1"]),
            ("msg_A", 2, "and two", ["toolu_2"])] == [
        (c["message_id"], c.get("part"), c["text"], c["tool_use_ids"]) for c in _calls()]
    # each part before the intent it chose (Claude Code decides these calls: no start yet)
    kinds = [kind(r) for r in records(SID)]
    assert ["model.call", "side_effect_intent", "model.call", "side_effect_intent"] == kinds[1:5]


def test_a_message_still_streaming_without_a_tool_waits_for_its_end(tmp_path: Path) -> None:
    """Lines without a stop reason or a tool use yet (a host that writes as it streams) are
    kept for the next read: the message is still one record."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.write(_assistant("msg_A", [{"type": "text", "text": "part one"}], None, 1))
    s.hook("UserPromptSubmit", prompt="go")
    assert [] == _calls()
    s.write(_assistant("msg_A", [{"type": "text", "text": "part two"}], "end_turn", 2))
    s.hook("Stop", stop_hook_active=False)
    assert [("part one\npart two", None)] == [(c["text"], c.get("part")) for c in _calls()]


def test_a_large_text_is_capped_like_a_tool_output(tmp_path: Path) -> None:
    """A text over the journal's string limit becomes an omitted_live_only marker that pins
    it (size and SHA-256), as a large tool output does."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    text = "quokka " * 6000
    s.write(_assistant("msg_A", [{"type": "text", "text": text}], "end_turn", 1))
    s.hook("Stop", stop_hook_active=False)
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert [{"omitted_live_only": {"bytes": len(text), "sha256": digest}}] == [
        c["text"] for c in _calls()]


def _counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets of every transcript read from now on (no tool use waited for yet)."""
    reads: list[int] = []
    real = transcript._read_from

    def read_from(path: str, offset: int) -> tuple[int, bytes, int] | None:
        reads.append(offset)
        return real(path, offset)

    monkeypatch.setattr(transcript, "_read_from", read_from)
    monkeypatch.setattr(transcript, "_WAITED", set())
    return reads


def _counted_polls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes every look at the transcript's size (a wait's poll) compared with."""
    polls: list[int] = []
    real = transcript._changed

    def changed(path: str, size: int) -> bool:
        polls.append(size)
        return real(path, size)

    monkeypatch.setattr(transcript, "_changed", changed)
    monkeypatch.setattr(transcript, "_WAITED", set())
    return polls


def test_pre_tool_use_waits_for_the_transcript_to_show_its_tool_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host writes the response while PreToolUse reads the transcript: the prefetch
    reads again until the tool use is there, so ingestion records the model call."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    log = str(journal.log_path(SID))
    reads: list[int] = []
    real = transcript._read_from

    def read_from(path: str, offset: int) -> tuple[int, bytes, int] | None:
        got = real(path, offset)
        reads.append(len(got[1]) if got else -1)
        if len(reads) == 1:  # the host writes the response just after the first read
            s.write(*_block_lines("msg_A", [{"type": "text", "text": "run it"},
                                            {"type": "tool_use", "id": "toolu_9",
                                             "name": "Bash", "input": {}}], "tool_use"))
        return got

    monkeypatch.setattr(transcript, "_read_from", read_from)
    monkeypatch.setattr(transcript, "_WAITED", set())
    transcript.prefetch(log, str(s.transcript), tool_use_id="toolu_9")
    assert b"toolu_9" in transcript._PREFETCHED[str(s.transcript)][1]
    assert (0, True) == (reads[0], len(reads) >= 2)
    with journal.transaction(log) as txn:
        transcript.ingest(txn, str(s.transcript))
    assert [["toolu_9"]] == [c["tool_use_ids"] for c in _calls()]


def test_pre_tool_use_waits_for_the_line_that_holds_its_tool_use_to_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host is still writing the line that chose the tool when PreToolUse first reads:
    the tool use id is there but the line has no end yet. The wait goes on until the line
    ends, so the model call is journaled before the tool's intent (a torn last line is
    left for a later read, which would journal the call after the intent)."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    log = str(journal.log_path(SID))
    line = json.dumps(_block_lines("msg_A", [{"type": "tool_use", "id": "toolu_7",
                                              "name": "Bash", "input": {}}], "tool_use")[0])
    half = len(line) // 2 + line.index("toolu_7") // 2 + 10
    assert "toolu_7" in line[:half]
    with s.transcript.open("a") as fh:
        fh.write(line[:half])
    reads = _counted_reads(monkeypatch)

    def end_line() -> None:  # the host ends the line a little later, as PreToolUse waits
        with s.transcript.open("a") as fh:
            fh.write(line[half:] + "\n")

    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "5")
    later = threading.Timer(0.05, end_line)
    later.start()
    started = time.monotonic()
    try:
        transcript.prefetch(log, str(s.transcript), tool_use_id="toolu_7")
    finally:
        later.join()
    # read at first (half a line), then again once the size moved: not once per poll
    assert 2 == len(reads), reads
    assert time.monotonic() - started < 4
    with journal.transaction(log) as txn:
        transcript.ingest(txn, str(s.transcript))
    assert [["toolu_7"]] == [c["tool_use_ids"] for c in _calls()]


def test_the_wait_is_bounded_and_skipped_for_a_known_tool_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool use the transcript never shows ends the wait at SMLLM_TRANSCRIPT_WAIT; one an
    earlier read already met is not waited for at all."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.write(*_block_lines("msg_A", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                     "input": {}}], "tool_use"))
    s.hook("PreToolUse", **_bash("toolu_1"))
    log = str(journal.log_path(SID))
    reads = _counted_reads(monkeypatch)
    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "0.05")
    transcript.prefetch(log, str(s.transcript), tool_use_id="toolu_1")
    assert 1 == len(reads)
    sizes = _counted_polls(monkeypatch)
    started = time.monotonic()
    transcript.prefetch(log, str(s.transcript), tool_use_id="toolu_never")
    waited = time.monotonic() - started
    # looked at the size until the wait was over; read once, as nothing was written
    assert 0.05 <= waited < 5, waited
    assert len(sizes) >= 1, sizes
    assert 2 == len(reads), reads


def test_pre_tool_use_waits_for_a_transcript_the_host_has_not_created_yet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new session's first tool can start before Claude Code creates its transcript: the
    wait reads again until the file is there and shows the tool use (CI saw the first
    model call journaled after its intent when an absent file ended the wait at once)."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.transcript.unlink(missing_ok=True)
    log = str(journal.log_path(SID))
    reads: list[int] = []
    real = transcript._read_from

    def read_from(path: str, offset: int) -> tuple[int, bytes, int] | None:
        got = real(path, offset)
        reads.append(len(got[1]) if got else -1)
        if len(reads) == 2:  # the host creates the file after two reads found none
            s.write(*_block_lines("msg_A", [{"type": "tool_use", "id": "toolu_3",
                                             "name": "Bash", "input": {}}], "tool_use"))
        return got

    monkeypatch.setattr(transcript, "_read_from", read_from)
    monkeypatch.setattr(transcript, "_WAITED", set())
    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "5")
    transcript.prefetch(log, str(s.transcript), tool_use_id="toolu_3")
    assert [-1, -1] == reads[:2]
    assert len(reads) >= 3
    with journal.transaction(log) as txn:
        transcript.ingest(txn, str(s.transcript))
    assert [["toolu_3"]] == [c["tool_use_ids"] for c in _calls()]


def test_a_transcript_that_never_appears_is_waited_for_once_and_briefly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host that names a transcript it never writes (no session persistence) costs one
    wait of at most ABSENT_SECONDS, then none for the rest of the session; a transcript
    that is there but lacks the tool use keeps the longer wait."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.transcript.unlink(missing_ok=True)
    log = str(journal.log_path(SID))
    reads = _counted_reads(monkeypatch)
    monkeypatch.setattr(transcript, "ABSENT_SECONDS", 0.05)
    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "30")
    per_call = []
    for n in range(3):
        before = len(reads)
        transcript.prefetch(log, str(s.transcript), tool_use_id=f"toolu_{n}")
        with journal.transaction(log) as txn:
            transcript.ingest(txn, str(s.transcript))
        per_call.append(len(reads) - before)
    # polled until ABSENT_SECONDS, not for SMLLM_TRANSCRIPT_WAIT's 30 s
    assert 2 < per_call[0] < 200, per_call
    # then: one read by the prefetch, one by the ingest, no wait
    assert [2, 2] == per_call[1:], per_call


def test_a_transcript_path_that_is_no_file_is_not_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO, a folder or a device named as the transcript never becomes one: a read and
    a last look, no wait (and nothing blocks on the FIFO)."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    log = str(journal.log_path(SID))
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    reads = _counted_reads(monkeypatch)
    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "30")
    for n, path in enumerate((fifo, folder, Path("/dev/null"))):
        before = len(reads)
        transcript.prefetch(log, str(path), tool_use_id=f"toolu_{n}")
        assert 2 == len(reads) - before, path


@pytest.mark.parametrize("swap", ["fifo", "link-to-device", "folder"])
def test_a_transcript_swapped_during_the_wait_ends_it_without_blocking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str) -> None:
    """Attack: while PreToolUse waits (a regular transcript without the tool use), the file
    is replaced by a FIFO, a link to a device or a folder. The check of size and file type
    sees it (an empty transcript and a FIFO have the same size),
    the read refuses what is no regular file, and the wait ends at once: nothing blocks on
    the FIFO, and the 30 s wait is not served out."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    log = str(journal.log_path(SID))
    path = s.transcript

    def replace() -> None:
        path.rename(tmp_path / "was.jsonl")
        if swap == "fifo":
            os.mkfifo(path)
        elif swap == "link-to-device":
            path.symlink_to("/dev/zero")
        else:
            path.mkdir()

    reads = _counted_reads(monkeypatch)
    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "30")
    later = threading.Timer(0.05, replace)
    later.start()
    started = time.monotonic()
    try:
        transcript.prefetch(log, str(path), tool_use_id="toolu_swapped")
    finally:
        later.join()
    assert time.monotonic() - started < 10
    assert len(reads) >= 2, reads  # the first read, then the one that found no file
    with journal.transaction(log) as txn:  # the hook goes on: nothing new is recorded
        transcript.ingest(txn, str(path))
    assert [] == _calls()


SECRETS: list[dict[str, str]] = json.loads(
    (Path(__file__).parent / "fixtures" / "secrets" / "corpus.json").read_text())["secrets"]


def _secret_forms(secret: str) -> set[str]:
    """The secret as it can appear in a JSON document (raw, escaped, line by line)."""
    forms = {secret, json.dumps(secret)[1:-1]}
    forms.update(ln for ln in secret.splitlines() if len(ln) >= 16 and "-----" not in ln)
    return forms


def test_redacted_export_removes_secrets_the_model_said(tmp_path: Path) -> None:
    """Every secret of the redaction corpus, said by the model (one response each), is in the
    raw export's model.call text and in none of the redacted export."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    for n, entry in enumerate(SECRETS):
        said = entry["text"] if "key" not in entry else json.dumps({entry["key"]: entry["text"]})
        s.write(_assistant(f"msg_{n}", [{"type": "text", "text": f"I found this: {said}"}],
                           "end_turn", n))
    s.hook("Stop", stop_hook_active=False)
    assert len(SECRETS) == len([c for c in _calls() if c["text"]])
    docs = {}
    for name, flags in (("raw", ()), ("redacted", ("--redacted",))):
        out = tmp_path / f"{name}.json"
        proc = smllm("export", "--journal", str(journal.log_path(SID)), "--out", str(out),
                     *flags)
        assert 0 == proc.returncode, proc.stderr
        docs[name] = json.loads(out.read_text())
    texts = {name: "\n".join(
        json.dumps(e["envelope"]["payload"]["event"]["text"]) for e in doc["events"]
        if e.get("kind") == "record"
        and (e["envelope"]["payload"].get("event") or {}).get("kind") == "model.call")
        for name, doc in docs.items()}
    missing = [e["kind"] for e in SECRETS if not any(f in texts["raw"]
                                                     for f in _secret_forms(e["secret"]))]
    survived = [e["kind"] for e in SECRETS if any(f in texts["redacted"]
                                                  for f in _secret_forms(e["secret"]))]
    assert ([], []) == (missing, survived)
    assert texts["redacted"].count("I found this: ") == len(SECRETS)


def test_a_message_left_pending_by_an_older_sidecar_still_records(tmp_path: Path) -> None:
    """A sidecar written before model calls had content (a pending message without
    ``texts``, ``emitted`` as a list) is read on: the message gets its text when it ends."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    s.write(_assistant("msg_A", [{"type": "text", "text": "one"}], None, 1))
    s.hook("UserPromptSubmit", prompt="go")
    log = journal.log_path(SID)
    with journal.transaction(log) as txn:
        st = dict(txn.state["transcript"])
        st.update(pending={"msg_A": {"id": "msg_A", "uuid": "u-msg_A-1", "timestamp": None,
                                     "tool_use_ids": [], "model": "claude-opus-5-5"}},
                  emitted=["msg_0"])
        for key in ("lines", "tools"):
            st.pop(key, None)
        txn.set_state("transcript", st)
    s.write(_assistant("msg_A", [{"type": "text", "text": "two"},
                                 {"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {}}], "tool_use", 2))
    s.hook("PreToolUse", **_bash("toolu_1"))
    assert [("two", "msg_A", ["toolu_1"])] == [
        (c["text"], c["message_id"], c["tool_use_ids"]) for c in _calls()]


def test_waits_stop_after_misses_in_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transcript that never shows the tool uses in time (three waits in a row ended
    without them) is not waited for again in that session; a wait that finds its tool use
    starts the count again."""
    s = Session(tmp_path)
    s.hook("SessionStart", source="startup")
    log = str(journal.log_path(SID))
    polls = _counted_polls(monkeypatch)
    monkeypatch.setenv("SMLLM_TRANSCRIPT_WAIT", "0.03")

    def pre_tool_use(tid: str) -> int:
        """How many times this PreToolUse looked at the transcript while it waited."""
        polls.clear()
        transcript.prefetch(log, str(s.transcript), tool_use_id=tid)
        with journal.transaction(log) as txn:
            transcript.ingest(txn, str(s.transcript))
        return len(polls)

    s.write(*_block_lines("msg_A", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                     "input": {}}], "tool_use"))
    assert 0 == pre_tool_use("toolu_1")  # found at once: no wait, the count at 0
    assert [True, True] == [pre_tool_use("toolu_x1") > 0, pre_tool_use("toolu_x2") > 0]
    s.write(*_block_lines("msg_B", [{"type": "tool_use", "id": "toolu_2", "name": "Bash",
                                     "input": {}}], "tool_use", 3))
    assert 0 == pre_tool_use("toolu_2")  # found: the count starts again
    misses = [pre_tool_use(f"toolu_y{n}") > 0 for n in range(4)]
    assert [True, True, True, False] == misses
