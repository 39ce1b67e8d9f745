"""``smllm verify`` names the first bad line when a record is edited, deleted, inserted or swapped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import smllm
from journalgen import write_session
from smllm import journal
from smllm.base import paths
from smllm.journal import lookup
from smllm.journal.verify import verify


def _log(tmp_path: Path, n: int = 8) -> Path:
    path = tmp_path / "session.jsonl"
    for i in range(n):
        journal.append(path, [journal.event("step", i=i)])
    return path


def _edit(lines: list[bytes]) -> list[bytes]:
    rec = json.loads(lines[4])
    rec["payload"]["event"]["i"] = 99
    lines[4] = json.dumps(rec, separators=(",", ":")).encode()
    return lines


def _edit_keeping_length(lines: list[bytes]) -> list[bytes]:
    lines[4] = lines[4].replace(b'"i":4', b'"i":7')
    return lines


def _delete(lines: list[bytes]) -> list[bytes]:
    del lines[4]
    return lines


def _insert_copy(lines: list[bytes]) -> list[bytes]:
    lines.insert(4, lines[2])
    return lines


def _insert_garbage(lines: list[bytes]) -> list[bytes]:
    lines.insert(4, b"not a record")
    return lines


def _swap(lines: list[bytes]) -> list[bytes]:
    lines[4], lines[5] = lines[5], lines[4]
    return lines


def _delete_first(lines: list[bytes]) -> list[bytes]:
    del lines[0]
    return lines


CASES: list[tuple[str, Callable[[list[bytes]], list[bytes]], int]] = [
    ("edited", _edit, 5),
    ("edited, same length", _edit_keeping_length, 5),
    ("deleted", _delete, 5),
    ("inserted copy", _insert_copy, 5),
    ("inserted garbage", _insert_garbage, 5),
    ("swapped", _swap, 5),
    ("first deleted", _delete_first, 1),
]


@pytest.mark.parametrize(("name", "tamper", "bad_line"), CASES, ids=[c[0] for c in CASES])
def test_first_bad_line_is_named(tmp_path: Path, name: str,
                                 tamper: Callable[[list[bytes]], list[bytes]], bad_line: int) -> None:
    """Tampering is caught and the first offending line is reported."""
    path = _log(tmp_path)
    assert verify(path).ok
    lines = path.read_bytes().split(b"\n")[:-1]
    path.write_bytes(b"\n".join(tamper(lines)) + b"\n")
    report = verify(path)
    first = report.first()
    assert first is not None
    assert bad_line == first.line
    proc = smllm("verify", str(path))
    assert 1 == proc.returncode
    assert proc.stdout.startswith(f"FAILED: {path}:{bad_line}: ")


def test_clean_log_passes(tmp_path: Path) -> None:
    """An untouched log verifies with exit 0."""
    path = _log(tmp_path)
    proc = smllm("verify", str(path))
    assert (0, f"ok: {path}: 8 records, hash chain intact, invariants hold\n") == (
        proc.returncode, proc.stdout)


def test_effect_without_intent_is_an_invariant_break(tmp_path: Path) -> None:
    """A started effect with no durable intent before it fails verification."""
    path = tmp_path / "session.jsonl"
    journal.append(path, [journal.event("proposed", turn=1)])
    journal.append(path, [journal.fact("tool_batch.effect.started", {"tool_use_id": "toolu_x"})])
    first = verify(path).first()
    assert first is not None
    assert (2, "effect toolu_x started without a durable side_effect_intent before it") == (
        first.line, first.what)


def test_idempotency_key_twice_is_an_invariant_break(tmp_path: Path) -> None:
    """Two intents with one idempotency key fail verification at the second."""
    path = tmp_path / "session.jsonl"
    for tid in ("toolu_1", "toolu_2"):
        journal.append(path, [journal.event("side_effect_intent", tool_use_id=tid,
                                            idempotency_key="idem-same")])
    first = verify(path).first()
    assert first is not None
    assert (2, "idempotency key idem-same already used on line 1") == (first.line, first.what)


@pytest.mark.parametrize(("rel", "expected"), [
    ("2026/01/05/s-1/session.jsonl", ("s-1", "main")),
    ("2026/01/05/s-1.0123456789ab/session.jsonl", ("s-1.0123456789ab", "main")),
    ("2026/01/05/s-1/subagent/agent-7/session.jsonl", ("s-1", "subagent/agent-7")),
    ("2026/01/05/s-1/other/agent-7/session.jsonl", None),
    ("by-id/s-1/session.jsonl", None),
    ("2026/01/05/s-1/state.json", None),
    ("../elsewhere/2026/01/05/s-1/session.jsonl", None),
])
def test_journal_identity_names_it_as_the_store_does(rel: str,
                                                     expected: tuple[str, str] | None) -> None:
    """A journal's (session id, stream) for the team store comes from where it lies in this
    machine's session store; a file elsewhere has none."""
    assert expected == lookup.identity(paths.sessions_dir() / rel)


def test_verify_chooses_a_journal_as_the_other_journal_commands_do(tmp_path: Path) -> None:
    """With no journal named, verify takes this folder's latest (as `export --last` does),
    not the latest of every folder; --last and a named journal work."""
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    write_session("aaaa0001-run", cwd=str(a), start_ms=1_767_603_600_000, prompt="in a")
    write_session("bbbb0001-run", cwd=str(b), start_ms=1_767_603_660_000, prompt="in b")
    chosen = [smllm("verify", *args, cwd=a).stdout.split(": ")[1]
              for args in ([], ["--last"], ["bbbb"])]
    assert [str(journal.log_path("aaaa0001-run"))] * 2 + [
        str(journal.log_path("bbbb0001-run"))] == chosen
