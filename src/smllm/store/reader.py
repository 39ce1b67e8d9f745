"""``sessions`` and ``search`` against the team store, with the index's :class:`Filters`.

The documented indexes serve the audit questions: ``records_decision`` (partial, on the
stamp) answers "every action a judge approved" without reading the other records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from smllm.base.clock import iso_utc
from smllm.index.facets import tool_name
from smllm.index.model import Filters, Hit, SessionRow, Where

if TYPE_CHECKING:
    import psycopg

#: authorizers only a terminal record observes, for an intent smllm deferred
OBSERVED = frozenset({"host", "user"})
DEFERRED = "(r.decision LIKE 'defer:%%' OR r.decision LIKE 'ask:%%')"


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _session_filters(w: Where, f: Filters, time_column: str | None) -> None:
    if f.session is not None:
        w.add("(s.session_id = %s OR s.session_id LIKE %s)", f.session, _like(f.session) + "%")
    if f.project is not None:
        folder = f.project.rstrip("/") or "/"
        w.add("(s.project = %s OR s.project LIKE %s)", folder, _like(folder + "/") + "%")
    if f.user is not None:
        w.add("s.os_user = %s", f.user)
    if f.host is not None:
        w.add("s.host = %s", f.host)
    if time_column is not None:
        if f.since_ms is not None:
            w.add(f"{time_column} >= %s", iso_utc(f.since_ms))
        if f.until_ms is not None:
            w.add(f"{time_column} < %s", iso_utc(f.until_ms))


_SESSIONS = """
SELECT s.session_id, s.started_at, c.last_at, s.project, c.records,
       coalesce(t.termination, 'open'), p.prompt, s.host, s.os_user, s.git_remote,
       s.smllm_version, h.harness
FROM smllm.sessions s
LEFT JOIN LATERAL (
  SELECT count(*) AS records, max(r.recorded_at) AS last_at FROM smllm.records r
  WHERE r.host = s.host AND r.session_id = s.session_id AND r.stream = 'main') c ON true
LEFT JOIN LATERAL (
  SELECT CASE WHEN r.kind = 'session.end' THEN coalesce(r.outcome, 'ended') ELSE 'open' END
         AS termination
  FROM smllm.records r
  WHERE r.host = s.host AND r.session_id = s.session_id AND r.stream = 'main'
    AND r.kind IN ('session.start', 'session.resumed', 'session.end')
  ORDER BY r.sequence DESC LIMIT 1) t ON true
