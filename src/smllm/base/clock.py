"""The clock and the id source, with the reproducibility knobs of product.md §3.

``SMLLM_NOW`` (Unix milliseconds) freezes the clock every record and audit line
uses. ``SMLLM_IDS`` (comma-separated) lists ids to hand out before random ones: an
id is taken by the first request for its prefix (``sm-``, ``i-``, …), once per
store, so a run of several processes hands them out in order.
"""

from __future__ import annotations

import time

from smllm.base import osfast as os
from smllm.base import paths
from smllm.base.errors_hot import UsageError
from smllm.base.lockfile import locked


def now_ms() -> int:
    """Unix time in milliseconds, or ``SMLLM_NOW`` when set."""
    fixed = os.environ.get("SMLLM_NOW")
    if fixed:
        try:
            return int(fixed)
        except ValueError:
            raise UsageError(
                f"SMLLM_NOW={fixed!r} is not an integer",
                "set it to Unix time in milliseconds, e.g. SMLLM_NOW=1767603600000",
            ) from None
    return time.time_ns() // 1_000_000


def iso_utc(ms: int) -> str:
    """RFC 3339 UTC with milliseconds, e.g. ``2026-01-05T09:00:00.000Z``."""
    secs, rem = divmod(ms, 1000)
    t = time.gmtime(secs)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{rem:03d}Z"
    )


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (no calendar/datetime import)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_iso_ms(text: str | None) -> int | None:
    """Unix milliseconds of an :func:`iso_utc` string, or None if it is not one.

    >>> parse_iso_ms("2026-01-05T09:00:00.000Z")
    1767603600000
    >>> parse_iso_ms("yesterday") is None
    True
    """
    if not text or len(text) < 19 or text[4] != "-" or text[10] != "T":
        return None
    try:
        y, mo, d = int(text[0:4]), int(text[5:7]), int(text[8:10])
        h, mi, sec = int(text[11:13]), int(text[14:16]), int(text[17:19])
        ms = int(text[20:23]) if len(text) >= 23 and text[19] == "." else 0
    except ValueError:
        return None
    return ((_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _random_suffix(prefix: str) -> str:
    raw = os.urandom(8)
    if prefix == "i-":
        return "".join("0123456789"[b % 10] for b in raw[:6])
    if prefix == "sm-":
        return "".join(_LETTERS[b % 26] for b in raw[:6])
    return raw.hex()


def new_id(prefix: str) -> str:
    """A fresh id such as ``sm-nqvfvw`` (session) or ``i-419405`` (instance).

    The next unused ``SMLLM_IDS`` entry with this prefix wins over a random one.
    """
    planned = os.environ.get("SMLLM_IDS", "")
    if planned:
        taken = _take_planned(prefix, [p.strip() for p in planned.split(",") if p.strip()])
        if taken is not None:
            return taken
    return prefix + _random_suffix(prefix)


def _take_planned(prefix: str, planned: list[str]) -> str | None:
    candidates = [p for p in planned if p.startswith(prefix)]
    if not candidates:
        return None
    root = paths.ensure_private_tree(paths.state_root(), paths.state_root())
    ledger = os.path.join(root, "ids-taken")
    with locked(paths.lock_path("ids-taken.lock")):
        try:
            with open(ledger, encoding="utf-8") as fh:
                used = set(fh.read().split())
        except FileNotFoundError:
            used = set()
        for cand in candidates:
            if cand not in used:
                fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, (cand + "\n").encode())
                finally:
                    os.close(fd)
                return cand
    return None
