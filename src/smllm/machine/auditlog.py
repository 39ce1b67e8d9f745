"""Reading an audit: seed 001's one-line-per-call text format and the session list."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from smllm.base.shapes import AuditLine


def when(ms: int) -> str:
    """``2026-01-05 09:04 UTC``."""
    t = time.gmtime(ms // 1000)
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d} "
            f"{t.tm_hour:02d}:{t.tm_min:02d} UTC")


def _where(rec: AuditLine) -> str:
    before, after = rec.get("from"), rec.get("to")
    moved = f"{before or 'idle'} → {after or 'idle'}" if before != after else before or "idle"
    if rec.get("machine"):
        return f"{rec['machine']} {rec['instance']} {moved}"
    return moved


def format_line(rec: AuditLine) -> str:
    """One audit line as text: ``… agent  fire enter  fix i-419405 idle → TRIAGE  accepted``."""
    call = rec["call"] + (f" {rec['event']}" if rec.get("event") else "")
    outcome = rec["outcome"] + (f": {rec['reason']}" if rec.get("reason") else "")
    return f"{when(rec['at'])}  {rec['source']}  {call}  {_where(rec)}  {outcome}"


def _ordered(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(states, key=lambda s: (-(s.get("last") or 0), s["key"]))


def session_records(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``smllm session list --json``: one object per session, most recently active first."""
    out = []
    for s in _ordered(states):
        binding = s.get("binding") or {}
        focus = s.get("focus")
        inst = s["instances"].get(focus) if focus else None
        out.append({"session": s["key"], "harness": binding.get("harness"),
                    "hostSession": binding.get("hostSession"), "cwd": binding.get("cwd"),
                    "machine": inst["machine"] if inst else None,
                    "instance": inst["id"] if inst else None,
                    "state": inst["state"] if inst else None,
                    "ref": inst.get("ref") if inst else None,
                    "last": s.get("last")})
    return out


def session_rows(states: list[dict[str, Any]]) -> list[str]:
    """``smllm session list``: most recently active first, columns aligned."""
    ordered = _ordered(states)
    rows = []
    for s in ordered:
        binding = s.get("binding") or {}
        focus = s.get("focus")
        inst = s["instances"].get(focus) if focus else None
        where = f"{inst['machine']} {inst['id']}" if inst else "idle"
        rows.append([s["key"], str(binding.get("harness") or "-"), where,
                     f"last active {when(s.get('last') or 0)}", str(binding.get("cwd") or "-")])
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4]
            for r in rows]
