"""A Codex session killed while an effect is in flight, then resumed with ``codex exec
resume --last``: SessionStart (``source: resume``) closes the crashed run and records the
unknown effect, and the agent's re-attempt of it is held (denied with the way to
reconcile), so the effect does not run twice."""

from __future__ import annotations

from typing import Any

from smllm import journal

SLOW = "sleep 2 && echo once >> effect.txt"


def _fields(rec: dict[str, Any]) -> dict[str, Any]:
    payload = rec["payload"]
    out: dict[str, Any] = payload["event"] if "event" in payload else payload["record"]
    return out


def test_a_killed_codex_session_resumes_without_repeating_the_effect(codex: Any) -> None:
    codex.install_smllm()

    def started() -> bool:
        return any(b"tool_batch.effect.started" in p.read_bytes()
                   for p in codex.smllm_home.glob("sessions/**/session.jsonl"))

    first = codex.run("go", [{"shell": SLOW, "call_id": "c_slow"}, {"text": "done"}],
                      kill_when=started)
    assert first.returncode is not None
    assert first.returncode < 0, "killed mid-effect"
    session = first.thread_id
    second = codex.run("continue please", [{"shell": SLOW, "call_id": "c_again"},
                                          {"text": "Waiting for reconcile."}],
                       args=["resume", "--last"])
    assert 0 == second.returncode, second.stderr[-3000:]
    assert session == second.thread_id
    recs = list(journal.iter_records(journal.log_path(session)))
    kinds = [journal.kind_of(r) for r in recs]
    ends = [_fields(r)["exit_reason"] for r, k in zip(recs, kinds, strict=True) if k == "session.end"]
    assert "crash_inferred" == ends[0]
    resumed = next(_fields(r) for r, k in zip(recs, kinds, strict=True) if k == "session.resumed")
    intents = {_fields(r)["tool_use_id"]: {**_fields(r), "seq": r["sequence"]}
               for r, k in zip(recs, kinds, strict=True) if k == "side_effect_intent"}
    assert [intents["c_slow"]["seq"]] == resumed["unknown_effects"]
    assert "deny:reconcile" == intents["c_again"]["policy_decision"]
    assert "smllm holds this call: it repeats effect" in second.tool_outputs()["c_again"]
    effect = codex.project / "effect.txt"
    assert (effect.read_text().count("once") if effect.exists() else 0) <= 1
    verify = codex.smllm("verify", session)
    assert 0 == verify.returncode, verify.stdout + verify.stderr
