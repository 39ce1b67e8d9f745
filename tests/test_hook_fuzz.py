"""Fuzzing the gating and observing hooks: whatever arrives, they end with a decision (issue 10).

10,000+ generated inputs go through a fork server (tests/fuzz_server.py: the real entry
module imported once, one forked child per input with real pipes and exit status); the
cases that break imports run as fresh processes with the command ``smllm install`` writes.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import PYTHON, REPO

from smllm.base.errors import SmllmError
from smllm.hooks import TOOL_EVENTS
from smllm.hooks._context import parse_input
from smllm.setup import install

DEADLINE = 6.0
SEED = 20261201
PER_EVENT = 5200  # PreToolUse and PermissionRequest: 10,400 inputs

SAMPLES: list[dict[str, Any]] = [
    {"tool_name": "Bash", "tool_input": {"command": "echo hi > a.txt", "description": "d"}},
    {"tool_name": "Bash", "tool_input": {"command": "rm -rf ~/"}},
    {"tool_name": "Bash", "tool_input": {"command": "python3 -c \"open('.smllm/policy.toml','w')\""}},
    {"tool_name": "Write", "tool_input": {"file_path": "/tmp/p/x.py", "content": "print(1)\n"}},
    {"tool_name": "Edit", "tool_input": {"file_path": "/tmp/p/.claude/settings.json",
                                         "old_string": "a", "new_string": "b"}},
    {"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}},
    {"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "/tmp/p/n.ipynb",
                                                 "new_source": "x"}},
    {"tool_name": "mcp__fs__write_file", "tool_input": {"path": "/tmp/p/y", "content": "z"}},
    {"tool_name": "WebFetch", "tool_input": {"url": "http://127.0.0.1/", "prompt": "p"}},
]
HOSTILE_STRINGS = ["\ud800", "\udfff", "a\ud83db", "\x00", "\u2028", "../../..", "$(rm -rf ~)",
                   "\U0001f600", "\\", '"', "~/" + "\udc80" * 3, "x" * 70_000]


def _payload(rng: random.Random, event: str, sid: str, transcript: str) -> dict[str, Any]:
    sample = json.loads(json.dumps(rng.choice(SAMPLES)))
    p: dict[str, Any] = {"session_id": sid, "transcript_path": transcript, "cwd": "/tmp/p",
                         "hook_event_name": event, "permission_mode": "default", **sample}
    if event == "PreToolUse":
        p["tool_use_id"] = f"toolu_{rng.randrange(10**9)}"
    else:
        p["permission_suggestions"] = [{"type": "addRules", "behavior": "allow"}]
    return p


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(9 if depth < 3 else 5)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice([0, -1, 2**70, 1.5e308, True])
    if pick == 2:
        return rng.choice(HOSTILE_STRINGS)
    if pick == 3:
        return "".join(chr(rng.randrange(1, 0x110000)) for _ in range(rng.randrange(1, 30)))
    if pick == 4:
        return ""
    if pick in (5, 6):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["command", "file_path", "x", "\ud800"]): _random_value(rng, depth + 1)
            for _ in range(rng.randrange(4))}


def _mutate(rng: random.Random, p: dict[str, Any]) -> bytes:
    how = rng.randrange(8)
    if how == 0:  # a field replaced by something of another type
        p[rng.choice(list(p))] = _random_value(rng)
    elif how == 1:  # a hostile string inside the tool input
        key = rng.choice(["command", "file_path", "content"])
        p["tool_input"][key] = rng.choice(HOSTILE_STRINGS) + str(p["tool_input"].get(key, ""))
    elif how == 2:  # deep nesting (rarely very deep: each costs a parse of its own)
        depth = 200_000 if rng.random() < 0.02 else rng.choice([50, 5000])
        return (json.dumps(p)[:-1] + ',"deep":' + "[" * depth + "]" * depth + "}").encode()
    elif how == 3:  # a huge value
        big = rng.random() < 0.02  # over the 8 MiB input limit, or just under it
        p["tool_input"]["content"] = "y" * (rng.choice([3_000_000, 9_000_000]) if big else 40_000)
    elif how == 4:  # a field dropped
        p.pop(rng.choice(list(p)))
    data = bytearray(json.dumps(p, ensure_ascii=rng.random() < 0.5,
                                ).encode("utf-8", "surrogatepass"))
    if how == 5:  # bytes flipped
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == 6:  # cut short
        del data[rng.randrange(len(data)):]
    elif how == 7:  # random bytes inserted
        at = rng.randrange(len(data))
        data[at:at] = rng.randbytes(rng.randrange(1, 20))
    return bytes(data)


def _special_transcripts(tmp: Path) -> list[str]:
    fifo = tmp / "fifo.jsonl"
    os.mkfifo(fifo)
    folder = tmp / "folder.jsonl"
    folder.mkdir()
    link = tmp / "link.jsonl"
    link.symlink_to(fifo)
    dev = tmp / "zero.jsonl"
    dev.symlink_to("/dev/zero")
    return [str(fifo), str(folder), str(link), str(dev), str(tmp / "missing.jsonl")]


def _inputs(tmp: Path) -> list[tuple[str, bytes]]:
    rng = random.Random(SEED)
    transcripts = _special_transcripts(tmp)
    out: list[tuple[str, bytes]] = []
    for event in ("PreToolUse", "PermissionRequest"):
        for i in range(PER_EVENT):
            sid = f"fuzz-{event[:3]}-{i // 40}"
            transcript = transcripts[i % len(transcripts)]
            kind = i % 10
            if kind < 2:
                data = rng.randbytes(rng.randrange(0, 400))
            elif kind == 2:
                p = _payload(rng, event, sid, transcript)
                p["tool_input"]["command"] = rng.choice(HOSTILE_STRINGS)
                data = json.dumps(p).encode()  # lone surrogates as \ud800 escapes
            else:
                data = _mutate(rng, _payload(rng, event, sid, transcript))
            out.append((event, data))
    return out


def _valid(event: str, data: bytes) -> bool:
    try:
        parse_input(event, data, tool_event=event in TOOL_EVENTS)
    except (SmllmError, RecursionError, MemoryError):
        return False
    return True


def _check(event: str, data: bytes, res: dict[str, Any]) -> str | None:
    """What is wrong with one run, or None."""
    out = base64.b64decode(res["out"])
    err = base64.b64decode(res["err"])
    if res["seconds"] > DEADLINE + 2:
        return f"took {res['seconds']:.1f} s"
    if b"Traceback" in err:
        return f"traceback: {err[-300:]!r}"
    if event == "PermissionRequest":
        return None if (res["rc"], out) == (0, b"") else f"observing hook: rc {res['rc']}, {out!r}"
    if res["rc"] == 2:
        return None  # a block: Claude Code does not run the call
    if res["rc"] != 0:
        return f"exit {res['rc']}"
    try:
        obj = json.loads(out.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None if (out == b"" and _valid(event, data)) else f"no decision: {out[:200]!r}"
    decision = obj["hookSpecificOutput"]["permissionDecision"]
    if decision != "deny" and not _valid(event, data):
        return f"{decision} on invalid input"
    return None


def test_fuzzed_inputs_always_end_in_a_decision(tmp_path: Path) -> None:
    """10,400 generated inputs: PreToolUse always denies (or decides on valid input),
    PermissionRequest always passes silently; never a traceback, exit 1/3 or a hang."""
    inputs = _inputs(tmp_path)
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps({"event": e, "data": base64.b64encode(d).decode()}) + "\n"
                             for e, d in inputs))
    results = tmp_path / "results.jsonl"
    home = Path("/dev/shm") / f"smllm-fuzz-{os.getpid()}"
    env = {**os.environ, "SMLLM_HOME": str(home), "SMLLM_HOOK_DEADLINE": str(DEADLINE),
           "PYTHONPATH": str(REPO)}
    try:
        subprocess.run([PYTHON, str(REPO / "tests" / "fuzz_server.py"), str(batch),
                        str(results)], env=env, check=True, timeout=900)
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=False)
    runs = [json.loads(line) for line in results.read_text().splitlines()]
    problems = [(e, d[:120], p) for (e, d), r in zip(inputs, runs, strict=True)
                if (p := _check(e, d, r)) is not None]
    assert (10_400, []) == (len(runs), problems[:5])


POISONS: dict[str, dict[str, str]] = {
    "_json raises": {"_json.py": "raise RuntimeError('poisoned _json')\n"},
    "_json is empty": {"_json.py": ""},
    "_json exits": {"_json.py": "raise SystemExit(1)\n"},
    "_json interrupts": {"_json.py": "raise KeyboardInterrupt\n"},
    "smllm is broken": {"smllm/__init__.py": "raise ImportError('broken smllm')\n"},
    "smllm has no hooks": {"smllm/__init__.py": ""},
    "smllm.hooks is a syntax error": {"smllm/__init__.py": "",
                                      "smllm/hooks/__init__.py": "def (:\n"},
    "tomllib raises": {"tomllib.py": "raise OSError('poisoned')\n",
                       "tomli.py": "raise OSError('poisoned')\n"},
    "_sha256 raises": {"_sha256.py": "raise MemoryError\n", "_hashlib.py": "raise MemoryError\n"},
    "platformdirs raises": {"platformdirs/__init__.py": "raise ValueError('x')\n"},
}


@pytest.mark.parametrize("name", sorted(POISONS))
@pytest.mark.parametrize("event", ["PreToolUse", "PermissionRequest"])
def test_poisoned_imports_still_end_in_a_decision(tmp_path: Path, name: str, event: str) -> None:
    """With a poisoned module first on sys.path, the installed command still denies
    (exit 0 JSON or exit 2) or passes silently; never a traceback or exit 1."""
    poison = tmp_path / "poison"
    for rel, text in POISONS[name].items():
        (poison / rel).parent.mkdir(parents=True, exist_ok=True)
        (poison / rel).write_text(text)
    setup = f"sys.path.insert(0, {str(poison)!r}); "
    code = install.HOOK_GUARD + setup + install.HOOK_ENTRY
    payload = {"session_id": "poison-1", "transcript_path": str(tmp_path / "t.jsonl"),
               "cwd": str(tmp_path), "hook_event_name": event, "tool_name": "Bash",
               "tool_input": {"command": "rm -rf ~/"}, "tool_use_id": "toolu_1"}
    proc = subprocess.run([sys.executable, "-I", "-c", code, event], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "SMLLM_HOOK_DEADLINE": str(DEADLINE),
                               "PYTHONPATH": str(REPO / "src")})
    assert "Traceback" not in proc.stderr
    if event == "PermissionRequest":
        assert (0, "") == (proc.returncode, proc.stdout)
    elif proc.returncode == 2:
        assert "the call is denied" in proc.stderr
    else:
        decision = json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"]
        assert (0, "deny") == (proc.returncode, decision)
