"""smllm export: determinism, diagnostics, termination, session choice and errors."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import random
import select
import shutil
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers import base, hook, smllm
from smllm import journal
from smllm.audit import export
from smllm.base import build, secrets
from smllm.serve import views

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
BILLING_ID = "c7dfaecc-adf6-4348-87df-95576e15136e"
BILLING = FIXTURES / "billing" / BILLING_ID / "session.jsonl"


def _copy_billing(tmp_path: Path) -> Path:
    dst = tmp_path / "store" / BILLING_ID / "session.jsonl"
    dst.parent.mkdir(parents=True)
    shutil.copyfile(BILLING, dst)
    return dst


def _run_export(log: Path, out: Path, *extra: str) -> bytes:
    proc = smllm("export", "--journal", str(log), "--out", str(out), *extra)
    assert (0, f"{out}\n") == (proc.returncode, proc.stdout), proc.stderr
    return out.read_bytes()


@pytest.mark.parametrize("flags", [(), ("--redacted",)])
def test_two_exports_are_byte_identical(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """Two exports of one log with the same flags are byte-identical."""
    log = _copy_billing(tmp_path)
    a = _run_export(log, tmp_path / "a.json", *flags)
    b = _run_export(log, tmp_path / "b.json", *flags)
    assert hashlib.sha256(a).hexdigest() == hashlib.sha256(b).hexdigest()


def test_export_never_modifies_the_log(tmp_path: Path) -> None:
    """The log's bytes and mtime are the same after a raw and a redacted export."""
    log = _copy_billing(tmp_path)
    before = (log.read_bytes(), log.stat().st_mtime_ns, sorted(os.listdir(log.parent)))
    _run_export(log, tmp_path / "a.json")
    _run_export(log, tmp_path / "b.json", "--redacted")
    assert before == (log.read_bytes(), log.stat().st_mtime_ns, sorted(os.listdir(log.parent)))


def test_document_summary_of_the_billing_session(tmp_path: Path) -> None:
    """The top level of seed 000's sample: schema, build, termination, sessions, diagnostics."""
    doc = json.loads(_run_export(_copy_billing(tmp_path), tmp_path / "t.json"))
    session = doc["sessions"][0]
    actual = {
        "keys": list(doc),
        "export_schema_version": doc["export_schema_version"],
        "redaction": doc["redaction"],
        "exporter_version": doc["exporter_version"]["display"],
        "session_build": doc["session_build"],
        "abnormal": doc["session_terminated_abnormally"],
        "session": {k: session[k] for k in ("session_id", "turn_count", "session_end")},
        "diagnostics": {k: doc["diagnostics"][k] for k in (
            "unparseable_lines", "unknown_payload_kinds", "gaps", "omitted_live_only",
            "duplicate_records")},
        "events": len(doc["events"]),
    }
    expected = {
        "keys": ["export_schema_version", "redaction", "exporter_version", "session_build",
                 "session_terminated_abnormally", "sessions", "diagnostics", "events"],
        "export_schema_version": 1,
        "redaction": "raw",
        # with the commit of this build when it is known: tests/test_build.py
        "exporter_version": build.info()["display"],
        "session_build": {"display": "smllm 0.1.0", "smllm": "0.1.0"},
        "abnormal": False,
        "session": {"session_id": BILLING_ID, "turn_count": 2,
                    "session_end": {"exit_reason": "clean", "uptime_ms": 153580}},
        "diagnostics": {"unparseable_lines": 0, "unknown_payload_kinds": 0, "gaps": 3,
                        "omitted_live_only": 3, "duplicate_records": 0},
        "events": 233,
    }
    assert expected == actual


def test_raw_envelopes_are_the_log_lines(tmp_path: Path) -> None:
    """A raw export carries each log line verbatim, so its hash chain re-verifies."""
    doc = json.loads(_run_export(_copy_billing(tmp_path), tmp_path / "t.json"))
    lines = BILLING.read_bytes().splitlines()
    rebuilt = [json.dumps(e["envelope"], ensure_ascii=False, separators=(",", ":")).encode()
               for e in doc["events"]]
    assert lines == rebuilt


