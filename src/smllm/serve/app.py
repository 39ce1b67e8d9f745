"""The viewer's routes: each page, and the same data as JSON under ``/api``.

* ``/`` and ``/sessions`` — ``/api/sessions``
* ``/sessions/{id}`` (``?stream=&from=``) — ``/api/sessions/{id}`` and
  ``/api/sessions/{id}/records`` (``?stream=&from=&limit=``)
* ``/sessions/{id}/effects`` (``?from=``) — ``/api/sessions/{id}/effects``
* ``/sessions/{id}/approvals/{pending id}`` — ``/api/sessions/{id}/approvals/{pending id}``
* ``/machines``, ``/machines/{key}`` — ``/api/machines``, ``/api/machines/{key}``
* ``/search`` — ``/api/search``

``/sessions/{id}/export`` downloads an export (redacted; raw only under ``--raw``) and
``/sessions/{id}/live`` is what a running session's page polls for new records.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from smllm import VERSION
from smllm.audit import export as exporter
from smllm.base.errors import InvalidSessionId, SessionNotFound, SmllmError
from smllm.serve import diagram, machineview
from smllm.serve.access import Access
from smllm.serve.sessionscan import SessionScan
from smllm.serve.source import (
    TERMINATIONS,
    FilterError,
    History,
    IndexSource,
    SearchFilter,
    SessionFilter,
    Source,
)
from smllm.serve.views import (
    LANE_COLOURS,
    LANES,
    Fold,
    Redactor,
    Row,
    chain_summary,
    chain_view,
    clip,
    effect_status,
    effect_view,
    moment,
    one_line,
    path,
    timeline,
    visible,
    wrapping,
)

PAGE_LINES = 200
PAGE_SESSIONS = 100
PAGE_EFFECTS = 200
PAGE_HITS = 200
#: seconds a page waits for a long log to be read before it shows what is known so far
SCAN_BUDGET = 0.15
#: seconds of reading a long log per poll of its page (the page is already shown)
LIVE_BUDGET = 0.6
#: lines a running session's page receives per poll
LIVE_LINES = 200
HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Settings:
    """How the viewer was started."""

    token: str
    port: int
    raw: bool = False
    hosts: frozenset[str] | None = None


def _seconds(value: float | None) -> str:
    return "" if value is None else f"+{value:.1f}s"


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("smllm.serve", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["visible"] = visible
    env.filters["path"] = path
    env.filters["moment"] = moment
    env.filters["wrapping"] = wrapping
    env.filters["seconds"] = _seconds
    env.filters["clip"] = clip
    env.filters["one_line"] = one_line
    env.globals["lanes"] = LANES
    env.globals["lane_colours"] = LANE_COLOURS
    env.globals["version"] = VERSION
    env.tests["fold"] = lambda item: isinstance(item, Fold)
    return env


def _blocks(parts: Iterator[str], size: int = 1 << 16) -> Iterator[str]:
    """Jinja yields many small strings: send them in blocks of about ``size``."""
    buffer: list[str] = []
    held = 0
    for part in parts:
        buffer.append(part)
        held += len(part)
        if held >= size:
            yield "".join(buffer)
            buffer, held = [], 0
    if buffer:
        yield "".join(buffer)


def _json_url(request: Request, status: int) -> str | None:
    """The JSON twin of a page (its query without the token), or None."""
    path = request.url.path
    if status != 200 or path.startswith(("/api/", "/static/")) or path.endswith(
            ("/live", "/export")):
        return None
    query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
    target = "/api/sessions" if path == "/" else "/api" + path
    return target + (f"?{query}" if query else "")


def _int(request: Request, name: str, default: int, least: int = 0) -> int:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise FilterError(f"{name} {value!r} is not a number", f"give {name}=N") from None
    return max(number, least)


class Viewer:
    """The routes, bound to one source and one redaction setting."""

    def __init__(self, source: Source, settings: Settings) -> None:
        self.source = source
        self.settings = settings
        self.redactor = Redactor(settings.raw)
        self.env = _environment()
        for name in self.env.list_templates():  # compiled once, before the first request
            self.env.get_template(name)

    # ------------------------------------------------------------------ helpers

    def page(self, name: str, request: Request, status: int = 200, *, streamed: bool = False,
             **context: Any) -> Response:
        """A rendered template; ``streamed`` sends it as it renders (long timelines)."""
        template = self.env.get_template(name)
        context.update(raw=self.settings.raw, source=self.source.name,
                       path=request.url.path, json_url=_json_url(request, status))
        media = "text/html; charset=utf-8"
        if streamed:
            return StreamingResponse(_blocks(template.generate(**context)),
                                     status_code=status, media_type=media)
        return HTMLResponse(template.render(**context), status_code=status, media_type=media)

    def data(self, payload: dict[str, Any], status: int = 200) -> Response:
        payload = {"redaction": "raw" if self.settings.raw else "redacted",
                   "source": self.source.name, **payload}
        return JSONResponse(payload, status_code=status)

    # ------------------------------------------------------------------ sessions

    def sessions(self, request: Request) -> dict[str, Any]:
        flt = SessionFilter.parse(dict(request.query_params))
        offset = _int(request, "offset", 0)
        limit = min(_int(request, "limit", PAGE_SESSIONS, 1), 1000)
        page = self.source.sessions(flt, offset, limit)
        history = self.source.histories(flt) if page.rows else {}
        rows = []
        for r in page.rows:
            row = r.as_json()
            row["crashes"], row["resumes"] = history.get((r.session_id, r.host), History())
            row["folder"] = self.redactor.text(r.folder) if r.folder else None
            row["first_prompt"] = (one_line(self.redactor.text(r.first_prompt), 200)
                                   if r.first_prompt else None)
            rows.append(row)
        return {"filters": flt.as_dict(), "total": page.total, "offset": page.offset,
                "limit": page.limit, "sessions": rows, "columns": list(self.source.columns),
                "terminations": list(TERMINATIONS)}

    def sessions_page(self, request: Request) -> Response:
        return self.page("sessions.html", request, **self.sessions(request))

    def sessions_json(self, request: Request) -> Response:
        return self.data(self.sessions(request))

    # ------------------------------------------------------------------ one session

    def session_data(self, request: Request, *, rows: bool, budget: float | None = None,
                     scan: SessionScan | None = None) -> dict[str, Any]:
        """A session's summary, effects, chains and diagnostics (and a timeline page).

        With a ``budget`` a long log may be read only in part: ``scanning`` then says how
        far, and the page's script asks ``/live`` for the rest.
        """
        sid = request.path_params["sid"]
        first = _int(request, "from", 1, 1)
        if scan is None:
            scan = self.source.session(sid, budget=budget, until_lines=first + PAGE_LINES)
        main = scan.main
        facts = main.tally
        stream_name = request.query_params.get("stream") or "main"
        stream = scan.stream(stream_name)
        if stream is None:
            raise SessionNotFound(f"session {sid} has no stream {stream_name!r}",
                                  "pick a stream listed on the session page")
        running = main.running
        effects = scan.effects()
        counts: dict[str, int] = {}
        for e in effects:
            status = effect_status(e, running)
            counts[status] = counts.get(status, 0) + 1
        attention = [e for e in effects if e.reconciled_line is not None
                     or e.observed_via == "reconcile"
                     or (e.started is not None and e.terminal_line is None and not running)]
        data: dict[str, Any] = {
            "session_id": sid,
            "journal": str(main.path),
            "scanning": None if scan.complete else round(100 * scan.progress()),
            "summary": {
                "session_id": facts.session_id or sid, "project": self._text(facts.cwd),
                "model": facts.model, "harness": facts.harness,
                "started_at": facts.first_recorded_at,
                "last_at": facts.last_recorded_at,
                "records": sum(s.tally.records for s in scan.streams),
                "lines": sum(s.lines for s in scan.streams),
                "turns": facts.turn_count,
                "model_calls": sum(s.model_calls for s in scan.streams),
                "termination": (facts.session_end or {}).get("exit_reason") or None,
                "running": running, "build": facts.build,
                "crashes": main.crashes, "resumes": main.resumes,
                "first_prompt": self._text(main.first_prompt),
            },
            "streams": [{"name": s.name, "lines": s.lines, "records": s.tally.records}
                        for s in scan.streams],
            "diagnostics": scan.diagnostics(),
            "effects_total": len(effects), "effect_outcomes": counts,
            "effects": [effect_view(e, running, self.redactor)
                        for e in effects[:PAGE_EFFECTS]],
            "attention": [effect_view(e, running, self.redactor)
                          for e in attention[:PAGE_EFFECTS]],
            "approvals": [chain_summary(c, self.redactor) for c in scan.chains()],
            "stream": stream.name, "from": first, "page_lines": PAGE_LINES,
            "stream_lines": stream.lines,
        }
        if rows:
            data["timeline"] = timeline(stream, first, PAGE_LINES, self.redactor)
        return data

    def _text(self, value: str | None) -> str | None:
        return self.redactor.text(value) if value else None

    def session_page(self, request: Request) -> Response:
        data = self.session_data(request, rows=True, budget=SCAN_BUDGET)
        first, lines = data["from"], data["stream_lines"]
        data["tail"] = first + PAGE_LINES > lines
        data["after"] = min(lines, first + PAGE_LINES - 1)
        data["self_ctx"] = data
        return self.page("session.html", request, streamed=True, **data)

    def session_json(self, request: Request) -> Response:
        return self.data(self.session_data(request, rows=False))

    def records_json(self, request: Request) -> Response:
        """A stream's records from ``from`` (``limit`` of them), as a streamed JSON array."""
        sid = request.path_params["sid"]
        scan = self.source.session(sid)
        stream = scan.stream(request.query_params.get("stream") or "main")
        if stream is None:
            raise SessionNotFound(f"session {sid} has no such stream",
                                  "use a stream listed by /api/sessions/{id}")
        first = _int(request, "from", 1, 1)
        limit = min(_int(request, "limit", 1000, 1), 100_000)
        head = json.dumps({"session_id": sid, "stream": stream.name, "from": first,
                           "lines": stream.lines,
                           "redaction": "raw" if self.settings.raw else "redacted"})

        def body() -> Iterator[str]:
            yield head[:-1] + ',"records":['
            sep = ""
            for item in timeline(stream, first, limit, self.redactor, fold=False):
                assert isinstance(item, Row)
                detail = json.loads(item.detail) if item.kind != "unparseable" else None
                entry = {**item.as_dict(), "record": detail}
                if detail is None:
                    entry["raw"] = item.detail
                yield sep + json.dumps(entry, ensure_ascii=False)
                sep = ","
            yield "]}\n"

        return StreamingResponse(body(), media_type="application/json")

    def live(self, request: Request) -> Response:
        """New lines after ``after``, rendered, with the refreshed summary and effects."""
        scan = self.source.session(request.path_params["sid"], budget=LIVE_BUDGET)
        data = self.session_data(request, rows=False, scan=scan)
        stream = scan.stream(data["stream"])
        assert stream is not None
        after = _int(request, "after", 0)
        tail = request.query_params.get("tail") == "1"
        items = timeline(stream, after + 1, LIVE_LINES, self.redactor) if tail else []
        rows = getattr(self.env.get_template("_timeline.html").module, "rows")(items)  # noqa: B009
        parts = self.env.get_template("_session_parts.html").module
        ctx = {**data, "raw": self.settings.raw}
        return self.data({
            "after": min(stream.lines, after + LIVE_LINES) if tail else after,
            "lines": stream.lines,
            "live": data["summary"]["running"], "scanning": data["scanning"],
            "rows": str(rows),
            "summary": str(getattr(parts, "summary")(ctx)),  # noqa: B009 - template macros
            "effects": str(getattr(parts, "effects")(ctx)),  # noqa: B009
        })

    def effects_data(self, request: Request) -> dict[str, Any]:
        sid = request.path_params["sid"]
        scan = self.source.session(sid)
        first = _int(request, "from", 0)
        effects = scan.effects()
        return {"session_id": sid, "from": first, "total": len(effects), "limit": PAGE_EFFECTS,
                "effects": [effect_view(e, scan.main.running, self.redactor)
                            for e in effects[first: first + PAGE_EFFECTS]]}

    def effects_page(self, request: Request) -> Response:
        return self.page("effects.html", request, **self.effects_data(request))

    def effects_json(self, request: Request) -> Response:
        return self.data(self.effects_data(request))

    def chain_data(self, request: Request) -> dict[str, Any]:
        sid, pid = request.path_params["sid"], request.path_params["pid"]
        scan = self.source.session(sid)
        chain = scan.chain(pid)
        if chain is None:
            known = ", ".join(c.pending_action_id for c in scan.chains()) or "none"
            raise SessionNotFound(f"no approval chain {pid!r} in session {sid}",
                                  f"pending_action_ids in this session: {known}")
        return {"session_id": sid, **chain_view(scan, chain, self.redactor)}

    def chain_page(self, request: Request) -> Response:
        return self.page("chain.html", request, **self.chain_data(request))

    def chain_json(self, request: Request) -> Response:
        return self.data(self.chain_data(request))

    def export(self, request: Request) -> Response:
        """The session as ``smllm export`` writes it (redacted unless ``--raw``)."""
        sid = request.path_params["sid"]
        scan = self.source.session(sid)
        redaction = request.query_params.get("redaction") or "redacted"
        if redaction not in ("raw", "redacted"):
            raise FilterError(f"redaction {redaction!r} is not raw or redacted",
                              "use redaction=redacted")
        if redaction == "raw" and not self.settings.raw:
            raise HTTPException(403, "a raw export holds the session's secrets: this viewer "
                                     "shows redacted values only (start `smllm serve --raw` "
                                     "to download raw exports)")
        streams = exporter.streams(scan.main.path)
        head = exporter.header(streams, redaction)  # type: ignore[arg-type]
        name = exporter.default_name(head).replace(".json", f"-{redaction}.json")
        spool = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - streamed
        exporter.write_document(spool, streams, head)
        spool.seek(0)

        def chunks() -> Iterator[str]:
            try:
                while block := spool.read(1 << 16):
                    yield block
            finally:
                spool.close()

        return StreamingResponse(chunks(), media_type="application/json", headers={
            "content-disposition": f'attachment; filename="{name}"'})

    # ------------------------------------------------------------------ machines

    def machines_data(self) -> dict[str, Any]:
        rows = []
        for key in machineview.session_keys():
            try:
                rows.append(machineview.summary(machineview.load(key)))
            except SmllmError as exc:
                rows.append({"key": key, "error": str(exc)})
        rows.sort(key=lambda r: r.get("last_active") or "", reverse=True)
        return {"sessions": [self.redactor.value(r) for r in rows]}

    def machines_page(self, request: Request) -> Response:
        return self.page("machines.html", request, **self.machines_data())

    def machines_json(self, request: Request) -> Response:
        return self.data(self.machines_data())

    def machine_data(self, request: Request, *, drawings: bool) -> dict[str, Any]:
        session = machineview.load(request.path_params["key"])
        used = {i["machine"] for i in session.state["instances"].values()}
        machines = []
        for mid, machine in session.machines.items():
            current = session.current(mid)
            entry: dict[str, Any] = {"id": mid, "description": machine.get("description"),
                                     "file": machine.get("file"), "used": mid in used,
                                     "current": current}
            if drawings:
                entry["svg"] = diagram.svg(machine, current)
            machines.append(entry)
        machines.sort(key=lambda m: not m["used"])
        instances = [{"id": i["id"], "machine": i["machine"], "state": i["state"],
                      "ref": i.get("ref"), "status": i["status"],
                      "focus": i["id"] == session.state.get("focus")}
                     for i in session.state["instances"].values()]
        return {"summary": self.redactor.value(machineview.summary(session)),
                "instances": instances, "machines": machines,
                "audit": [self.redactor.value(machineview.audit_row(r))
                          for r in session.audit]}

    def machine_page(self, request: Request) -> Response:
        return self.page("machine.html", request, **self.machine_data(request, drawings=True))

    def machine_json(self, request: Request) -> Response:
        return self.data(self.machine_data(request, drawings=False))

    # ------------------------------------------------------------------ search

    def search_data(self, request: Request) -> dict[str, Any]:
        flt = SearchFilter.parse(dict(request.query_params))
        offset = _int(request, "offset", 0)
        if not flt.active():
            return {"filters": flt.as_dict(), "total": 0, "offset": 0, "limit": PAGE_HITS,
                    "hits": [], "searched": False}
        page = self.source.search(flt, offset, PAGE_HITS, self.redactor)
        hits = []
        for hit in page.rows:
            row = hit.as_json()
            row["text"] = one_line(self.redactor.text(hit.text), 300) if hit.text else None
            row["folder"] = self.redactor.text(hit.folder) if hit.folder else None
            hits.append(row)
        return {"filters": flt.as_dict(), "total": page.total, "offset": offset,
                "limit": PAGE_HITS, "hits": hits, "searched": True, "page_lines": PAGE_LINES}

    def search_page(self, request: Request) -> Response:
        return self.page("search.html", request, **self.search_data(request))

    def search_json(self, request: Request) -> Response:
        return self.data(self.search_data(request))

    # ------------------------------------------------------------------ errors

    def failure(self, request: Request, status: int, what: str, fix: str | None) -> Response:
        if request.url.path.startswith("/api/") or request.url.path.endswith("/live"):
            return self.data({"error": what, "fix": fix}, status)
        return self.page("error.html", request, status=status, status_code=status,
                         what=what, fix=fix)


