"""Fixtures of the end-to-end tests: the pinned Claude Code CLI and a per-test harness."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_cli import ensure_claude, ensure_wheels
from harness import Harness, snapshot_repo


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e is an e2e test, even if a mark was forgotten."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The native binary of the pinned CLI (installed into the cache on first use)."""
    return ensure_claude()


@pytest.fixture(scope="session")
def plugin_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean copy of the repository (no .venv, no caches): the plugin as users get it."""
    return snapshot_repo(tmp_path_factory.mktemp("clone") / "smllm")


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """Wheels of smllm's dependencies, so pip in the tests never needs the network."""
    return ensure_wheels()


@pytest.fixture
def claude(tmp_path: Path, claude_bin: Path, wheelhouse: Path,
           smllm_home: Path) -> Iterator[Harness]:
    """A scratch HOME, git project, SMLLM_HOME and mock model; cleaned up by PID."""
    with contextlib.closing(Harness(tmp_path / "e2e", claude_bin, smllm_home, wheelhouse)) as h:
        yield h


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The launcher of the pinned Codex CLI (installed into the cache on first use)."""
    from codex_cli import ensure_codex

    return ensure_codex()


@pytest.fixture
def codex(tmp_path: Path, codex_bin: Path, smllm_home: Path) -> Iterator[object]:
    """A scratch HOME and CODEX_HOME, git project, SMLLM_HOME and mock Responses API."""
    from codex_harness import CodexHarness

    with contextlib.closing(CodexHarness(tmp_path / "cx", codex_bin, smllm_home)) as h:
        yield h


@pytest.fixture(scope="session")
def copilot_bin() -> Path:
    """The launcher of the pinned GitHub Copilot CLI (installed into the cache on first use)."""
    from copilot_cli import ensure_copilot

    return ensure_copilot()


@pytest.fixture
def copilot(tmp_path: Path, copilot_bin: Path, smllm_home: Path) -> Iterator[object]:
    """A scratch HOME, git project, SMLLM_HOME and mock Anthropic API for Copilot."""
    from copilot_harness import CopilotHarness

    with contextlib.closing(CopilotHarness(tmp_path / "cp", copilot_bin, smllm_home)) as h:
        yield h


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    """The launcher of the pinned Gemini CLI (installed into the cache on first use)."""
    from gemini_cli import ensure_gemini

    return ensure_gemini()


@pytest.fixture
def gemini(tmp_path: Path, gemini_bin: Path, smllm_home: Path) -> Iterator[object]:
    """A scratch HOME (~/.gemini), git project, SMLLM_HOME and mock Gemini API."""
    from gemini_harness import GeminiHarness

    with contextlib.closing(GeminiHarness(tmp_path / "gm", gemini_bin, smllm_home)) as h:
        yield h