def test_seed_jq_window_reads_the_approval_chain(tmp_path: Path) -> None:
    """Seed 000's jq over sequences 193-202 names the approval records in causal order."""
    doc = json.loads(_run_export(_copy_billing(tmp_path), tmp_path / "t.json"))
    window = [
        (e["envelope"]["sequence"], (e["envelope"]["payload"].get("event") or {}).get("kind")
         or e["envelope"]["payload_type"])
        for e in doc["events"]
        if e["kind"] == "record" and 193 <= e["envelope"]["sequence"] <= 202
    ]
    expected = [(193, "approval.review"), (194, "approval_wait.effect.started"),
                (195, "stage_requirement_resolved"), (196, "decision_applied"),
                (197, "approval_wait.effect.terminal"), (198, "host.event"),
                (199, "host.event"), (200, "side_effect_intent"),
                (201, "tool_batch.effect.started"), (202, "tool_batch.effect.terminal")]
    assert expected == window


# --------------------------------------------------------------------- diagnostics


def _log(tmp_path: Path, n: int = 4) -> Path:
    path = tmp_path / "sid-diag" / "session.jsonl"
    path.parent.mkdir(parents=True)
    journal.append(path, [journal.fact("session.start", {"session_id": "sid-diag"})])
    for i in range(n - 1):
        journal.append(path, [journal.event("proposed", turn=i + 1, prompt="hi")])
    return path


def _garbage(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b"this is not json\n")


def _torn(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b'{"sequence":99,"recorded_at":"2026')


def _duplicate(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    with open(path, "ab") as fh:
        fh.write(lines[1])


def _unknown_kind(path: Path) -> None:
    journal.append(path, [journal.fact("mystery.kind", {"x": 1})])


def _omitted(path: Path) -> None:
    journal.append(path, [journal.fact("tool_batch.effect.terminal",
                                       {"tool_use_id": "t", "output": "y" * 40000})])


def _bad_utf8_with_valid_hash(path: Path) -> None:
    """A line whose hash matches its bytes, but whose bytes are not UTF-8."""
    line = path.read_bytes().splitlines()[-1].replace(b'"prompt":"hi"', b'"prompt":"h\xff"')
    body = line[: line.rindex(b',"hash":')] + b"}"
    digest = b"sha256:" + hashlib.sha256(body).hexdigest().encode()
    with open(path, "ab") as fh:
        fh.write(body[:-1] + b',"hash":"' + digest + b'"}\n')


def _removed_line(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2] + lines[3:]))


Mutation = Callable[[Path], None]
DIAG_CASES: list[tuple[str, list[Mutation], dict[str, int]]] = [
    ("clean", [], {}),
    ("garbage line", [_garbage], {"unparseable_lines": 1}),
    ("torn last line", [_torn], {"unparseable_lines": 1, "torn_lines": 1}),
    ("duplicated record", [_duplicate], {"duplicate_records": 1}),
    ("unknown payload kind", [_unknown_kind], {"unknown_payload_kinds": 1}),
    ("omitted output", [_omitted], {"omitted_live_only": 1, "gaps": 1}),
    ("sequence gap", [_removed_line], {"gaps": 1, "sequence_gaps": 1}),
    ("not UTF-8, hash intact", [_bad_utf8_with_valid_hash], {"unparseable_lines": 1}),
    ("all at once", [_unknown_kind, _omitted, _duplicate, _garbage, _torn],
     {"unparseable_lines": 2, "torn_lines": 1, "duplicate_records": 1,
      "unknown_payload_kinds": 1, "omitted_live_only": 1, "gaps": 1}),
]


@pytest.mark.parametrize(("name", "mutations", "counts"), DIAG_CASES,
                         ids=[c[0] for c in DIAG_CASES])
def test_diagnostics_count_exactly_their_cases(
    tmp_path: Path, name: str, mutations: list[Mutation], counts: dict[str, int]
) -> None:
    """Each damaged log exports, and every diagnostic counts exactly its cases."""
    log = _log(tmp_path)
    for mutate in mutations:
        mutate(log)
    doc = json.loads(_run_export(log, tmp_path / "t.json"))
    zero = dict.fromkeys(("unparseable_lines", "unknown_payload_kinds", "gaps",
                          "omitted_live_only", "duplicate_records", "torn_lines",
                          "sequence_gaps"), 0)
    assert {**zero, **counts} == doc["diagnostics"]
    assert len(log.read_bytes().splitlines()) == len(doc["events"])


def test_unparseable_lines_are_elements_of_their_own(tmp_path: Path) -> None:
    """Garbage and torn lines are kept, in place, with their raw text."""
    log = _log(tmp_path, 2)
    _garbage(log)
    _torn(log)
    doc = json.loads(_run_export(log, tmp_path / "t.json"))
    actual = [(e["kind"], e["line"], e.get("raw")) for e in doc["events"]]
    expected = [("record", 1, None), ("record", 2, None),
                ("unparseable", 3, "this is not json"),
                ("torn", 4, '{"sequence":99,"recorded_at":"2026')]
    assert expected == actual


