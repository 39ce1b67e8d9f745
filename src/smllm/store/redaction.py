"""What a journal line becomes in the team store: redacted, and chained.

A store is made for redacted shipping (the default) or raw shipping (``smllm store init
--raw``); the choice is the ``shipping`` row of ``smllm.meta``. Redacted, each session
is read twice: the first pass learns every secret the rules find in any of its
journals (:class:`smllm.base.secrets.Masker`), the second writes each record with its
payload redacted and every learnt secret (and fragment of one) masked by value, as
``smllm export --redacted`` does; the envelope (sequence, prev, hash) is kept. A record
in which nothing is masked is stored as the journal wrote it.

A redacted line no longer hashes to its journal hash, so each stored row also carries
a link of a second chain, over the stored rows themselves (:func:`link`): the previous
row's link, the journal hash, whether the line was redacted, and the stored line. An
edited, removed or reordered row breaks it without access to the secrets; the heads a
ship records (``smllm.heads``) show rows cut from the end.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from smllm import journal
from smllm.base import secrets

if TYPE_CHECKING:
    from collections.abc import Iterable

    from smllm.base.shapes import Record

Shipping = Literal["raw", "redacted"]
MODES: tuple[Shipping, ...] = ("redacted", "raw")
GENESIS = journal.GENESIS
#: what a store made with ``store init --raw`` is said to be, wherever it is read
RAW_NOTE = ("raw store: its lines hold every secret in clear (made with `smllm store init "
            "--raw`)")


def link(prev: str, digest: str, redacted: bool, line: bytes) -> str:
    """The stored-row chain's link of one row (``prev``: the previous row's link, or
    :data:`GENESIS` for a stream's first)."""
    h = hashlib.sha256(f"{prev}\n{digest}\n{'r' if redacted else 'c'}\n".encode())
    h.update(line)
    return "sha256:" + h.hexdigest()


@dataclass
class SessionSecrets:
    """Pass 1 over every journal of one session: what the rules found, and where."""

    masker: secrets.Masker = field(default_factory=secrets.Masker)
    #: (journal path, sequence) of each record in which the rules found a secret
    flagged: set[tuple[str, int]] = field(default_factory=set)


def learn(paths: Iterable[str]) -> SessionSecrets:
    """Read every record of the journals at ``paths`` (a session's main log and its
    subagents' logs) and learn their secrets."""
    found = SessionSecrets()
    for path in paths:
        if not os.path.isfile(path):  # removed since the index saw it: nothing to learn
            continue
        for line in journal.iter_lines(path):
            rec = line.record
            if line.status != "record" or rec is None:
                continue
            if "payload" in rec and secrets.learn(rec["payload"], found.masker):
                found.flagged.add((path, int(rec["sequence"])))
    return found


def _dumps(rec: Record) -> str:
    text = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escaped, as the journal writes them
        text = json.dumps(rec, ensure_ascii=True, separators=(",", ":"))
    return text


def redact_line(path: str, raw: bytes, rec: Record, found: SessionSecrets
                ) -> tuple[bytes, Record, bool]:
    """(the line to store, the record it holds, whether anything was masked)."""
    if "payload" not in rec:
        return raw, rec, False
    payload = rec["payload"]
    if (path, int(rec["sequence"])) in found.flagged:
        masked = secrets.redact_value(payload, known=found.masker)
    elif found.masker:
        masked = found.masker.mask_value(payload)
    else:
        return raw, rec, False
    if masked == payload:
        return raw, rec, False
    out: Record = dict(rec)  # type: ignore[assignment]
    out["payload"] = masked
    return _dumps(out).encode("utf-8"), out, True


def mask_text(value: str | None, found: SessionSecrets | None) -> str | None:
    """A derived column (a target, a git remote) with every secret masked: by the rules
    and by value."""
    if value is None or found is None:
        return value
    out = secrets.redact_text(value)
    return found.masker.mask_text(out) if found.masker else out


def same_but_secrets(stored: bytes, local: bytes, found: SessionSecrets) -> bool:
    """The stored line is the local journal's line with its secrets removed: the same
    as redacting it now, or the same once the secrets learnt since it was shipped
    (a later record can reveal an earlier value) are masked in it too."""
    rec = journal.parse_line(local)
    if rec is None:
        return False
    path = "\0local"
    fresh, _, _ = redact_line(path, local, rec, _as_flagged(found, path, rec))
    if fresh == stored:
        return True
    again = journal.parse_line(stored)
    if again is None or "payload" not in again or not found.masker:
        return False
    again["payload"] = found.masker.mask_value(again["payload"])
    return _dumps(again).encode("utf-8") == fresh


def _as_flagged(found: SessionSecrets, path: str, rec: Record) -> SessionSecrets:
    """``found``, with the local record flagged (the rules run on it again)."""
    return SessionSecrets(found.masker, {(path, int(rec["sequence"]))})


def mode_of(value: Any) -> Shipping:
    return "raw" if value == "raw" else "redacted"
