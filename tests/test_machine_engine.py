"""Engine semantics: params, built-ins, stops, final states, several instances."""


from __future__ import annotations

from pathlib import Path

import pytest

from machine_project import Project
from smllm.machine import engine, locations, session


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The seed's fix machine in a fresh project."""
    return Project(tmp_path / "project")


def _entered(project: Project) -> str:
    ok, key, _ = project.fire(None, "enter", stateMachine="fix")
    assert ok
    return key


def _outcomes(key: str) -> list[str]:
    return [ln["outcome"] for ln in locations.read_audit(key)]


@pytest.mark.parametrize(("event", "params", "reason"), [
    ("reproduced", {}, "reproduced needs bugId (required, pattern: ^BUG-[0-9]+$)"),
    ("reproduced", {"bugId": "bug-7"}, 'bugId = "bug-7" does not match ^BUG-[0-9]+$'),
    ("reproduced", {"bugId": "BUG-7\n"}, 'bugId = "BUG-7\n" does not match ^BUG-[0-9]+$'),
    ("reproduced", {"bugId": "xBUG-7"}, 'bugId = "xBUG-7" does not match ^BUG-[0-9]+$'),
    ("reproduced", {"bugId": "BUG-7", "x": "1"}, "reproduced takes no param x (params: bugId)"),
    ("fixed", {}, "fixed is not offered here (offered: reproduced, yield, pause, unmatched)"),
    ("enter", {"stateMachine": "fix"},
     "enter is not offered here (offered: reproduced, yield, pause, unmatched)"),
    ("pause", {"why": "x"}, "pause takes no param why (params: none)"),
])
def test_refusals_leave_the_state_and_say_why(project: Project, event: str,
                                              params: dict[str, str], reason: str) -> None:
    """A refused fire keeps TRIAGE, shows `error: <reason>`, and audits the reason."""
    key = _entered(project)
    ok, _, text = project.fire(key, event, **params)
    state, _ = session.location(key)
    last = locations.read_audit(key)[-1]
    assert (False, "TRIAGE", "refused", reason) == (ok, engine.focused(state)["state"],
                                                    last["outcome"], last["reason"])
    assert f"error: {reason}\n" in text


def test_enter_refuses_an_unknown_machine(project: Project) -> None:
    """`enter stateMachine=nope` is refused with the machines one may start."""
    ok, key, _ = project.fire(None, "enter", stateMachine="fix")
    project.fire(key, "pause")
    ok, _, text = project.fire(key, "enter", stateMachine="nope")
    assert (False, True) == (ok, 'error: stateMachine = "nope" is not one of: fix\n' in text)


# each scenario: fires and stops in order -> the outcomes of the stops
STOPS = [
    ("block then runaway", [("stop",), ("stop",)], ["block", "runaway"]),
    ("a fire in between blocks again", [("stop",), ("fire", "fixed"), ("stop",)],
     ["block", "block"]),
    ("runaway, then a new episode", [("stop",), ("stop",), ("stop",)],
     ["block", "runaway", "block"]),
    ("yield licenses one stop", [("fire", "yield"), ("stop",), ("stop",)],
     ["accepted", "block"]),
    ("an accepted fire after yield revokes it",
     [("fire", "yield"), ("fire", "reproduced", "BUG-1"), ("stop",)], ["block"]),
    ("a refused fire keeps the yield", [("fire", "yield"), ("fire", "fixed"), ("stop",)],
     ["accepted"]),
    ("pause lets it stop", [("fire", "pause"), ("stop",), ("stop",)],
     ["accepted", "accepted"]),
    ("unmatched lets it stop", [("fire", "unmatched"), ("stop",)], ["accepted"]),
    ("final state lets it stop", [("fire", "reproduced", "BUG-1"), ("fire", "fixed"),
                                  ("stop",), ("stop",)], ["accepted", "accepted"]),
    ("non-final FIX blocks", [("fire", "reproduced", "BUG-1"), ("stop",)], ["block"]),
]


@pytest.mark.parametrize(("name", "steps", "expected"), STOPS, ids=[s[0] for s in STOPS])
def test_stop_outcomes(project: Project, name: str, steps: list[tuple[str, ...]],
                       expected: list[str]) -> None:
    """The stop hook blocks in a non-final state unless yielded or already refused once."""
    key = _entered(project)
    got = []
    for step in steps:
        if step[0] == "stop":
            got.append(session.stop(key, stop_hook_active=False, now_ms=1).line["outcome"])
        else:
            params = {"bugId": step[2]} if len(step) > 2 else {}
            project.fire(key, step[1], **params)
    assert expected == got


def test_stop_hook_active_chain_is_capped(project: Project) -> None:
    """Blocks separated by fires stop at the cap while stop_hook_active stays true."""
    key = _entered(project)
    got = [session.stop(key, stop_hook_active=False, now_ms=1).line["outcome"]]
    for _ in range(engine.STOP_CHAIN_CAP + 1):
        project.fire(key, "fixed")  # refused, but a fire: the agent is still trying
        got.append(session.stop(key, stop_hook_active=True, now_ms=1).line["outcome"])
    expected = ["block"] * engine.STOP_CHAIN_CAP + ["runaway", "block"]
    assert expected == got


def test_block_text_is_the_offer(project: Project) -> None:
    """The block text lists the state's events then yield, pause, unmatched."""
    key = _entered(project)
    text = session.stop(key, stop_hook_active=False, now_ms=1).text or ""
    assert ["reproduced", "yield", "pause", "unmatched"] == [
        ln[2:].split(":")[0] for ln in text.splitlines() if ln.startswith("- ")]


