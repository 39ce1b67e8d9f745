"""--redacted: no planted secret survives, look-alikes do, and only secrets change."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import smllm
from smllm import journal
from smllm.audit import redact

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "secrets" / "corpus.json").read_text())
SECRETS: list[dict[str, str]] = CORPUS["secrets"]
SURVIVORS: list[dict[str, str]] = CORPUS["survivors"]
PLACES = ("prompt", "tool input", "tool output", "nested json")


def test_corpus_is_large_and_varied() -> None:
    """The corpus holds at least 40 secrets of at least 15 kinds."""
    kinds = {s["kind"] for s in SECRETS}
    expected = (True, True)
    assert expected == (len(SECRETS) >= 40, len(kinds) >= 15)


def _plant(entry: dict[str, str], place: str, n: int) -> journal.Entry:
    """One journal entry carrying ``entry``'s secret in ``place``."""
    value: Any = {entry["key"]: entry["text"]} if "key" in entry else entry["text"]
    text = entry["text"] if "key" not in entry else json.dumps(value)
    if place == "prompt":
        return journal.event("proposed", turn=n, prompt=f"please use this: {text}")
    if place == "tool input":
        inp = {"command": f"echo start && {text}"} if "key" not in entry else value
        return journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                             tool_use_id=f"t{n}", idempotency_key=f"k{n}",
                             policy_decision="allow:policy", input=inp)
    if place == "tool output":
        return journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": f"t{n}", "outcome": "succeeded",
            "output": {"stdout": f"line one\n{text}\nline three", "stderr": ""}})
    return journal.fact("tool_batch.effect.terminal", {
        "tool_use_id": f"t{n}", "outcome": "succeeded",
        "output": {"config": {"deploy": [{"env": value, "note": "from the vault"}]}}})


def _session(tmp_path: Path) -> Path:
    log = tmp_path / "sid-secrets" / "session.jsonl"
    log.parent.mkdir()
    entries = [journal.fact("session.start", {"session_id": "sid-secrets"})]
    n = 0
    for entry in SECRETS:
        for place in PLACES:
            n += 1
            entries.append(_plant(entry, place, n))
    for s in SURVIVORS:
        entries.append(journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": "s", "outcome": "succeeded",
            "output": {"stdout": s["text"], "digest": s["text"]}}))
    journal.append(log, entries)
    return log


@pytest.fixture
def exports(tmp_path: Path) -> tuple[bytes, bytes]:
    log = _session(tmp_path)
    raw, red = tmp_path / "raw.json", tmp_path / "red.json"
    for out, flags in ((raw, ()), (red, ("--redacted",))):
        proc = smllm("export", "--journal", str(log), "--out", str(out), *flags)
        expected = 0
        assert expected == proc.returncode, proc.stderr
    return raw.read_bytes(), red.read_bytes()


def _forms(secret: str) -> set[str]:
    """The secret as it can appear in a JSON document (raw, escaped, line by line)."""
    escaped = json.dumps(secret)[1:-1]
    forms = {secret, escaped}
    forms.update(ln for ln in secret.splitlines() if len(ln) >= 16 and "-----" not in ln)
    return forms


def test_every_secret_is_planted_in_the_raw_export(exports: tuple[bytes, bytes]) -> None:
    """Sanity: the raw export does contain every secret (so the next test is meaningful)."""
    raw = exports[0].decode()
    expected = []
    assert expected == [s["kind"] for s in SECRETS if not any(f in raw for f in _forms(s["secret"]))]


def test_no_secret_survives_redaction(exports: tuple[bytes, bytes]) -> None:
    """No planted secret, in any place, appears in the redacted export."""
    red = exports[1].decode()
    survived = [(s["kind"], s["text"][:60]) for s in SECRETS
                if any(f in red for f in _forms(s["secret"]))]
    expected = []
    assert expected == survived


def test_look_alikes_survive_redaction(exports: tuple[bytes, bytes]) -> None:
    """Hex digests, UUIDs, git SHAs, base64 content and certificates are kept verbatim."""
    red = exports[1].decode()
    lost = [s["kind"] for s in SURVIVORS if json.dumps(s["text"])[1:-1] not in red]
    expected = []
    assert expected == lost


def _diff(a: Any, b: Any, path: str, out: list[tuple[str, str, str]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert list(a) == list(b), path
        for k in a:
            _diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append((path, str(a), str(b)))


def test_raw_and_redacted_differ_only_where_redacted(exports: tuple[bytes, bytes]) -> None:
    """Same structure; every changed value is a string that now holds a redaction marker."""
    raw, red = json.loads(exports[0]), json.loads(exports[1])
    changes: list[tuple[str, str, str]] = []
    _diff(raw, red, "$", changes)
    bad = [c for c in changes if c[0] != "$.redaction" and "[REDACTED:" not in c[2]]
    header = [c for c in changes if not c[0].startswith("$.events")]
    expected = ([], [("$.redaction", "raw", "redacted")])
    assert expected == (bad, header)
    assert len(changes) >= len(SECRETS) * len(PLACES)


def test_redaction_only_removes() -> None:
    """Outside the markers, the redacted text is a subsequence of the original."""
    for s in SECRETS:
        out = redact.redact_text(s["text"])
        rest = out
        for marker in {m for m in _markers(out)}:
            rest = rest.replace(marker, "")
        it = iter(s["text"])
        assert all(ch in it for ch in rest), (s["kind"], out)


def _markers(text: str) -> list[str]:

    return re.findall(r"\[REDACTED:[a-z_]+\]", text)


REDACT_CASES = [
    ("Authorization: Bearer abcdefghijkl", "Authorization: [REDACTED:authorization]"),
    ("export OPENAI_API_KEY=$OPENAI_API_KEY", "export OPENAI_API_KEY=$OPENAI_API_KEY"),
    ("password: ", "password: "),
    ("max_tokens=4096 and input_tokens: 12", "max_tokens=4096 and input_tokens: 12"),
    ("https://user:hunter22@example.com/x", "https://user:[REDACTED:url_password]@example.com/x"),
    ("see 550e8400-e29b-41d4-a716-446655440000", "see 550e8400-e29b-41d4-a716-446655440000"),
]


@pytest.mark.parametrize(("text", "expected"), REDACT_CASES, ids=[c[0][:30] for c in REDACT_CASES])
def test_redact_text_cases(text: str, expected: str) -> None:
    """Known inputs redact (or not) exactly as listed; references and counts are kept."""
    assert expected == redact.redact_text(text)


def test_redaction_is_deterministic() -> None:
    """The same input always gives the same output."""
    texts = [s["text"] for s in SECRETS]
    assert [redact.redact_text(t) for t in texts] == [redact.redact_text(t) for t in texts]


def test_module_examples() -> None:
    """The examples in smllm.audit.redact's docstring hold."""
    result = doctest.testmod(redact)
    expected = (0, True)
    assert expected == (result.failed, result.attempted > 0)