def create_app(settings: Settings, source: Source | None = None) -> Access:
    """The ASGI application, behind :class:`~smllm.serve.access.Access`."""
    viewer = Viewer(source or IndexSource(), settings)
    v = viewer
    routes = [
        Route("/", v.sessions_page), Route("/sessions", v.sessions_page),
        Route("/api/sessions", v.sessions_json),
        Route("/sessions/{sid}", v.session_page), Route("/api/sessions/{sid}", v.session_json),
        Route("/api/sessions/{sid}/records", v.records_json),
        Route("/sessions/{sid}/live", v.live),
        Route("/sessions/{sid}/effects", v.effects_page),
        Route("/api/sessions/{sid}/effects", v.effects_json),
        Route("/sessions/{sid}/approvals/{pid}", v.chain_page),
        Route("/api/sessions/{sid}/approvals/{pid}", v.chain_json),
        Route("/sessions/{sid}/export", v.export),
        Route("/machines", v.machines_page), Route("/api/machines", v.machines_json),
        Route("/machines/{key}", v.machine_page), Route("/api/machines/{key}", v.machine_json),
        Route("/search", v.search_page), Route("/api/search", v.search_json),
        Mount("/static", app=StaticFiles(directory=os.path.join(HERE, "static")),
              name="static"),
    ]

    async def smllm_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SmllmError)
        status = 404 if isinstance(exc, (SessionNotFound, InvalidSessionId)) else 400
        return viewer.failure(request, status, exc.what, exc.fix)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        what = {404: "no such page", 405: "the viewer is read-only"}.get(exc.status_code,
                                                                        str(exc.detail))
        return viewer.failure(request, exc.status_code, what, None)

    app = Starlette(routes=routes, exception_handlers={SmllmError: smllm_error,
                                                        HTTPException: http_error})
    return Access(app, settings.token, settings.port, settings.hosts)