# --------------------------------------------------------------------- termination


SID = "0b5e1c2a-1111-4222-8333-444455556666"


def test_terminated_abnormally_mid_session_then_not_after_session_end(tmp_path: Path) -> None:
    """Exported mid-session: true; after SessionEnd: false."""
    expected = 0
    assert expected == hook("SessionStart", base("SessionStart", SID, source="startup")).returncode
    hook("UserPromptSubmit", base("UserPromptSubmit", SID, prompt="hello"))
    mid = json.loads(_run_export(journal.log_path(SID), tmp_path / "mid.json"))
    hook("SessionEnd", base("SessionEnd", SID, reason="prompt_input_exit"))
    end = json.loads(_run_export(journal.log_path(SID), tmp_path / "end.json"))
    expected = (True, False)
    assert expected == (mid["session_terminated_abnormally"],
                             end["session_terminated_abnormally"])


def test_subagent_streams_are_summarised_and_exported(tmp_path: Path) -> None:
    """A subagent's log is a stream of its own: one summary and its events after main."""
    hook("SessionStart", base("SessionStart", SID, source="startup"))
    hook("SubagentStart", base("SubagentStart", SID, agent_id="agent-1", agent_type="x"))
    hook("SubagentStop", base("SubagentStop", SID, agent_id="agent-1", agent_type="x",
                              stop_hook_active=False))
    doc = json.loads(_run_export(journal.log_path(SID), tmp_path / "t.json"))
    actual = ([(s["stream"], s["log"], s["agent_id"], s["session_end"]["exit_reason"]
                if s["session_end"] else None) for s in doc["sessions"]],
              sorted({e["stream"] for e in doc["events"]}))
    expected = ([("main", "session.jsonl", None, None),
                 ("subagent/agent-1", "subagent/agent-1/session.jsonl", "agent-1",
                  "subagent_stop")],
                ["main", "subagent/agent-1"])
    assert expected == actual


# --------------------------------------------------------------------- choosing and writing


def test_default_output_is_named_from_the_log_and_only_its_path_is_printed(
        tmp_path: Path) -> None:
    """Without --out: trajectory-<last record time>.json in the cwd, its absolute path on stdout."""
    log = _copy_billing(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    proc = smllm("export", "--journal", str(log), cwd=work)
    expected = (0, f"{work / 'trajectory-20260802T101733580Z.json'}\n", "")
    assert expected == (proc.returncode, proc.stdout, proc.stderr)


def test_unwritable_out_gets_the_seed_message(tmp_path: Path) -> None:
    """An --out that cannot be written fails with seed 000's message, in smllm's format."""
    log = _copy_billing(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    target = blocker / "trajectory.json"
    proc = smllm("export", "--journal", str(log), "--out", str(target))
    expected = (1, "", f"smllm: error: export failed: could not write {target}: Not a directory "
                       "(write inside a folder you can write to, e.g. --out ./trajectory.json, "
                       "or drop --out to get trajectory-<timestamp>.json in the current "
                       "folder)\n")
    assert expected == (proc.returncode, proc.stdout, proc.stderr)
    expected = []
    assert expected == [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def _two_sessions() -> tuple[str, str]:
    older, newer = "aaaa0000-0000-4000-8000-000000000001", "bbbb0000-0000-4000-8000-000000000002"
    for sid in (older, newer):
        hook("SessionStart", base("SessionStart", sid, source="startup"))
    os.utime(journal.log_path(older), (1_000_000, 1_000_000))
    return older, newer


def test_piped_bare_export_takes_the_most_recent_session(tmp_path: Path) -> None:
    """Piped and with no session named, export takes the most recent session."""
    _, newer = _two_sessions()
    proc = smllm("export", cwd=tmp_path)
    doc = json.loads(Path(proc.stdout.strip()).read_bytes())
    assert (0, newer) == (proc.returncode, doc["sessions"][0]["session_id"])


def test_tty_bare_export_opens_the_picker(tmp_path: Path) -> None:
    """On a terminal with no session named, the picker lists sessions and exports the choice."""
    older, _ = _two_sessions()
    out, screen = _run_in_pty(["export"], b"2\n", tmp_path)
    written = Path(out.strip().splitlines()[-1])
    doc = json.loads(written.read_bytes())
    assert (True, older) == ("Choose a session [1-2" in screen, doc["sessions"][0]["session_id"])


def _run_in_pty(args: list[str], answer: bytes, cwd: Path) -> tuple[str, str]:
    """Run ``smllm ARGS`` with stdin/stdout on a pty (stderr captured); return (stdout, all)."""

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "smllm", *args], stdin=slave, stdout=slave,
                            stderr=slave, cwd=cwd, env=dict(os.environ))
    os.close(slave)
    data = b""
    sent = False
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
        if not sent and b"Choose a session" in data:
            os.write(master, answer)
            sent = True
    proc.wait(timeout=30)
    os.close(master)
    text = data.decode(errors="replace").replace("\r\n", "\n")
    lines = [ln for ln in text.splitlines() if ln.startswith("/")]
    return "\n".join(lines), text


def test_read_streams_the_events_of_an_export(tmp_path: Path) -> None:
    """export.read yields the same document as json.load, for ours and a re-indented copy."""
    raw = _run_export(_copy_billing(tmp_path), tmp_path / "t.json")
    whole: dict[str, Any] = json.loads(raw)
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(whole, indent=4))
    events = whole.pop("events")
    for path in (tmp_path / "t.json", pretty):
        doc = export.read(path)
        assert (whole, events) == (doc.meta, list(doc.events))


