"""The e2e harness itself: mock queues, request log, kill_after, cleanup."""


from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from harness import Harness, MockServer
from mock_anthropic import JUDGE_MARKER

pytestmark = pytest.mark.e2e


def _post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    req = urllib.request.Request(url + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _judge_body(stream: bool = False) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 50, "stream": stream,
            "system": [{"type": "text", "text": f"You are the {JUDGE_MARKER} v1."}],
            "messages": [{"role": "user", "content": "rm -rf build?"}]}


def _text_of(obj: dict[str, Any]) -> str:
    if obj.get("type") == "error":
        return str(obj["error"]["message"])
    return "".join(b.get("text", "") for b in obj["content"])


def _sse_text(data: bytes) -> str:
    """The text a streamed reply spells out, if it ends with message_stop."""
    events = [json.loads(line[6:]) for line in data.decode().splitlines()
              if line.startswith("data: ")]
    assert "message_stop" == events[-1]["type"]
    return "".join(e["delta"].get("text", "") for e in events
                   if e["type"] == "content_block_delta")


@pytest.fixture
def mock(tmp_path: Path) -> Any:
    server = MockServer(tmp_path / "mock")
    try:
        yield server
    finally:
        server.stop()


JUDGE_CASES = [
    ({"text": '{"verdict": "allow"}'}, 200, '{"verdict": "allow"}'),
    ({"text": "garbage"}, 200, "garbage"),
    ({"text": "x", "status": 500}, 500, "mock: scripted status 500"),
]


@pytest.mark.parametrize(("entry", "status", "needle"), JUDGE_CASES)
def test_judge_queue_answers_in_order(mock: MockServer, entry: dict[str, Any], status: int,
                                      needle: str) -> None:
    """A tool-less request whose system names the judge marker takes the judge queue."""
    mock.control({"judge": [entry], "script": [{"text": "main turn"}]})
    code, data = _post(mock.url, _judge_body())
    assert (status, needle) == (code, _text_of(json.loads(data)))
    assert [("judge", 0)] == [(e["kind"], e["index"]) for e in mock.entries()]
    assert {"cursor": 0, "judge_cursor": 1} == {k: mock.state()[k]
                                                for k in ("cursor", "judge_cursor")}


def test_judge_queue_delay_stream_and_exhaustion(mock: MockServer) -> None:
    """A delayed entry waits, streaming works, and an empty queue answers a non-verdict."""
    mock.control({"judge": [{"text": "late", "delay": 0.3}, {"text": "streamed"}]})
    code, data = _post(mock.url, _judge_body())
    assert (200, "late") == (code, json.loads(data)["content"][0]["text"])
    code, data = _post(mock.url, _judge_body(stream=True))
    assert (200, "streamed") == (code, _sse_text(data))
    code, data = _post(mock.url, _judge_body())
    assert "[mock: judge queue exhausted]" == json.loads(data)["content"][0]["text"]
    assert [0.3, 0.0, 0.0] == [e["delay"] for e in mock.entries()]


def test_side_request_does_not_consume_queues(mock: MockServer) -> None:
    """A tool-less request without the marker is a side request."""
    mock.control({"judge": [{"text": "j"}], "script": [{"text": "s"}]})
    body = dict(_judge_body(), system="Generate a title")
    code, _ = _post(mock.url, body)
    assert (200, "side", 0, 0) == (code, mock.entries()[0]["kind"], mock.state()["cursor"],
                                   mock.state()["judge_cursor"])


def test_run_records_requests_and_kill_after_stops_the_group(claude: Harness) -> None:
    """A run sees its own requests; kill_after SIGKILLs claude mid-tool, and nothing lingers."""
    marker = claude.root / "started"
    script = [{"tool_use": {"name": "Bash", "input": {
        "command": f"touch {marker} && sleep 60", "description": "slow"}}}]
    run = claude.run("go", script=script, permission_mode="bypass",
                     kill_after=lambda r: marker.exists(), timeout=60)
    assert (True, False) == (run.killed, run.timed_out)
    assert run.duration < 30
    assert 1 == len(run.requests)
    assert run.model_saw("go")
    assert not run.model_saw("never-sent-text")
    with pytest.raises(ProcessLookupError):
        os.killpg(run.extra["pgid"], 0)
    second = claude.run("again", script=[{"text": "fine"}], kill_after=30.0)
    assert (0, "fine", 1) == (second.returncode, (second.result or {}).get("result"),
                              len(second.requests))
