"""Every row of shared/ref/bypass-corpus.md: evasions are never allowed, look-alikes are."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

from smllm.gate.shell import analyse

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "corpus"))
from cases import CASES, WORKSPACE_FILES

HOME = "/home/tester"
ACCEPTED = {
    "deny": {"deny", "ask"},
    "ask": {"ask", "deny"},
    "deny/ask": {"deny", "ask"},
    "allow": {"allow"},
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder holding the files the corpus commands name."""
    root = tmp_path_factory.mktemp("corpus") / "proj"
    (root / "build").mkdir(parents=True)
    for name, text in WORKSPACE_FILES.items():
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(
    ("row", "corpus", "command"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_corpus_row(workspace: Path, row: str, corpus: str, command: str) -> None:
    """The analyser's verdict is one the corpus accepts for this row."""
    actual = analyse(command, cwd=str(workspace), home=HOME).decision
    assert ACCEPTED[corpus] >= {actual}, f"{row}: {command!r} -> {actual}"


def test_corpus_counts(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Print the corpus counts: exact matches, and escalations where the corpus says deny."""
    counts: collections.Counter[str] = collections.Counter()
    for _row, corpus, command in CASES:
        actual = analyse(command, cwd=str(workspace), home=HOME).decision
        kind = "benign" if corpus == "allow" else "evasion"
        counts[f"{kind}:total"] += 1
        counts[f"{kind}:{'ok' if actual in ACCEPTED[corpus] else 'WRONG'}"] += 1
        if corpus in ("deny", "ask", "allow") and actual == corpus:
            counts[f"{kind}:exact"] += 1
    with capsys.disabled():
        print("\ncorpus counts:", dict(sorted(counts.items())))
    expected = {"evasion": counts["evasion:total"], "benign": counts["benign:total"]}
    assert expected == {"evasion": counts["evasion:ok"], "benign": counts["benign:ok"]}