LEFT JOIN LATERAL (
  SELECT left(regexp_replace(r.line::jsonb #>> '{payload,event,prompt}', '\\s+', ' ', 'g'),
              500) AS prompt
  FROM smllm.records r
  WHERE r.host = s.host AND r.session_id = s.session_id AND r.stream = 'main'
    AND r.kind = 'proposed' AND r.line IS NOT NULL
    AND r.line::jsonb #>> '{payload,event,prompt}' ~ '\\S'
  ORDER BY r.sequence LIMIT 1) p ON true
LEFT JOIN LATERAL (
  SELECT r.line::jsonb #>> '{payload,record,harness}' AS harness
  FROM smllm.records r
  WHERE r.host = s.host AND r.session_id = s.session_id AND r.stream = 'main'
    AND r.kind = 'session.start' AND r.line IS NOT NULL
  ORDER BY r.sequence LIMIT 1) h ON true
"""


def _iso(value: Any) -> tuple[str | None, int | None]:
    if value is None:
        return None, None
    ms = int(value.timestamp() * 1000)
    return iso_utc(ms), ms


def _fetch(conn: psycopg.Connection[Any], sql: str, w: Where, limit: int | None
           ) -> list[tuple[Any, ...]]:
    """The rows ``sql`` selects with the parameters of ``w``, at most ``limit``."""
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    with conn.cursor() as cur:
        cur.execute(sql.encode(), w.args)
        return cur.fetchall()


def sessions(conn: psycopg.Connection[Any], f: Filters) -> list[SessionRow]:
    """Sessions in the store matching ``f``, newest start first."""
    w = Where()
    _session_filters(w, f, "s.started_at")
    sql = _SESSIONS + w.sql() + " ORDER BY s.started_at DESC NULLS LAST, s.session_id DESC"
    out = []
    for r in _fetch(conn, sql, w, f.limit):
        started_at, started_ms = _iso(r[1])
        last_at, _ = _iso(r[2])
        out.append(SessionRow(session_id=r[0], started_at=started_at, started_ms=started_ms,
                              last_at=last_at, folder=r[3], journal=None, records=int(r[4]),
                              termination=r[5], first_prompt=r[6], host=r[7], user=r[8],
                              git_remote=r[9], smllm_version=r[10], harness=r[11]))
    return out


def _stamp_filter(w: Where, f: Filters) -> None:
    if f.decision is None and f.authorizer is None:
        return
    pattern = f"{_like(f.decision) if f.decision else '%'}:" \
              f"{_like(f.authorizer) if f.authorizer else '%'}"
    w.add(f"(CASE WHEN {DEFERRED} AND t.decision IS NOT NULL THEN t.decision "
          "ELSE r.decision END) LIKE %s", pattern)
    if f.decision is not None and f.authorizer is not None and f.authorizer not in OBSERVED:
        # only the intent's own stamp can say so: lets the planner use records_decision
        w.add("r.decision = %s", f"{f.decision}:{f.authorizer}")


def search(conn: psycopg.Connection[Any], f: Filters) -> list[Hit]:
    """Records in the store matching ``f``, newest first."""
    w = Where()
    _session_filters(w, f, None)
    if f.since_ms is not None:
        w.add("r.recorded_at >= %s", iso_utc(f.since_ms))
    if f.until_ms is not None:
        w.add("r.recorded_at < %s", iso_utc(f.until_ms))
    if f.kind is not None:
        w.add("r.kind = %s", f.kind)
    if f.tool is not None:
        w.add("r.tool = %s", tool_name(f.tool))
    _stamp_filter(w, f)
    if f.rule is not None:
        w.add("r.rule = %s", f.rule)
    if f.text is not None:
        w.add("strpos(r.target, %s) > 0", f.text)
    sql = ("SELECT r.session_id, r.stream, r.sequence, r.recorded_at, r.kind, r.tool, r.target, "  # noqa: S608 - the values are parameters
           f"r.decision, CASE WHEN r.kind = 'side_effect_intent' THEN (CASE WHEN {DEFERRED} AND "
           "t.decision IS NOT NULL THEN t.decision ELSE r.decision END) END, r.rule, "
           "CASE WHEN r.kind = 'side_effect_intent' THEN t.outcome ELSE r.outcome END, "
           "t.sequence, s.project, s.host, s.os_user "
           "FROM smllm.records r JOIN smllm.sessions s ON s.host = r.host AND "
           "s.session_id = r.session_id LEFT JOIN smllm.records t ON "
           "r.kind = 'side_effect_intent' AND t.host = r.host AND "
           "t.session_id = r.session_id AND t.stream = r.stream AND "
           "t.kind = 'tool_batch.effect.terminal' AND t.tool_use_id = r.tool_use_id"
           f"{w.sql()} ORDER BY r.recorded_at DESC, r.session_id DESC, r.stream, "
           "r.sequence DESC")
    out = []
    for r in _fetch(conn, sql, w, f.limit):
        at, ms = _iso(r[3])
        out.append(Hit(session_id=r[0], stream=r[1], sequence=int(r[2]), recorded_at=at,
                       recorded_ms=ms, kind=r[4], tool=r[5], text=r[6], decision=r[7],
                       authorization=r[8], rule=r[9], outcome=r[10],
                       terminal_sequence=None if r[11] is None else int(r[11]),
                       folder=r[12], host=r[13], user=r[14]))
    return out