def test_final_state_closes_the_instance(project: Project) -> None:
    """Reaching DONE shows its prompt, closes the instance and returns to idle."""
    key = _entered(project)
    project.fire(key, "reproduced", bugId="BUG-7")
    ok, _, text = project.fire(key, "fixed")
    state, _ = session.location(key)
    expected_text = (
        f"<smllm>\nsession {key} · fix › DONE · bug BUG-7\nArrived by: fixed from FIX\n"
        "<instructions>\nSummarise the cause of the bug and the fix.\n</instructions>\n"
        "bug BUG-7 is done: DONE is final, so you may stop once you have followed these "
        "instructions.\n</smllm>\n")
    inst = next(iter(state["instances"].values()))
    assert (True, expected_text, None, "done") == (ok, text, state["focus"], inst["status"])
    ok, _, text = project.fire(key, "fixed")
    assert (False, "error: fixed is not offered here (offered: enter)\n") == (
        ok, text.splitlines(keepends=True)[2])


def test_pause_then_resume_and_a_second_instance(project: Project) -> None:
    """Pause keeps the instance; another can be entered; resume returns to the first."""
    key = _entered(project)
    first = engine.focused(session.location(key)[0])["id"]
    project.fire(key, "reproduced", bugId="BUG-1")
    ok_pause, _, pause_text = project.fire(key, "pause")
    ok_enter, _, _ = project.fire(key, "enter", stateMachine="fix")
    second = engine.focused(session.location(key)[0])["id"]
    project.fire(key, "unmatched")
    ok_resume, _, text = project.fire(key, "resume", instance=first)
    state, _ = session.location(key)
    statuses = {i["id"]: (i["state"], i["status"]) for i in state["instances"].values()}
    assert (True, True, True) == (ok_pause, ok_enter, ok_resume)
    assert {first: ("FIX", "active"), second: ("TRIAGE", "unmatched")} == statuses
    assert f"session {key} · fix › FIX · bug BUG-1\nArrived by: resume from idle\n" in text
    assert f"Paused: bug BUG-1 stays in FIX until you fire resume with instance {first}." \
        in pause_text


def test_state_file_is_rebuilt_from_the_audit(project: Project) -> None:
    """A state file that lags behind the audit (a crash between the writes) is replayed."""
    key = _entered(project)
    stale = locations.read_state(key)
    project.fire(key, "reproduced", bugId="BUG-2")
    locations.write_state(key, stale)  # as if the process died after the audit line
    state, _ = session.location(key)
    inst = engine.focused(state)
    assert ("FIX", "BUG-2") == (inst["state"], inst["ref"])


def test_fire_without_session_needs_enter(project: Project, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    """Outside a session only `enter` starts one; other events say how to name a session."""
    proc = project.cli("fire", "fixed")
    assert (1, "smllm: error: no smllm session to fire fixed in (pass --session KEY, set "
               "SMLLM_SESSION, or fire enter to start a session)\n") == (proc.returncode,
                                                                        proc.stderr)


def test_fire_uses_smllm_session_env(project: Project) -> None:
    """`smllm fire EVENT` without --session fires in $SMLLM_SESSION."""
    key = _entered(project)
    proc = project.cli("fire", "yield", "--param", "note=CI", env={"SMLLM_SESSION": key})
    assert (0, "yield") == (proc.returncode, locations.read_audit(key)[-1]["event"])


def test_status_and_draw(project: Project) -> None:
    """`smllm status` prints the location; `machine draw --session` marks the state."""
    key = _entered(project)
    status = project.cli("status", "--session", key)
    drawn = project.cli("machine", "draw", "fix", "--session", key)
    assert status.stdout.startswith(f"<smllm>\nsession {key} · fix › TRIAGE · bug ")
    assert "    class TRIAGE current\n" in drawn.stdout


def test_missing_yaml_is_a_clear_error(project: Project, tmp_path: Path) -> None:
    """Without PyYAML (the plugin before its bootstrap) compiling says what is missing."""
    blocker = tmp_path / "noyaml"
    blocker.mkdir()
    (blocker / "yaml.py").write_text("raise ImportError('No module named yaml')\n")
    proc = project.cli("fire", "enter", "--param", "stateMachine=fix",
                       env={"PYTHONPATH": str(blocker)})
    assert (1, "smllm: error: cannot compile the state machines: No module named yaml "
               "(install smllm's dependencies (PyYAML); the plugin builds its environment in "
               "the background, so try again in a minute)\n") == (proc.returncode, proc.stderr)


def test_status_without_a_key_uses_the_latest_session_here(project: Project,
                                                           tmp_path: Path) -> None:
    """`smllm status` alone shows the most recently active session of this folder."""
    _, older, _ = project.fire(None, "enter", stateMachine="fix")
    _, newer, _ = project.fire(None, "enter", stateMachine="fix")
    project.fire(newer, "yield")
    here = project.cli("status")
    elsewhere = Project(tmp_path / "other").cli("status")
    assert (0, True) == (here.returncode,
                         here.stdout.startswith(f"<smllm>\nsession {newer} · fix › TRIAGE"))
    assert (1, True) == (elsewhere.returncode, older != newer)
    assert elsewhere.stderr.startswith("smllm: error: no smllm session in ")


def test_edited_machine_without_the_current_state(project: Project) -> None:
    """If an edit removes the state an instance is in, fire says so instead of crashing."""
    key = _entered(project)
    path = project.root / ".smllm" / "fix.smllm.yaml"
    path.write_text(path.read_text().replace("TRIAGE", "TRIAGE2"))
    proc = project.cli("fire", "--session", key, "yield")
    assert 1 == proc.returncode
    assert proc.stderr.startswith("smllm: error: i-")
    assert "is in fix › TRIAGE, which " in proc.stderr
    assert proc.stderr.endswith("no longer has (restore state TRIAGE, or start a new session)\n")
