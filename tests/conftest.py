"""Shared fixtures: every test gets its own SMLLM_HOME and never touches the real home."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import allow_test_knobs
from smllm import worker

REAL_HOME = Path.home()


@pytest.fixture(autouse=True)
def smllm_home(tmp_path_factory: pytest.TempPathFactory,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point SMLLM_HOME at a fresh folder and clear the reproducibility knobs; the folder
    allows the hooks to honour the test knobs a test sets (``allow-test-knobs``: a hook
    ignores them without it, :func:`smllm.base.knobs.untested`)."""
    home = tmp_path_factory.mktemp("smllm-home")  # beside tmp_path: a test lists that whole
    home.chmod(0o700)
    allow_test_knobs(home)
    monkeypatch.setenv("SMLLM_HOME", str(home))
    # the native hook client runs the Python hook at once (no resident worker is started by
    # a test's hooks unless the test turns it on: tests/test_worker_*.py)
    monkeypatch.setenv("SMLLM_WORKER", "0")
    for var in ("SMLLM_NOW", "SMLLM_IDS", "SMLLM_SESSION", "SMLLM_FAULT", "CLAUDE_ENV_FILE",
                "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID",
                "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"):
        monkeypatch.delenv(var, raising=False)
    yield home
    _stop_workers(home)


def _stop_workers(folder: Path) -> None:
    """Kill, by PID, each resident worker whose stats file is under ``folder`` (a test's
    hooks started it)."""
    for key_folder in {stats.parent for stats in folder.rglob("worker-*.json")}:
        worker.stop(str(key_folder))


def _home_tree() -> dict[str, int]:
    """Every file and folder under smllm's real-home folders, with its mtime in ns (the
    installer's own environment, ``venv``, left out)."""
    found: dict[str, int] = {}
    for top in (REAL_HOME / ".local/share/smllm", REAL_HOME / ".local/state/smllm",
                REAL_HOME / ".config/smllm"):
        for folder, dirs, files in os.walk(top):
            if folder == str(top) and "venv" in dirs:
                dirs.remove("venv")
            for name in [*dirs, *files]:
                path = os.path.join(folder, name)
                try:
                    found[path] = os.lstat(path).st_mtime_ns
                except OSError:
                    continue
    return found


@pytest.fixture(autouse=True, scope="session")
def no_worker_left_behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Kill, by PID, any resident worker a test's hooks started and left running (its
    stats file under this run's temporary folders names it; it leads its own group)."""
    yield
    _stop_workers(tmp_path_factory.getbasetemp())


@pytest.fixture(autouse=True, scope="session")
def dont_write_to_home_directory() -> Iterator[None]:
    """Fail the run if any test wrote smllm data into the real home directory (a new,
    changed or removed file anywhere below smllm's folders there)."""
    before = _home_tree()
    yield
    after = _home_tree()
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    assert not changed, f"a test wrote into the real home: {changed[:20]}"


from pgserver import postgres, store_db  # noqa: E402,F401 - the real PostgreSQL fixtures
