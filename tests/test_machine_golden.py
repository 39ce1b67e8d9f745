"""Seed 001, byte for byte: bind through SessionStart, fire, stop, session list and audit."""


from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import allow_test_knobs

GOLDEN = Path(__file__).parent / "golden" / "seed001"
T0 = 1767603600000  # 2026-01-05 09:00 UTC, the seed's first call
SEED_BIND_REPLY = "sha256:e32bba214c735287af4ff7a2590c135f3c5c643ebd26df19f906428b1dc4cc23"


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class Seed:
    """A temporary HOME with ~/project/.smllm from the seed, and the real entry points."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = self.home / "project"
        (self.project / ".smllm").mkdir(parents=True)
        for folder in (".local/share", ".local/state"):  # as on any used account
            (self.home / folder).mkdir(parents=True)
        (self.home / ".config" / "smllm").mkdir(parents=True)  # hooks honour SMLLM_IDS/_NOW
        allow_test_knobs(self.home / ".config" / "smllm")
        for name in ("config.toml", "fix.smllm.yaml"):
            shutil.copy(GOLDEN / name, self.project / ".smllm" / name)
        self.env_file = root / "claude-env.sh"
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("SMLLM_", "XDG_", "CLAUDE"))}
        self.env.update({"HOME": str(self.home), "SMLLM_IDS": "sm-nqvfvw,i-419405"})

    def run(self, minute: int, *args: str, stdin: str | None = None,
            extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.env, "SMLLM_NOW": str(T0 + minute * 60_000), **(extra or {})}
        return subprocess.run([sys.executable, "-m", "smllm", *args], input=stdin,
                              capture_output=True, text=True, env=env, cwd=self.project,
                              timeout=60, check=False)

    def hook(self, minute: int, event: str, **payload: Any) -> dict[str, Any] | None:
        body = {"session_id": "cc-1", "transcript_path": str(self.home / "t.jsonl"),
                "cwd": str(self.project), "hook_event_name": event, **payload}
        proc = self.run(minute, "hook", event, stdin=json.dumps(body) + "\n",
                        extra={"CLAUDE_ENV_FILE": str(self.env_file)})
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout) if proc.stdout.strip() else None

    def tilde(self, text: str) -> str:
        """The seed shortens the home folder to ~; real output prints it in full."""
        return text.replace("~/", f"{self.home}/")


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Play seed 001's session once; every test below checks one of its outputs."""
    s = Seed(tmp_path_factory.mktemp("seed001"))
    out: dict[str, Any] = {"seed": s}
    start = s.hook(0, "SessionStart", source="startup")
    out["bind_text"] = start["hookSpecificOutput"]["additionalContext"] if start else None
    out["fires"] = [
        s.run(1, "fire", "--session", "sm-nqvfvw", "enter", "--param", "stateMachine=fix",
              "--json"),
        s.run(2, "fire", "--session", "sm-nqvfvw", "fixed", "--json"),
    ]
    out["stop"] = s.hook(3, "Stop", stop_hook_active=False, last_assistant_message="Done.")
    out["fires"].append(s.run(4, "fire", "--session", "sm-nqvfvw", "reproduced", "--param",
                              "bugId=BUG-7", "--json"))
    out["list"] = s.run(5, "session", "list")
    out["audit"] = s.run(5, "session", "show", "sm-nqvfvw", "--audit")
    out["audit_json"] = s.run(5, "session", "show", "sm-nqvfvw", "--audit", "--json")
    return out


FIRE_LINES = (GOLDEN / "fire.jsonl").read_text().splitlines()


@pytest.mark.parametrize(("step", "expected_exit"), [(0, 0), (1, 1), (2, 0)])
def test_fire_json_is_the_seeds(seed: dict[str, Any], step: int, expected_exit: int) -> None:
    """Each `fire --json` prints the seed's line exactly; a refused fire exits 1."""
    proc = seed["fires"][step]
    assert (FIRE_LINES[step] + "\n", expected_exit, "") == (proc.stdout, proc.returncode,
                                                            proc.stderr)


def test_stop_hook_blocks_with_the_seeds_text(seed: dict[str, Any]) -> None:
    """The Stop hook refuses the stop in TRIAGE with the seed's events text."""
    expected = {"decision": "block", "reason": (GOLDEN / "stop.txt").read_text()}
    assert expected == seed["stop"]


def test_session_list_is_the_seeds(seed: dict[str, Any]) -> None:
    """`smllm session list` prints the seed's row (full path instead of ~)."""
    expected = seed["seed"].tilde((GOLDEN / "session-list.txt").read_text())
    assert (expected, 0) == (seed["list"].stdout, seed["list"].returncode)


def test_audit_text_is_the_seeds(seed: dict[str, Any]) -> None:
    """`smllm session show KEY --audit` prints the seed's five lines."""
    assert (GOLDEN / "audit.txt").read_text() == seed["audit"].stdout


def test_audit_json_is_the_seeds(seed: dict[str, Any]) -> None:
    """`--audit --json` equals the seed's JSON lines; the bind hash is of our bind text."""
    expected = seed["seed"].tilde((GOLDEN / "audit.jsonl").read_text())
    expected = expected.replace(SEED_BIND_REPLY, _sha(seed["bind_text"]))
    assert expected == seed["audit_json"].stdout


def test_every_reply_hash_is_the_text_shown(seed: dict[str, Any]) -> None:
    """Each audit line's reply is the SHA-256 of exactly what the agent was shown."""
    shown = [seed["bind_text"]] + [json.loads(p.stdout)["text"] for p in seed["fires"][:2]]
    shown += [seed["stop"]["reason"], json.loads(seed["fires"][2].stdout)["text"]]
    lines = [json.loads(x) for x in seed["audit_json"].stdout.splitlines()]
    assert [_sha(t) for t in shown] == [ln["reply"] for ln in lines]


def test_not_accepted_filter_matches_the_seed(seed: dict[str, Any]) -> None:
    """The seed's jq filter over the audit JSON gives the seed's two lines."""
    keys = ("call", "event", "from", "outcome", "reason")
    lines = [json.loads(x) for x in seed["audit_json"].stdout.splitlines()]
    got = [json.dumps({k: ln[k] for k in keys}, separators=(",", ":"))
           for ln in lines if ln["outcome"] != "accepted"]
    assert (GOLDEN / "audit-not-accepted.jsonl").read_text().splitlines() == got


def test_audit_lives_in_the_state_folder(seed: dict[str, Any]) -> None:
    """The audit is audit/KEY.jsonl under $XDG_STATE_HOME/smllm (~/.local/state by default)."""
    path = seed["seed"].home / ".local/state/smllm/audit/sm-nqvfvw.jsonl"
    assert seed["audit_json"].stdout == path.read_text()


def test_session_start_exports_the_session(seed: dict[str, Any]) -> None:
    """SessionStart writes SMLLM_SESSION into $CLAUDE_ENV_FILE for the agent's shell."""
    assert "export SMLLM_SESSION=sm-nqvfvw\n" == seed["seed"].env_file.read_text()


def test_bind_text_offers_enter(seed: dict[str, Any]) -> None:
    """The bind text (ours: the seed never shows it) is the idle location offering enter."""
    expected = (
        "<smllm>\nsession sm-nqvfvw · idle\n"
        'Fire one event: smllm({ session: "sm-nqvfvw", event, params })\n<events>\n'
        "- enter: Start a state machine at its first state.\n"
        "    stateMachine (required, one of: fix): The machine to start "
        "(fix = Fix a bug, from a test that reproduces it to the fix.).\n"
        "</events>\n</smllm>\n")
    assert expected == seed["bind_text"]