def test_last_prefers_the_most_recent_session_of_this_folder(tmp_path: Path) -> None:
    """--last takes the most recent session that ran in the cwd, else the most recent one."""
    here = tmp_path / "proj"
    here.mkdir()
    older, newer = "cccc0000-0000-4000-8000-000000000003", "dddd0000-0000-4000-8000-000000000004"
    hook("SessionStart", base("SessionStart", older, source="startup", cwd=str(here)))
    hook("SessionStart", base("SessionStart", newer, source="startup", cwd="/elsewhere"))
    os.utime(journal.log_path(older), (1_000_000, 1_000_000))
    chosen = []
    for cwd in (here, tmp_path):
        proc = smllm("export", "--last", "--out", str(cwd / "t.json"), cwd=cwd)
        chosen.append(json.loads((cwd / "t.json").read_bytes())["sessions"][0]["session_id"])
        expected = 0
        assert expected == proc.returncode, proc.stderr
    expected = [older, newer]
    assert expected == chosen


def test_export_and_html_ledger_are_private(tmp_path: Path) -> None:
    """A raw export holds what the journal holds: it is written 0600, like the journal; so is
    the HTML ledger."""
    import stat

    from helpers import base, hook, smllm

    sid = "export-private-1"
    hook("SessionStart", base("SessionStart", sid, source="startup"))
    out = tmp_path / "t.json"
    assert 0 == smllm("export", "--journal", sid, "--out", str(out)).returncode
    page = tmp_path / "ledger.html"
    assert 0 == smllm("ledger", str(out), "--html", str(page)).returncode
    assert (0o600, 0o600) == (stat.S_IMODE(out.stat().st_mode), stat.S_IMODE(page.stat().st_mode))


# --------------------------------------------------------------------- redaction by value


def _key_body(seed: int, first: str) -> list[str]:
    """The base64 body lines of a private key (64 characters each) starting with ``first``."""
    rnd = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+/"
    lines = [first + "".join(rnd.choice(alphabet) for _ in range(64 - len(first)))]
    lines += ["".join(rnd.choice(alphabet) for _ in range(64)) for _ in range(7)]
    return lines


PEM_BODY = _key_body(23, "MIIEpAIBAAKCAQEA")
SSH_BODY = _key_body(24, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ")
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"
SSH = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(SSH_BODY)
       + "\n-----END OPENSSH PRIVATE KEY-----")


def _intent(n: int, command: str, reason: str) -> journal.Entry:
    return journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                         tool_use_id=f"t{n}", idempotency_key=f"k{n}", policy_decision="ask",
                         rule="shell.secret", reason=reason, input={"command": command})


