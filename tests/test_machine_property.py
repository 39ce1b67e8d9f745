"""Property (acceptance 6): any sequence of calls leaves a declared state; replay agrees."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from machine_project import Project
from smllm.machine import engine, session, store

EVENTS = ["enter", "reproduced", "fixed", "yield", "pause", "unmatched", "resume", "bogus"]
PARAMS: dict[str, list[dict[str, str]]] = {
    "enter": [{"stateMachine": "fix"}, {"stateMachine": "nope"}, {}],
    "reproduced": [{"bugId": "BUG-1"}, {"bugId": "BUG-22"}, {"bugId": "bad"}, {}],
    "yield": [{}, {"note": "CI"}],
}
STEP = st.one_of(
    st.tuples(st.just("stop"), st.booleans()),
    st.tuples(st.just("fire"), st.sampled_from(EVENTS), st.integers(0, 3)),
)


def _params(event: str, pick: int, state: dict[str, Any]) -> dict[str, str]:
    if event == "resume":
        ids = list(state["instances"])
        return {"instance": ids[pick % len(ids)]} if ids else {"instance": "i-0"}
    options = PARAMS.get(event, [{}])
    return options[pick % len(options)]


def _check_declared(state: dict[str, Any], machines: dict[str, Any]) -> None:
    for inst in state["instances"].values():
        st_def = machines[inst["machine"]]["states"][inst["state"]]
        assert (inst["status"] == "done") == st_def["final"]
    focus = engine.focused(state)
    assert focus is None or focus["status"] == "active"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=14))
def test_any_sequence_stays_declared_and_replays(steps: list[tuple[Any, ...]]) -> None:
    """Every call leaves each instance in a declared state; replaying the audit matches."""
    old = os.environ.get("SMLLM_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SMLLM_HOME"] = str(Path(tmp) / "home")
        try:
            project = Project(Path(tmp) / "p")
            bound = session.bind("claude", "h-1", str(project.root), now_ms=0)
            assert bound is not None
            key = bound[0]
            state, machines = session.location(key)
            for i, step in enumerate(steps, start=1):
                state, machines = session.location(key)
                if step[0] == "stop":
                    session.stop(key, stop_hook_active=step[1], now_ms=i)
                else:
                    session.fire(key, step[1], _params(step[1], step[2], state),
                                 cwd=str(project.root), now_ms=i)
                state, machines = session.location(key)
                _check_declared(state, machines)
            lines = store.read_audit(key)
            replayed = engine.replay(key, lines, machines)
            assert len(steps) + 1 == len(lines)
            assert {k: v for k, v in state.items() if k != "auditSize"} == {
                k: v for k, v in replayed.items() if k != "auditSize"}
        finally:
            if old is None:
                os.environ.pop("SMLLM_HOME", None)
            else:
                os.environ["SMLLM_HOME"] = old
