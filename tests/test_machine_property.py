"""Property (acceptance 6): any sequence of calls leaves a declared state; replay agrees.

An independent model of the fix machine predicts each outcome and the resulting state.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from machine_project import Project
from smllm.machine import engine, locations, session

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


class Model:
    """An independent model of the seed's fix machine: what each call must do."""

    def __init__(self) -> None:
        self.insts: dict[str, dict[str, Any]] = {}
        self.focus: str | None = None
        self.yielded = False
        self.blocks = 0
        self.chain = 0

    def fire(self, event: str, params: dict[str, str]) -> bool:
        ok = self._fire(event, params)
        self.blocks = 0
        if ok:
            self.yielded = event == "yield"
        return ok

    def _fire(self, event: str, params: dict[str, str]) -> bool:
        if self.focus is None:
            waiting = [i for i, v in self.insts.items() if v["status"] in ("paused", "unmatched")]
            if event == "enter" and params == {"stateMachine": "fix"}:
                self.focus = "new"
                return True
            if event == "resume" and waiting and params.get("instance") in waiting:
                self.focus = params["instance"]
                self.insts[self.focus]["status"] = "active"
                return True
            return False
        inst = self.insts[self.focus]
        if event == "reproduced" and inst["state"] == "TRIAGE" and set(params) == {"bugId"} \
                and re.fullmatch(r"^BUG-[0-9]+$", params["bugId"]):
            inst.update(state="FIX", ref=params["bugId"])
            return True
        if event == "fixed" and inst["state"] == "FIX" and not params:
            inst.update(state="DONE", status="done")
            self.focus = None
            return True
        if event == "yield" and set(params) <= {"note"}:
            return True
        if event in ("pause", "unmatched") and not params:
            inst["status"] = "paused" if event == "pause" else "unmatched"
            self.focus = None
            return True
        return False

    def stop(self, active: bool) -> str:
        if self.focus is None or self.yielded:
            self.yielded, self.blocks, self.chain = False, 0, 0
            return "accepted"
        if self.blocks > 0 or (active and self.chain >= engine.STOP_CHAIN_CAP):
            self.blocks, self.chain = 0, 0
            return "runaway"
        self.blocks += 1
        self.chain = (self.chain if active else 0) + 1
        return "block"


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
            bound = session.bind("claude", "h-1", str(project.root), project=str(project.root),
                                  now_ms=0)
            assert bound is not None
            key = bound[0]
            state, machines = session.location(key)
            model = Model()
            for i, step in enumerate(steps, start=1):
                state, machines = session.location(key)
                if step[0] == "stop":
                    expected = model.stop(step[1])
                    got = session.stop(key, stop_hook_active=step[1], now_ms=i).line["outcome"]
                else:
                    params = _params(step[1], step[2], state)
                    expected = "accepted" if model.fire(step[1], params) else "refused"
                    _, decision, _ = session.fire(key, step[1], params,
                                                  cwd=str(project.root), now_ms=i)
                    got = decision.line["outcome"]
                    if model.focus == "new":
                        model.focus = decision.line["instance"]
                        model.insts[model.focus] = {"state": "TRIAGE", "ref": None,
                                                    "status": "active"}
                assert expected == got, (step, model.__dict__)
                state, machines = session.location(key)
                _check_declared(state, machines)
                actual = {i: {k: v[k] for k in ("state", "ref", "status")}
                          for i, v in state["instances"].items()}
                assert (model.insts, model.focus) == (actual, state["focus"])
            lines = locations.read_audit(key)
            replayed = engine.replay(key, lines, machines)
            assert len(steps) + 1 == len(lines)
            assert {k: v for k, v in state.items() if k != "auditSize"} == {
                k: v for k, v in replayed.items() if k != "auditSize"}
        finally:
            if old is None:
                os.environ.pop("SMLLM_HOME", None)
            else:
                os.environ["SMLLM_HOME"] = old
