"""Reviewers: strict verdict parsing, the judge's request, the command reviewer's failures."""


from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from judge_server import judge_server
from smllm.gate import reviewers
from smllm.gate.reviewers import command, llm_judge

REQUEST = reviewers.Request("Bash", {"command": "rm -rf x"}, "/tmp", "s1", "pa-1",
                            "fs.delete-recursive-workspace", "deletes recursively x", ("f1",))

PARSE = [
    ('{"verdict": "allow_once", "reason": "ok"}', ("allow_once", "ok")),
    ('  {"verdict": "reject", "reason": "no"}\n', ("reject", "no")),
    ('```json\n{"verdict": "always_allow_in_workspace", "reason": "safe"}\n```',
     ("always_allow_in_workspace", "safe")),
    ('{"verdict": "approve", "reason": "x"}', ValueError),
    ('{"verdict": "allow_once", "reason": ""}', ValueError),
    ('{"verdict": "allow_once", "reason": "x", "also": 1}', ValueError),
    ('["allow_once"]', ValueError),
    ("allow_once", ValueError),
    ('{"verdict": "allow_once", "reason": "x"} {"verdict": "reject", "reason": "y"}', ValueError),
]


@pytest.mark.parametrize(("text", "expected"), PARSE)
def test_parse_verdict(text: str, expected: object) -> None:
    """Only exactly one {verdict, reason} object with a known verdict is accepted."""
    if expected is ValueError:
        with pytest.raises(ValueError, match=r"verdict|JSON"):
            reviewers.parse_verdict(text)
        return
    assert expected == reviewers.parse_verdict(text)


def test_judge_request_is_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge gets the versioned prompt with the marker; the digest covers the exact bytes."""
    with judge_server() as server:
        server.verdict("reject", "no")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url + "/")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-x")
        result = llm_judge.review(REQUEST, {"model": "m-1", "timeout": 5})
    sent = server.bodies[0]
    body = json.loads(sent)
    expected = ("reject", "sha256:" + hashlib.sha256(sent).hexdigest(), "m-1", True, 0)
    assert expected == (result.choice, result.source["context_digest"], body["model"],
                        "smllm-approval-judge prompt v2" in body["system"], body["temperature"])


def test_judge_without_key_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key: a failure (never an allow), with the reason."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    result = llm_judge.review(REQUEST, {"base_url": "http://127.0.0.1:9"})
    assert (None, "neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set") == (
        result.choice, result.error)


@pytest.mark.parametrize(("script", "error_start"), [
    ("import sys; sys.exit(3)", "the command reviewer exited 3"),
    ("print('yes please')", "verdict is not one JSON object"),
    ("import time; time.sleep(5)", "the command reviewer timed out after 0.5s"),
])
def test_command_failures(tmp_path: Path, script: str, error_start: str) -> None:
    """A command reviewer that fails, talks garbage or hangs never allows."""
    result = command.review(REQUEST, {"argv": [sys.executable, "-c", script], "timeout": 0.5})
    assert (None, True) == (result.choice, str(result.error).startswith(error_start))


def test_command_sees_request(tmp_path: Path) -> None:
    """The command reviewer reads the request JSON and its digest is of those bytes."""
    out = tmp_path / "seen.json"
    script = (f"import sys, json; data = sys.stdin.buffer.read(); open({str(out)!r}, 'wb')"
              f".write(data); print(json.dumps({{'verdict': 'allow_once', 'reason': 'ok'}}))")
    result = command.review(REQUEST, {"argv": [sys.executable, "-c", script]})
    seen = out.read_bytes()
    assert ("allow_once", "sha256:" + hashlib.sha256(seen).hexdigest(), "rm -rf x") == (
        result.choice, result.source["context_digest"],
        json.loads(seen)["tool_input"]["command"])


def test_unknown_failure_is_contained() -> None:
    """A reviewer crashing inside is reported as a failure, not raised."""
    result = reviewers.review("command", REQUEST, {"argv": None})
    assert (None, True) == (result.choice, result.error is not None)
