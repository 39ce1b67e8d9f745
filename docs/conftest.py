"""Docs are tests: every ``>>>`` example in docs/*.md runs with its own SMLLM_HOME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("SMLLM_HOME", str(tmp_path / "smllm-home"))
    for var in ("SMLLM_NOW", "SMLLM_IDS", "SMLLM_SESSION", "SMLLM_FAULT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    yield
