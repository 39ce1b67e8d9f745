"""The redacted export's fast paths change nothing: the line screen (smllm.base.secretscreen),
the needle look-up, the plain-key walk and the fragment prefilter of smllm.base.secrets are
checked against the full walk they replace (issue 23, acceptance 2)."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smllm import journal
from smllm.audit import export
from smllm.base import clock, secretscreen
from smllm.base import secrets as redact
from test_redact import SECRETS, _session

T0 = 1_785_665_700_000

# ----------------------------------------------------------------------- the cut


def _line(payload: Any, *, skipped: int = 0, causation: str | None = None,
          payload_type: str | None = "fact.kind") -> bytes:
    """A record line exactly as smllm's writer makes it (without its newline)."""
    entry = journal.Entry(payload, payload_type, "durable", causation)
    line, _, _ = journal.encode_record(entry, sequence=7, prev=journal.GENESIS,
                                       recorded_at=clock.iso_utc(T0), skipped=skipped)
    return line[:-1]


def _strings(value: Any) -> list[str]:
    """Every key and string value of ``value``, at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize(("skipped", "causation", "payload_type"),
                         [(0, None, "fact.kind"), (3, "r-0123", None), (0, "r-x", "k")])
def test_the_cut_of_a_line_smllm_writes_is_its_payload(skipped: int, causation: str | None,
                                                       payload_type: str | None) -> None:
    """On the writer's own lines the cut is exactly ``,"payload":`` and the payload's JSON,
    whichever optional envelope fields the line has; a payload quoting ``"`` is not cut."""
    payload = {"event": {"kind": "x", "input": {"command": "echo hi \\ there\n"},
                         "list": ["a", {"b": None}], "n": 1.5}}
    raw = _line(payload, skipped=skipped, causation=causation, payload_type=payload_type)
    span = secretscreen.payload_span(raw)
    assert span is not None
    expected = b',"payload":' + json.dumps(payload, separators=(",", ":")).encode()
    assert expected == raw[span[0]:span[1]]
    quoting = _line({"event": {"command": 'say "hi"'}}, skipped=skipped, causation=causation,
                    payload_type=payload_type)
    assert secretscreen.payload_span(quoting) is None


#: valid records whose payload the cut would miss, in part or whole, if it trusted
#: the first ``,"payload":`` and the last ``,"id":"`` without its checks
CRAFTED = [
    # the last ,"id":" is the payload's own: no envelope after it
    b'{"sequence":1,"payload":{"a":{"z":1,"id":"q"},"b":"SECRET"}}',
    b'{"sequence":1,"payload":{"z":1,"id":"q","b":"SECRET"}}',
    # a later payload member (JSON keeps the last) in the envelope's tail
    b'{"sequence":1,"payload":{},"id":"r","payload":"SECRET","hash":"h"}',
    b'{"sequence":1,"payload":{},"id":"r","p\\u0061yload":"SECRET","hash":"h"}',
    b'{"sequence":1,"payload":{},"id":"r","payload":{"k":"SECRET"}}',
    # the first ,"payload": is nested; the real one is written otherwise before it
    b'{"sequence":1,"payload" :{"k":"SECRET"},"x":{"y":1,"payload":{}},"id":"r"}',
    b'{"sequence":1,"p\\u0061yload":{"k":"SECRET"},"x":[1,{"payload":{}}],"id":"r"}',
    # an escaped quote: splitting on quotes would misread the strings
    b'{"sequence":1,"payload":{"a":"x\\",\\"b","c":"SECRET"},"id":"r"}',
    b'{"sequence":1,"payload":{"a\\\\":"SECRET"},"id":"r"}',
    # the key of the payload ends a string holding a quote
    b'{"sequence":1,"x\\",":1,"payload":{"k":"SECRET"},"id":"r"}',
    # no envelope at all, and escapes that only decoding reveals
    b'{"sequence":1,"payload":{"k":"SE\\u0043RET"}}',
    b'{"sequence":1,"payload":{"k":"SE\\u0043RET"},"id":"r","v":1,"hash":"h"}',
    b'{"sequence":1,"payload":["SECRET"],"id":"r","v":1,"hash":"h"}',
]


