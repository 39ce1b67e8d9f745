"""Command and param guards (acceptance 4): evidence backs the claim, or the event is refused."""


from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from machine_project import Project, machine_yaml
from smllm.machine import engine, locations, session

EVENTS = ("    check:\n      description: Fire when the check holds.\n"
          "      params: { kind: { required: false, description: \"A kind.\" } }\n")


def _machine(guard: str) -> str:
    states = ("  A:\n    entry: { type: prompt, params: { text: \"Do A.\" } }\n"
              f"    on:\n      check:\n        target: B\n        guard: {guard}\n"
              "  B:\n    type: final\n")
    return machine_yaml(states, events=EVENTS)


def _fire(tmp_path: Path, guard: str, **params: str) -> tuple[bool, str, dict[str, object],
                                                               float]:
    project = Project(tmp_path / "p", {"m.smllm.yaml": _machine(guard)})
    _, key, _ = project.fire(None, "enter", stateMachine="m")
    start = time.monotonic()
    ok, _, text = project.fire(key, "check", **params)
    took = time.monotonic() - start
    return ok, text, locations.read_audit(key)[-1], took


CASES = [
    ("passing check", '{ type: command, params: { run: "echo all good", expect: pass } }',
     {}, True, None),
    ("failing check refuses with its output",
     '{ type: command, params: { run: "echo boom; exit 3", expect: pass } }', {}, False,
     "guard failed: check `echo boom; exit 3` failed (exit 3) but must pass"),
    ("a reproducing test must fail",
     '{ type: command, description: "the test must fail", '
     'params: { run: "exit 0", expect: fail } }', {}, False,
     "guard failed: the test must fail: check `exit 0` passed (exit 0) but must fail"),
    ("params reach the check as env vars, never as shell text",
     '{ type: command, params: { run: "test \\"$SMLLM_PARAM_kind\\" = \'a;b\'", '
     'expect: pass } }', {"kind": "a;b"}, True, None),
    ("paramIn", '{ type: paramIn, params: { param: kind, values: [x, w] } }', {"kind": "z"},
     False, "guard failed: kind must be one of: x, w"),
    ("not", '{ type: not, guards: [ { type: paramIn, params: { param: kind, values: [z] } } ] }',
     {"kind": "z"}, False, "guard failed: not (kind must be one of: z)"),
]


@pytest.mark.parametrize(("name", "guard", "params", "ok", "reason"), CASES,
                         ids=[c[0] for c in CASES])
def test_guards(tmp_path: Path, name: str, guard: str, params: dict[str, str], ok: bool,
                reason: str | None) -> None:
    """Each guard allows or refuses the transition, and the audit says why."""
    got_ok, _, line, _ = _fire(tmp_path, guard, **params)
    assert (ok, "accepted" if ok else "refused", reason) == (
        got_ok, line["outcome"], line["reason"])
    assert line["trace"], "every evaluated guard leaves a trace entry"


def test_failing_check_shows_its_output_and_is_traced(tmp_path: Path) -> None:
    """The refusal shows the check's output; the trace has its exit status and output."""
    ok, text, line, _ = _fire(
        tmp_path, '{ type: command, params: { run: "echo boom; exit 3", expect: pass } }')
    entry = line["trace"][0]
    assert (False, "<output>\nboom\n</output>\n") == (ok, text[text.index("<output>"):
                                                                text.index("Fire one")])
    assert ("command", 3, False, False, "boom\n") == (
        entry["guard"], entry["exit"], entry["timedOut"], entry["ok"], entry["output"])


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "opted-out"])
def test_hanging_check_is_stopped_at_its_timeout(tmp_path: Path, smllm_home: Path,
                                                 sandbox: bool) -> None:
    """A check that hangs is killed at the timeout with every process it started (in the
    sandbox, the whole namespace goes with bwrap; opted out, its process group) and the
    guard refuses. The background child is found on the host by its unique argument."""
    if not sandbox:
        smllm_home.mkdir(parents=True, exist_ok=True)
        (smllm_home / "config.toml").write_text("[guards]\nsandbox = false\n")
    mark = f"{600 + os.getpid() % 1000}.{time.time_ns() % 10**6:06d}"
    guard = ('{ type: command, params: { run: "sleep ' + mark + ' & sleep 0.3; '
             'echo started; wait", expect: pass, timeout: 2 } }')
    ok, text, line, took = _fire(tmp_path, guard)
    entry = line["trace"][0]
    time.sleep(0.2)
    assert (False, True, None, []) == (ok, entry["timedOut"], entry["exit"], _running(mark))
    assert ("started\n", "bwrap" if sandbox else "off") == (entry["output"], entry["sandbox"])
    assert f"guard failed: check `sleep {mark}" in line["reason"]
    assert "timed out after 2s and was stopped" in text
    assert took < 20


def _running(arg: str) -> list[int]:
    """Live processes (not zombies) of this machine whose arguments include ``arg``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if arg.encode() in args and not zombie:
            found.append(int(pid))
    return found


@pytest.mark.parametrize(("kind", "target", "ref", "trace"), [
    ("b", "B", None, [{"guard": "paramIn", "param": "kind", "ok": True}, {"transition": 0}]),
    ("c", "C", "J-1", [{"guard": "paramIn", "param": "kind", "ok": False},
                       {"guard": "paramIn", "param": "kind", "ok": True}, {"transition": 1}]),
    ("a", "A", None, [{"guard": "paramIn", "param": "kind", "ok": False},
                      {"guard": "paramIn", "param": "kind", "ok": False}, {"transition": 2}]),
])
def test_first_passing_transition_wins_and_is_replayable(
        tmp_path: Path, kind: str, target: str, ref: str | None,
        trace: list[dict[str, object]]) -> None:
    """With several guarded transitions the first that passes is taken, and replay agrees."""
    states = ("  A:\n    entry: { type: prompt, params: { text: \"Do A.\" } }\n    on:\n"
              "      check:\n"
              "        - { target: B, guard: { type: paramIn, params: { param: kind, "
              "values: [b] } } }\n"
              "        - { target: C, actions: setRef, guard: { type: paramIn, params: "
              "{ param: kind, values: [c] } } }\n"
              "        - { target: A }\n"
              "  B:\n    type: final\n  C:\n    type: final\n")
    events = ("    check:\n      description: Go.\n      params: { kind: { required: false } "
              "}\n")
    project = Project(tmp_path / "p", {"m.smllm.yaml": machine_yaml(states, events=events)})
    _, key, _ = project.fire(None, "enter", stateMachine="m")
    ok, _, _ = project.fire(key, "check", kind=kind, job="J-1")
    state, machines = session.location(key)
    replayed = engine.replay(key, locations.read_audit(key), machines)
    inst = next(iter(state["instances"].values()))
    assert (True, target, ref, trace) == (ok, inst["state"], inst["ref"],
                                          locations.read_audit(key)[-1]["trace"])
    assert {k: v for k, v in state.items() if k != "auditSize"} == {
        k: v for k, v in replayed.items() if k != "auditSize"}