def _key_session(tmp_path: Path) -> Path:
    """Keys in Bash commands; the gate's reason quotes each one's first body line without
    its BEGIN marker; other records (before and after) copy body lines and fragments."""
    log = tmp_path / "sid-keys" / "session.jsonl"
    log.parent.mkdir(parents=True)
    journal.append(log, [
        journal.fact("session.start", {"session_id": "sid-keys"}),
        # before the key's record: only a second pass can know this is a fragment of it
        journal.fact("host.event", {"hook_event_name": "Notification",
                                    "message": f"checking {PEM_BODY[3][5:40]} now"}),
        _intent(1, f"printf '%s\\n' '{PEM}' > /tmp/id && ssh -i /tmp/id deploy@host",
                f"runs {PEM_BODY[0][:40]}…"),
        _intent(2, f"cat > ~/.ssh/id_ed25519 <<'EOF'\n{SSH}\nEOF",
                f"writes {SSH_BODY[0]}… to ~/.ssh"),
        journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": "t1", "outcome": "succeeded",
            "output": {"stdout": "\n".join(PEM_BODY[2:5]), "targets": [PEM_BODY[6][:12]],
                       "summary": {"first line": SSH_BODY[1]}}}),
    ])
    with open(log, "ab") as fh:  # an unparseable line copying a body line
        fh.write(f"garbage {PEM_BODY[7]}\n".encode())
    return log


def _fragments(lines: list[str]) -> set[str]:
    return {ln[i:i + 8] for ln in lines for i in range(len(ln) - 7)}


def test_no_fragment_of_a_key_survives_redaction(tmp_path: Path) -> None:
    """A PEM and an OpenSSH key in Bash commands: none of their body lines, and no run of 8
    characters of one, survives ``--redacted`` anywhere (the gate's reason quoting the first
    body line, copies in outputs and targets, a record before the key, an unparseable line);
    the raw export holds them all; the text around each fragment is kept."""
    log = _key_session(tmp_path)
    raw = _run_export(log, tmp_path / "raw.json").decode()
    red = _run_export(log, tmp_path / "red.json", "--redacted").decode()
    body = PEM_BODY + SSH_BODY
    expected = ([], [], True)
    assert expected == (
        [ln[:16] for ln in body if ln not in raw.replace("\\n", "\n")],
        sorted(f for f in _fragments(body) if f in red),
        "runs [REDACTED:pem]…" in red and "checking [REDACTED:pem] now" in red,
    )


def test_a_redacted_export_is_deterministic_and_redacts_to_itself(tmp_path: Path) -> None:
    """Exported redacted twice: byte-identical; and redacting its payloads again changes
    nothing (markers are never taken for secrets)."""
    log = _key_session(tmp_path)
    a = _run_export(log, tmp_path / "a.json", "--redacted")
    b = _run_export(log, tmp_path / "b.json", "--redacted")
    payloads = [e["envelope"]["payload"] for e in export.read(tmp_path / "a.json").events
                if e["kind"] == "record"]
    expected = (True, payloads)
    assert expected == (a == b, [secrets.redact_value(p) for p in payloads])


def test_the_viewer_masks_a_record_by_value(tmp_path: Path) -> None:
    """The viewer's redactor (the same functions) masks the key's first body line in the
    reason of the record that carries the key."""
    log = _key_session(tmp_path)
    recs = [r for r in journal.iter_records(log) if journal.kind_of(r) == "side_effect_intent"]
    shown = json.dumps([views.Redactor(raw=False).record(r) for r in recs], ensure_ascii=False)
    expected = ([], True)
    assert expected == (sorted(f for f in _fragments(PEM_BODY[:1] + SSH_BODY[:1]) if f in shown),
                        "runs [REDACTED:pem]…" in shown)


def test_hash_like_keys_are_trusted_only_in_the_envelope(tmp_path: Path) -> None:
    """A secret under a payload key named ``signature``, ``hash``, ``prev``, ``sha256`` or
    ``idempotency_key`` (at any depth) is redacted; the envelope's own ``hash``, ``prev``,
    ``id`` and ``sequence`` are kept."""
    token = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVb"
    log = tmp_path / "sid-hash" / "session.jsonl"
    log.parent.mkdir(parents=True)
    keys = ("signature", "hash", "prev", "sha256", "idempotency_key", "encrypted_content")
    journal.append(log, [
        journal.fact("session.start", {"session_id": "sid-hash"}),
        journal.fact("tool_batch.effect.terminal", {
            "tool_use_id": "t1", "outcome": "succeeded",
            "output": {"deep": [{k: f"{k} {token}" for k in keys}], "signature": token}}),
    ])
    _run_export(log, tmp_path / "raw.json")
    red = _run_export(log, tmp_path / "red.json", "--redacted").decode()
    envelope = ("hash", "prev", "id", "sequence")
    raws = [e["envelope"] for e in export.read(tmp_path / "raw.json").events]
    reds = [e["envelope"] for e in export.read(tmp_path / "red.json").events]
    expected = (False, [[r.get(k) for k in envelope] for r in raws])
    assert expected == (token in red, [[r.get(k) for k in envelope] for r in reds])
