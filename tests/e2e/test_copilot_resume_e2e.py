"""A Copilot session killed while an effect is in flight, then resumed with ``copilot -p
--resume <session>``: sessionStart (``source: resume``, the same session id) closes the
crashed run and records the unknown effect, and the agent's re-attempt of it is held
(denied with the way to reconcile), so the effect does not run twice. The folder trust
install wrote is what loads the project's hooks on a resume (``--trust-folder`` cannot be
given with ``--resume``)."""

from __future__ import annotations

from typing import Any

from smllm import journal

SLOW = "sleep 2 && echo once >> effect.txt"


def _fields(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def _bash(command: str, tid: str) -> dict[str, Any]:
    return {"tool_use": {"name": "bash", "input": {"command": command, "description": tid}},
            "id": tid}


def test_a_killed_copilot_session_resumes_without_repeating_the_effect(copilot: Any) -> None:
    copilot.install_smllm()

    def started() -> bool:
        # the default policy leaves a safe call to Copilot's own permissions (defer:host):
        # its intent is journaled before it runs, its start once it is seen to have run
        return any(b'"toolu_slow"' in p.read_bytes()
                   for p in copilot.smllm_home.glob("sessions/**/session.jsonl"))

    first = copilot.run("go", [_bash(SLOW, "toolu_slow"), {"text": "done"}],
                        kill_when=started)
    assert first.returncode is not None
    assert first.returncode < 0, "killed mid-effect"
    [session] = copilot.sessions()
    second = copilot.run("continue please", [_bash(SLOW, "toolu_again"),
                                             {"text": "Waiting for reconcile."}],
                         args=["--resume", session])
    assert 0 == second.returncode, second.stderr[-3000:]
    assert session == second.session_id
    recs = list(journal.iter_records(journal.log_path(session)))
    kinds = [journal.kind_of(r) for r in recs]
    ends = [_fields(r)["exit_reason"] for r, k in zip(recs, kinds, strict=True)
            if k == "session.end"]
    assert "crash_inferred" == ends[0]
    resumed = next(_fields(r) for r, k in zip(recs, kinds, strict=True) if k == "session.resumed")
    intents = {_fields(r)["tool_use_id"]: {**_fields(r), "seq": r["sequence"]}
               for r, k in zip(recs, kinds, strict=True) if k == "side_effect_intent"}
    assert [intents["toolu_slow"]["seq"]] == resumed["unknown_effects"]
    assert "deny:reconcile" == intents["toolu_again"]["policy_decision"]
    assert "smllm holds this call: it repeats effect" in second.tool_results()["toolu_again"]
    effect = copilot.project / "effect.txt"
    assert (effect.read_text().count("once") if effect.exists() else 0) <= 1
    verify = copilot.smllm("verify", session)
    assert 0 == verify.returncode, verify.stdout + verify.stderr
