"""The typed shapes of the query API, shared by the embedded index and the team store.

One :class:`Filters` object selects sessions and records in both back ends
(:mod:`smllm.index` on one machine, :mod:`smllm.store` on PostgreSQL); the rows come
back as :class:`SessionRow` and :class:`Hit`, with the same fields whichever answered.
Times are Unix milliseconds (``*_ms``) plus the journal's RFC 3339 text (``*_at``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from smllm.base.clock import parse_iso_ms

#: the decisions a stamp ``<decision>:<authorizer>`` can start with (closed set)
DECISIONS: tuple[str, ...] = ("allow", "deny", "ask", "defer")


@dataclass(frozen=True)
class Filters:
    """What to select. Every field is optional; the fields given must all match.

    Session filters (``sessions()`` and ``search()``):
    * ``session``: a host session id, or a unique prefix of one
    * ``project``: a folder; sessions that ran in it or below it
    * ``user``, ``host``: who and where (the team store records both; on one machine
      they are this machine's and match or exclude everything)
    * ``since_ms``, ``until_ms``: the session started (``sessions``) or the record was
      written (``search``) in ``[since_ms, until_ms)``

    Record filters (``search()`` only):
    * ``kind``: the record kind (``side_effect_intent``, ``tool_batch.effect.terminal``,
      ``approval.review``, ``session.start``, ...)
    * ``tool``: the tool, as in operations (``bash``, ``edit``, ``mcp__x__y``); ``Bash``
      is accepted and means ``bash``
    * ``decision``, ``authorizer``: the two halves of a stamp ``allow:llm_judge``; for an
      intent they match its *effective* authorization (the authorizer its terminal
      record observed when smllm deferred to Claude Code, else its own stamp)
    * ``rule``: the policy rule id that decided
    * ``text``: a substring of the command, file path, path, URL or pattern acted on
      (case-sensitive)

    ``limit`` caps the rows returned (None: all); rows come newest first.
    """

    session: str | None = None
    project: str | None = None
    user: str | None = None
    host: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    kind: str | None = None
    tool: str | None = None
    decision: str | None = None
    authorizer: str | None = None
    rule: str | None = None
    text: str | None = None
    limit: int | None = None

    def with_(self, **changes: Any) -> Filters:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def stamps(self) -> list[str] | None:
        """The exact stamps ``decision``/``authorizer`` select (None: no such filter)."""
        if self.decision is None and self.authorizer is None:
            return None
        decisions = [self.decision] if self.decision is not None else list(DECISIONS)
        if self.authorizer is not None:
            return [f"{d}:{self.authorizer}" for d in decisions]
        return decisions  # decision alone: matched as a prefix by the back ends


class SessionRow(NamedTuple):
    """One host session (its main journal), newest first in listings (a NamedTuple:
    listing ten thousand of them must stay cheap)."""

    session_id: str
    started_at: str | None
    started_ms: int | None
    last_at: str | None
    folder: str | None
    journal: str | None  # the local session.jsonl; None for a store row without one here
    records: int
    termination: str  # exit_reason of the last session.end (clean, crash_inferred, ...) or open
    first_prompt: str | None
    host: str | None
    user: str | None
    git_remote: str | None = None
    smllm_version: str | None = None
    harness: str | None = None  # the agent CLI when not Claude Code (``codex``)

    def as_json(self) -> dict[str, Any]:
        out = self._asdict()
        if out["harness"] is None:  # Claude Code's rows stay as they were
            del out["harness"]
        return out


class Hit(NamedTuple):
    """One record that matched a search, with its facets.

    For a ``side_effect_intent`` the effect it opened is joined in: ``authorization`` is
    the effective stamp (see :class:`Filters`), ``outcome`` and ``terminal_sequence``
    come from its terminal record (None while the effect has none).
    """

    session_id: str
    stream: str  # "main", or "subagent/<agent id>"
    sequence: int
    recorded_at: str | None
    recorded_ms: int | None
    kind: str | None
    tool: str | None
    text: str | None
    decision: str | None  # the record's own stamp (policy_decision, authorized_by, ...)
    authorization: str | None
    rule: str | None
    outcome: str | None
    terminal_sequence: int | None
    folder: str | None
    host: str | None
    user: str | None
    journal: str | None = None

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class Where:
    """A SQL ``WHERE`` clause, condition by condition, with its parameters (each back end
    writes its own placeholders: ``?`` for SQLite, ``%s`` for psycopg)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.args: list[Any] = []

    def add(self, sql: str, *args: Any) -> None:
        self.parts.append(sql)
        self.args.extend(args)

    def sql(self) -> str:
        return (" WHERE " + " AND ".join(self.parts)) if self.parts else ""


@dataclass(frozen=True)
class RefreshStats:
    """What one :func:`smllm.index.refresh` did."""

    journals: int  # journals looked at
    read: int  # journals with new bytes read
    records: int  # records added
    rebuilt: int  # journals re-read from the start (replaced or cut since the last read)
    seconds: float


_UNITS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


def parse_time(text: str, now_ms: int) -> int:
    """Unix ms of ``text``: ``2026-01-05``, ``2026-01-05T09:00``, or an age (``30m``,
    ``12h``, ``7d``, ``2w``) before ``now_ms``. Raises ``ValueError``.

    >>> parse_time("2026-01-05", 0)
    1767571200000
    >>> parse_time("2d", 172_800_000)
    0
    """
    value = text.strip()
    if len(value) >= 2 and value[:-1].isdigit() and value[-1] in _UNITS:
        return now_ms - int(value[:-1]) * _UNITS[value[-1]]

    padded = value.replace(" ", "T")
    if len(padded) == 10:
        padded += "T00:00"
    if len(padded) == 16:
        padded += ":00"
    ms = parse_iso_ms(padded)
    if ms is None:
        raise ValueError(text)
    return ms
