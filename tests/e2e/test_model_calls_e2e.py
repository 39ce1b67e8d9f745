"""What the model said, in the journal, through the real Claude Code CLI (issue 20).

Seed 000: "Muse Code journals every model call" and "read a session top to bottom and you
see what the model decided, what it ran". Seed 000's billing session with the scripted
model: every response's text is in its ``model.call``, each before the tool calls it
chose, and ``smllm export --redacted`` removes the secrets the model said.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness import Harness
from test_gate_e2e import CHAIN, GATE_JUDGE, _sample

pytestmark = pytest.mark.e2e

CORPUS = json.loads((Path(__file__).parent.parent / "fixtures" / "secrets" / "corpus.json")
                    .read_text())["secrets"]
#: two secrets of the redaction corpus the model will say (a provider key, a GitHub token)
PLANTED = [next(s for s in CORPUS if s["kind"] == kind and "key" not in s)
           for kind in ("anthropic", "github")]
THINKING = "The rates live in check_costs.py; read it before editing."


def _texts(claude: Harness) -> list[str]:
    return [
        "I'll read check_costs.py to see how the Frobnitz-9 tier is priced.",
        "Adding the Frobnitz-12 tier right after the Frobnitz-9 rate.",
        f"Checking the diff, then the script. The key in your notes is {PLANTED[0]['text']}",
        "Deleting the stale cache as asked: rm -rf stale_cache.txt",
        f"Done: Frobnitz-12 is in, the script prints, the cache is gone. {PLANTED[1]['text']}",
    ]


def _script(claude: Harness) -> list[dict[str, Any]]:
    """The billing session of seed 000, each response saying something before its tools;
    the third streams its second tool use a second after the first, which Claude Code runs
    (a read-only command) while the response is still streaming."""
    path = str(claude.project / "check_costs.py")
    texts = _texts(claude)

    def said(n: int, *tools: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": texts[n]},
                            *({"type": "tool_use", **t} for t in tools)]}

    first = said(0, {"name": "Read", "input": {"file_path": path}})
    first["content"].insert(0, {"type": "thinking", "thinking": THINKING})
    return [
        first,
        said(1, {"name": "Edit", "input": {
            "file_path": path, "old_string": "TIER_RATE_FROBNITZ9 = 0.0417  # dollars per "
            "Quokkascale compute-unit", "new_string": "TIER_RATE_FROBNITZ9 = 0.0417  # dollars "
            "per Quokkascale compute-unit\nTIER_RATE_FROBNITZ12 = 0.0625"}}),
        said(2, {"name": "Bash", "input": {"command": "git diff", "description": "the diff"}},
             {"name": "Bash", "input": {"command": "python3 check_costs.py",
                                        "description": "run it"}, "pause": 1.0}),
        said(3, {"name": "Bash", "input": {"command": "rm -rf stale_cache.txt",
                                           "description": "delete the stale cache"}}),
        {"text": texts[4]},
    ]


def _body(envelope: dict[str, Any]) -> dict[str, Any]:
    payload = envelope.get("payload") or {}
    return payload.get("event") or payload.get("record") or {}


def _kind(envelope: dict[str, Any]) -> str:
    return str(_body(envelope).get("kind") if "event" in (envelope.get("payload") or {})
               else envelope.get("payload_type"))


def _said(export: str) -> list[str]:
    """The text of each response in an export, in order (the parts of a response that
    reached the transcript in two reads joined)."""
    said: dict[str, list[str]] = {}
    for e in json.loads(export)["events"]:
        c = _body(e["envelope"]) if e.get("kind") == "record" else {}
        if c.get("kind") == "model.call":
            said.setdefault(c["message_id"], []).extend([c["text"]] if c["text"] else [])
    return ["\n".join(t) for t in said.values()]


def test_export_holds_what_the_model_said_before_each_tool_call(claude: Harness,
                                                                 tmp_path: Path) -> None:
    """The export of seed 000's billing session has the text of every model call in order,
    each model call before the intents of the tools it chose, the thinking only as a marker,
    the judge chain unchanged; the redacted export keeps the texts without the secrets."""
    _sample(claude, GATE_JUDGE.format(t=20))
    verdict = {"verdict": "allow_once", "reason": "a stale cache file the user asked to delete"}
    run = claude.run("edit, run, then delete the stale cache", script=_script(claude),
                     judge=[{"text": json.dumps(verdict)}], permission_mode="default",
                     env={"SMLLM_TRANSCRIPT_WAIT": "30"})
    assert 0 == run.returncode, run.describe()
    exports = {}
    for name, flags in (("raw", ()), ("redacted", ("--redacted",))):
        out = tmp_path / f"{name}.json"
        claude.smllm("export", "--journal", str(run.journal_path), "--out", str(out), *flags,
                     check=True)
        exports[name] = out.read_text()
    envelopes = [e["envelope"] for e in json.loads(exports["raw"])["events"]
                 if e.get("kind") == "record"]
    calls = [(e["sequence"], _body(e)) for e in envelopes if _kind(e) == "model.call"]
    assert _texts(claude) == _said(exports["raw"]), run.describe()
    first = calls[0][1]["message_id"]
    thought = {(c["message_id"] == first, c["thinking"] is not None) for _, c in calls}
    assert ({(True, True), (False, False)}, ["omitted_live_only"]) == (
        thought - {(True, False)}, list(calls[0][1]["thinking"] or {}))
    assert THINKING not in exports["raw"]
    chose = {tid: seq for seq, c in calls for tid in c["tool_use_ids"]}
    intents = [(e["sequence"], _body(e)["tool_use_id"]) for e in envelopes
               if _kind(e) == "side_effect_intent"]
    assert (5, []) == (len(intents), [(seq, tid, chose.get(tid)) for seq, tid in intents
                                      if chose.get(tid, seq) >= seq]), run.describe()
    kinds = [_kind(e) for e in envelopes]
    start = kinds.index("approval.review")
    assert CHAIN == kinds[start:start + len(CHAIN)]
    kept = []
    for original, shown in zip(_texts(claude), _said(exports["redacted"]), strict=True):
        secret = next((p["text"] for p in PLANTED if p["text"] in original), None)
        kept.append(shown == original if secret is None else
                    shown.startswith(original.split(secret)[0] + "[REDACTED:"))
    assert ([True, True], [False, False], [True] * 5) == (
        [s["secret"] in exports["raw"] for s in PLANTED],
        [s["secret"] in exports["redacted"] for s in PLANTED], kept)