@pytest.mark.parametrize("raw", CRAFTED, ids=range(len(CRAFTED)))
def test_a_screen_never_passes_a_payload_it_did_not_read_whole(raw: bytes) -> None:
    """Lines crafted to cut the payload wrongly (a nested id, a later or escaped payload
    key, escaped quotes, escapes hiding a word): the screen either walks them or sees the
    string the parser keeps, so a judge rejecting SECRET never passes them."""
    rec = journal.parse_line(raw)
    assert rec is not None  # the line is a record
    assert "SECRET" in json.dumps(rec["payload"])
    screen = secretscreen.Screen(lambda text: "SECRET" not in text)
    assert screen.passes(raw) is False


# payloads: nested dicts and lists of strings that exercise escapes and non-ASCII
_TEXT = st.lists(st.sampled_from(
    ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\x01', 'é', '\u212a', '\u017f', '\u2028',
     '\ud800', '😀', '{', '}', '[', ']', ':', ',', 'SECRET', 'payload', '"id":"', ',"payload":']),
    max_size=8).map("".join)
_KEYS = st.one_of(_TEXT, st.sampled_from(["payload", "id", "hash", "token", "SECRET"]))
_VALUES = st.recursive(
    st.one_of(_TEXT, st.integers(-5, 10**20), st.none(), st.booleans(), st.floats(
        allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=12)


def _mutations(raw: bytes) -> list[bytes]:
    """``raw`` and variants a foreign writer could produce: spaces, escaped letters,
    a duplicated payload member, the envelope moved ahead."""
    text = raw.decode()
    out = [raw, text.replace(":", " : ", 3).encode(), text.replace("a", "\\u0061", 2).encode(),
           text.replace('"payload":', '"payload":{"k":"SECRET"},"payload":', 1).encode(),
           text.replace(',"id":"', ',"payload":"SECRET","id":"', 1).encode(),
           text.replace('{"sequence":7,', '{"sequence":7,"payload":{"k":"SECRET"},', 1).encode()]
    return [m for m in out if journal.parse_line(m) is not None]


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_a_passed_line_holds_no_string_its_judge_rejects(payload: dict[str, Any]) -> None:
    """Soundness, on generated payloads (quotes, backslashes, control characters,
    non-ASCII, look-alike keys) written by smllm's encoder and altered as another writer
    might: whenever the screen passes a line, every key and string of the payload the
    parser keeps is one the judge accepts."""
    for raw in _mutations(_line(payload)):
        screen = secretscreen.Screen(lambda text: "SECRET" not in text)
        kept = journal.parse_line(raw)
        assert kept is not None
        if screen.passes(raw):
            assert [] == [s for s in _strings(kept["payload"]) if "SECRET" in s]


def test_the_screen_passes_the_lines_smllm_writes() -> None:
    """Not vacuous: a clean line smllm writes is passed, a second time from the set alone,
    and a line holding a rejected string anywhere is not."""
    judged: list[str] = []

    def judge(text: str) -> bool:
        judged.append(text)
        return "SECRET" not in text

    screen = secretscreen.Screen(judge)
    clean = _line({"event": {"kind": "k", "input": {"command": "ls\n"}, "ids": ["a", "b"]}})
    assert (True, True) == (screen.passes(clean), screen.passes(clean))
    assert sorted(judged) == sorted(set(judged))  # each token judged once
    for place in ({"SECRET": 1}, {"a": ["x", {"b": "the SECRET"}]}, {"a": "SECRET"}):
        assert screen.passes(_line({"event": place})) is False


# ----------------------------------------------------------------- the export


def _export(log: Path, out: Path, *, walk: bool, monkeypatch: pytest.MonkeyPatch) -> bytes:
    with monkeypatch.context() as m:
        if walk:  # the full walk: no line passed, every record masked value by value
            m.setattr(secretscreen.Screen, "passes", lambda self, raw: False)
        export.export(log, out, redacted=True)
    return out.read_bytes()


def test_the_corpus_exports_the_same_with_and_without_the_screen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The redaction corpus (every secret in six places, the look-alikes), exported redacted
    with the screen and with the full walk: the same bytes, and the screen passed lines."""
    log = _session(tmp_path)
    passed: list[bytes] = []
    real = secretscreen.Screen.passes

    def counting(self: secretscreen.Screen, raw: bytes) -> bool:
        ok = real(self, raw)
        if ok:
            passed.append(raw)
        return ok

    with monkeypatch.context() as m:
        m.setattr(secretscreen.Screen, "passes", counting)
        fast = _export(log, tmp_path / "fast.json", walk=False, monkeypatch=monkeypatch)
    slow = _export(log, tmp_path / "slow.json", walk=True, monkeypatch=monkeypatch)
    assert fast == slow
    assert len(passed) >= 50


def _generated_log(path: Path, seed: int, records: int) -> Path:
    """A journal of ordinary records with secrets, their pieces and look-alikes planted
    at random places (prompts, commands, outputs, keys, nested lists)."""
    rnd = random.Random(seed)
    secrets = [s for s in SECRETS if "\n" not in s["text"]]
    words = ["ls -la", "git status", "ok", "toolu_0001", "tool:bash", "succeeded", "é—😀",
             'say "hi"\\n', "a/b\\c", "password", "token"]
    entries = [journal.fact("session.start", {"session_id": path.parent.name})]
    for i in range(records):
        s = rnd.choice(secrets)
        pick = rnd.random()
        text = (s["text"] if pick < 0.05 else s["secret"][2:14] if pick < 0.1
                else rnd.choice(words) + " " + "".join(rnd.choices(string.ascii_letters, k=6)))
        body: dict[str, Any] = {"tool_use_id": f"toolu_{i % 7}", "n": i,
                                "output": {"stdout": text, "lines": [rnd.choice(words), text]}}
        if rnd.random() < 0.05:
            body["output"][text[:20]] = {"seen": i}
        entries.append(journal.fact("tool_batch.effect.terminal", body) if i % 2 else
                       journal.event("proposed", turn=i, prompt=text))
    path.parent.mkdir(parents=True, exist_ok=True)
    journal.append(path, entries)
    return path


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_generated_journal_exports_the_same_with_and_without_the_screen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """A generated journal (secrets, their pieces and look-alikes among ordinary records)
    exports redacted to the same bytes with the screen and with the full walk."""
    log = _generated_log(tmp_path / f"sid-gen{seed}" / "session.jsonl", seed, 400)
    fast = _export(log, tmp_path / "fast.json", walk=False, monkeypatch=monkeypatch)
    slow = _export(log, tmp_path / "slow.json", walk=True, monkeypatch=monkeypatch)
    assert fast == slow
    assert b"[REDACTED:" in fast


# ------------------------------------------------------------ secrets' fast paths


def _candidates_reference(text: str) -> list[str]:
    """The rules the full needle scan selects: those with a needle in the text."""
    lowered = text.lower()
    return [rule.kind + "/" + rule.source for rule, _ in redact._SUBS
            if not rule.needles or any(n in lowered for n in rule.needles)]


_NEEDLE_TEXT = st.lists(st.one_of(
    st.sampled_from(redact._NEEDLES + [n.upper() for n in redact._NEEDLES]),
    st.text(alphabet=string.ascii_letters + string.digits + " -_.:=%/~$\u212a\u0130",
            max_size=6)), max_size=10).map("".join)


@settings(max_examples=600)
@given(st.one_of(_NEEDLE_TEXT, _NEEDLE_TEXT.map(lambda t: t * 40)))
def test_the_needle_look_up_selects_what_the_full_scan_selects(text: str) -> None:
    """The rules a text may match, found through its character pairs and one trie search,
    are exactly those the scan for every needle finds, short texts and long alike."""
    assert _candidates_reference(text) == [r.kind + "/" + r.source
                                           for r, _ in redact._candidates(text)]


def test_the_needle_look_up_on_the_corpus() -> None:
    """The same on every corpus text."""
    for s in SECRETS:
        assert _candidates_reference(s["text"]) == [
            r.kind + "/" + r.source for r, _ in redact._candidates(s["text"])], s["kind"]


def _learnt(payloads: list[Any], *, fast: bool) -> tuple[list[tuple[str, str]], list[bool]]:
    masker = redact.Masker()
    flags = []
    redact._plain_keys.clear()  # the keys judged anew (and, walking fast, known plain)
    redact._known_plain.clear()
    for p in payloads:
        if not fast:
            redact._known_plain.clear()  # every dict walked pair by pair
        flags.append(redact.learn(p, masker))
    return list(masker.values.items()), flags


def test_the_walk_by_values_learns_what_the_walk_by_pairs_learns() -> None:
    """learn() over dicts whose keys are all known plain reads their values alone: on the
    corpus planted in every place, it learns the same secrets in the same order and flags
    the same payloads as the pair-by-pair walk."""
    rnd = random.Random(23)
    payloads: list[Any] = []
    for s in SECRETS:
        value: Any = {s["key"]: s["text"]} if "key" in s else s["text"]
        payloads += [{"event": {"kind": "proposed", "prompt": s["text"]}},
                     {"record": {"output": {"config": [{"env": value, "note": "n"}]}}},
                     {"record": {"output": {"index": {s["text"]: {"seen": 1}}}}},
                     {"record": {"list": ["ok", value, ["nested", s["text"]]]}}]
    rnd.shuffle(payloads)
    fast = _learnt(payloads, fast=True)
    assert len(redact._known_plain) > 5  # the fast walk had keys to use
    assert fast == _learnt(payloads, fast=False)


def _mask_reference(masker: redact.Masker, text: str) -> str:
    """mask_text without the aligned-quarters prefilter: every position looked up."""
    if not masker.values or len(text) < redact.MIN_VALUE:
        return text
    rx, grams = masker._compile()
    text = rx.sub(lambda m: redact.MARK.format(masker.values[m.group(0)]), text)
    spans: list[list[Any]] = []
    for i in range(len(text) - redact.FRAGMENT + 1):
        kind = grams.get(text[i:i + redact.FRAGMENT])
        if kind is None:
            continue
        if spans and i <= spans[-1][1]:
            spans[-1][1] = i + redact.FRAGMENT
        else:
            spans.append([i, i + redact.FRAGMENT, kind])
    out, at = [], 0
    for start, stop, kind in spans:
        out += [text[at:start], redact.MARK.format(kind)]
        at = stop
    return "".join([*out, text[at:]])


@settings(max_examples=500)
@given(st.integers(0, 2**32), st.integers(0, 40), st.text(max_size=30))
def test_fragments_are_masked_at_every_offset(seed: int, offset: int, noise: str) -> None:
    """A fragment of a learnt secret is masked wherever it starts (the prefilter looks at
    aligned runs of 4 characters only): mask_text equals the position-by-position scan."""
    rnd = random.Random(seed)
    masker = redact.Masker()
    secret = "".join(rnd.choices(string.ascii_letters + string.digits, k=rnd.randint(8, 60)))
    masker.add(secret, "secret")
    start = rnd.randint(0, len(secret) - 8)
    piece = secret[start:start + rnd.randint(8, len(secret) - start)]
    text = noise[:offset] + piece + noise[offset:]
    assert _mask_reference(masker, text) == masker.mask_text(text)
    assert piece not in masker.mask_text(text)
