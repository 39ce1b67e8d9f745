"""The clock: ISO stamps round-trip, ids honour SMLLM_IDS across processes, doctests hold."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import PYTHON
from smllm.base import clock, paths


@given(st.integers(min_value=0, max_value=253402300799999))
def test_iso_round_trip(ms: int) -> None:
    """parse_iso_ms inverts iso_utc for every millisecond from 1970 to 9999."""
    assert ms == clock.parse_iso_ms(clock.iso_utc(ms))


def test_smllm_now_freezes_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """SMLLM_NOW is the clock; a non-integer is a usage error that says how to fix it."""
    monkeypatch.setenv("SMLLM_NOW", "1767603600000")
    assert (clock.now_ms(),
                                                           clock.iso_utc(clock.now_ms())) == (1767603600000, "2026-01-05T09:00:00.000Z")
    monkeypatch.setenv("SMLLM_NOW", "soon")
    with pytest.raises(Exception, match=r"SMLLM_NOW='soon' is not an integer \(set it to Unix"):
        clock.now_ms()


def test_planned_ids_are_handed_out_once_across_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """SMLLM_IDS entries go to the first request for their prefix, once per store."""
    import subprocess

    monkeypatch.setenv("SMLLM_IDS", "sm-nqvfvw,i-419405,i-000001")
    code = "import sys; from smllm.base import clock; print(clock.new_id(sys.argv[1]))"
    taken = [subprocess.run([PYTHON, "-c", code, p], capture_output=True, text=True,
                            check=True).stdout.strip() for p in ("i-", "sm-", "i-", "i-")]
    assert taken[:3] == ["i-419405", "sm-nqvfvw", "i-000001"]
    assert taken[3].startswith("i-")
    assert taken[3] not in taken[:3]
    assert 8 == len(taken[3])


@pytest.mark.parametrize("module", [clock, paths])
def test_module_doctests(module: object) -> None:
    """The examples in the modules' docstrings hold."""
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert (result.failed, result.attempted > 0) == (0, True)
