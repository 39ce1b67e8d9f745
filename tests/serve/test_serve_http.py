"""`smllm serve` over HTTP: the token, read-only methods, headers, redaction, JSON twins."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from serve_world import (
    APPROVED,
    GEMINI,
    HOSTILE,
    LONG,
    LONG_RECORDS,
    RESUMED,
    RUNNING,
    SECRET,
    SECRETS,
    Viewer,
    World,
)

from smllm.serve.access import CSP
from smllm.serve.source import StoreSource


def get(viewer: Viewer, path: str, *, token: bool = True, method: str = "GET",
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one request, the token in an Authorization header."""
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"token {viewer.token}"
    req = urllib.request.Request(viewer.base + path, method=method, headers=hdrs,
                                 data=b"x=1" if method in ("POST", "PUT", "PATCH") else None)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value and value.startswith("/"):
                self.links.append(value.split("#")[0])


def crawl(viewer: Viewer, starts: list[str], limit: int = 400) -> dict[str, bytes]:
    """Every page and JSON document reachable from ``starts`` (same viewer)."""
    seen: dict[str, bytes] = {}
    todo = list(starts)
    while todo and len(seen) < limit:
        path = todo.pop()
        if path in seen:
            continue
        status, headers, body = get(viewer, path)
        assert 200 == status, (path, body[:300])
        seen[path] = body
        if headers.get("content-type", "").startswith("text/html"):
            parser = Links()
            parser.feed(body.decode())
            todo += [p for p in parser.links if p not in seen]
    return seen


def routes(world: World) -> list[str]:
    """One URL of every route the viewer has."""
    key = world.machine_key
    return [
        "/", "/sessions", "/api/sessions", f"/sessions/{APPROVED}", f"/api/sessions/{APPROVED}",
        f"/api/sessions/{APPROVED}/records", f"/sessions/{APPROVED}/live",
        f"/sessions/{APPROVED}/effects", f"/api/sessions/{APPROVED}/effects",
        f"/sessions/{APPROVED}/approvals/{pending_id(world)}",
        f"/api/sessions/{APPROVED}/approvals/{pending_id(world)}",
        f"/sessions/{APPROVED}/export", "/machines", "/api/machines", f"/machines/{key}",
        f"/api/machines/{key}", "/search?kind=side_effect_intent",
        "/api/search?kind=side_effect_intent", "/static/app.css", "/static/app.js",
    ]


def pending_id(world: World) -> str:
    from smllm import journal

    log = world.home / "sessions" / "by-id" / APPROVED
    folder = world.home / "sessions" / log.read_text().strip() / APPROVED
    for rec in journal.iter_records(folder / "session.jsonl"):
        if rec.get("payload_type") == "approval.review":
            return str(rec["payload"]["record"]["pending_action_id"])
    raise AssertionError("no approval.review in the approved session")


# --------------------------------------------------------------------- acceptance 3


def test_every_route_answers_with_the_token(viewer: Viewer, world: World) -> None:
    """With the token, every route answers 200 (the list the other tests walk is complete)."""
    statuses = {path: get(viewer, path)[0] for path in routes(world)}
    assert {path: 200 for path in routes(world)} == statuses


def test_the_route_list_names_every_route_of_the_app(world: World) -> None:
    """routes() holds a URL of every route the application has, so the token, method and
    CSP tests that walk it cover every page, JSON document and asset."""
    from smllm.serve.app import Settings, create_app

    app = create_app(Settings(token="t", port=1)).app
    urls = [url.split("?")[0] for url in routes(world)]
    every = sorted(r.path for r in app.routes)
    assert every == sorted(r.path for r in app.routes
                           if any(r.path_regex.match(u) for u in urls))


def test_every_route_refuses_without_the_token(viewer: Viewer, world: World) -> None:
    """Without the token (or with a wrong one) every page, JSON document and asset is 403."""
    bare = {path: get(viewer, path, token=False)[0] for path in routes(world)}
    wrong = {path: get(viewer, path, token=False,
                       headers={"Authorization": "token nope"})[0] for path in routes(world)}
    assert ({p: 403 for p in routes(world)}, {p: 403 for p in routes(world)}) == (bare, wrong)


def test_refusal_says_what_to_do(viewer: Viewer) -> None:
    """The refusal is plain text naming the fix, and carries the security headers too."""
    status, headers, body = get(viewer, "/sessions", token=False)
    expected = (403, "smllm serve: this address needs the token that `smllm serve` printed: "
                     "open the whole URL it printed (http://HOST:PORT/?token=...)\n", CSP)
    assert expected == (status, body.decode(), headers["content-security-policy"])


def test_token_in_the_url_sets_a_cookie_that_then_suffices(viewer: Viewer) -> None:
    """The printed URL's token sets an HttpOnly, SameSite=Strict cookie; the cookie alone
    then opens the pages, as a browser following links sends it."""
    status, headers, _ = get(viewer, f"/?token={viewer.token}", token=False)
    cookie = headers["set-cookie"]
    name_value = cookie.split(";")[0]
    later = get(viewer, "/machines", token=False, headers={"Cookie": name_value})[0]
    assert (200, True, True, 200) == (status, "HttpOnly" in cookie,
                                      "SameSite=Strict" in cookie, later)


def test_foreign_host_header_is_refused(viewer: Viewer) -> None:
    """A request naming another host (DNS rebinding) is refused even with the token."""
    status, _, body = get(viewer, "/sessions", headers={"Host": "evil.example:80"})
    expected = (400, "smllm serve: the Host header names another site; open the URL that "
                     "`smllm serve` printed\n")
    assert expected == (status, body.decode())


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_no_route_accepts_a_method_that_changes_state(viewer: Viewer, world: World,
                                                      method: str) -> None:
    """Every route refuses every method but GET and HEAD, token or not."""
    got = {path: get(viewer, path, method=method)[0] for path in routes(world)}
    anonymous = {path: get(viewer, path, method=method, token=False)[0]
                 for path in routes(world)}
    assert ({p: 405 for p in routes(world)}, {p: 403 for p in routes(world)}) == (got,
                                                                                  anonymous)


def test_head_is_answered(viewer: Viewer) -> None:
    """HEAD reads like GET, without a body."""
    status, headers, body = get(viewer, "/sessions", method="HEAD")
    assert (200, b"", CSP) == (status, body, headers["content-security-policy"])


def test_non_loopback_bind_is_refused(world: World) -> None:
    """--host 0.0.0.0 without --allow-remote stops before listening, with the reason."""
    proc = subprocess.run([sys.executable, "-m", "smllm", "serve", "--host", "0.0.0.0"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "SMLLM_HOME": str(world.home)})
    expected = (2, "smllm: error: refusing to listen on 0.0.0.0: it is not a loopback "
                   "address, so other machines could reach the journals (drop --host to "
                   "listen on 127.0.0.1, or add --allow-remote if you mean it)\n", "")
    assert expected == (proc.returncode, proc.stderr, proc.stdout)


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("::", False), ("192.168.1.4", False),
    ("example.com", False),
])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    """Only loopback addresses (and the name localhost) count as local."""
    from smllm.commands.serve import is_loopback

    assert loopback == is_loopback(host)


def test_port_in_use_is_reported(world: World) -> None:
    """A busy port gets one error line naming the fix."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "smllm", "serve", "--port", str(port)],
                              capture_output=True, text=True, timeout=60, check=False,
                              env={**os.environ, "SMLLM_HOME": str(world.home)})
    expected = (1, f"smllm: error: port {port} on 127.0.0.1 is already in use (pick another "
                   "with --port N, or --port 0 for any free port)\n")
    assert expected == (proc.returncode, proc.stderr)


def test_missing_extra_says_how_to_install(world: World) -> None:
    """Without starlette, `smllm serve` says which extra to install, in one line."""
    code = ("import sys; sys.modules['starlette'] = None; from smllm.cli import main; "
            "sys.exit(main(['serve']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "SMLLM_HOME": str(world.home)})
    expected = (1, "smllm: error: smllm serve needs starlette, which is not installed (nor "
                   "are all of starlette, uvicorn and jinja2) (install the viewer's extra: "
                   "pip install 'smllm[serve]')\n")
    assert expected == (proc.returncode, proc.stderr)


def test_open_hands_the_printed_url_to_the_browser(world: World, tmp_path: Path) -> None:
    """--open gives the browser ($BROWSER) the same URL, token included, that it prints."""
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {seen}\n")
    browser.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "smllm", "serve", "--port", "0", "--open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "SMLLM_HOME": str(world.home),
                                 "BROWSER": str(browser)})
    viewer = Viewer(proc, "", "", "")
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[2]
        for _ in range(200):
            if seen.exists() and seen.read_text():
                break
            subprocess.run(["sleep", "0.05"], check=True)
        assert url == seen.read_text()
    finally:
        viewer.stop()


# --------------------------------------------------------------------- headers, escaping


def test_every_response_carries_the_csp(viewer: Viewer, world: World) -> None:
    """Pages, JSON, assets, errors: all carry the strict CSP and no-referrer."""
    paths = [*routes(world), "/sessions/no-such-session", "/nope"]
    got = {p: (get(viewer, p)[1].get("content-security-policy"),
               get(viewer, p)[1].get("referrer-policy")) for p in paths}
    assert {p: (CSP, "no-referrer") for p in paths} == got


def test_csp_allows_nothing_inline_or_foreign() -> None:
    """The policy: only the viewer's own scripts, styles and images; no inline, no eval."""
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    expected = {"default-src": "'none'", "script-src": "'self'", "style-src": "'self'",
                "img-src": "'self'", "connect-src": "'self'", "form-action": "'self'",
                "base-uri": "'none'", "frame-ancestors": "'none'"}
    assert expected == directives


class Inline(HTMLParser):
    """Collects what would run or style inline: scripts, style attributes, handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script" and names.get("src") != "/static/app.js":
            self.found.append("script")
        if tag == "style":
            self.found.append("style element")
        self.found += [name for name, value in attrs if name == "style" or name.startswith("on")
                       or (value or "").strip().lower().startswith("javascript:")]


def test_pages_have_no_inline_script_or_style(viewer: Viewer, world: World) -> None:
    """No page has an inline script, a style attribute, an event handler or a javascript:
    URL, the hostile session's included (its corpus is text, not markup)."""
    pages = {p: b for p, b in crawl(viewer, ["/sessions", "/machines"]).items()
             if not p.startswith(("/api/", "/static/")) and "/export" not in p}
    found = {}
    for path, body in pages.items():
        parser = Inline()
        parser.feed(body.decode())
        if parser.found:
            found[path] = parser.found
    assert ({}, True) == (found, f"/sessions/{HOSTILE}" in pages and len(pages) > 8)


def test_hostile_values_are_escaped_in_the_html(viewer: Viewer) -> None:
    """The XSS corpus appears only as escaped text in the session page's HTML."""
    body = get(viewer, f"/sessions/{HOSTILE}")[1:][1].decode()
    expected = (False, False, False, True, True)
    assert expected == ("<script>window" in body, "onerror=\"" in body, "\x1b" in body,
                        "&lt;script&gt;window.__xss" in body, "\\x1b[31mred" in body)


# --------------------------------------------------------------------- acceptance 4


def test_planted_secrets_appear_nowhere(viewer: Viewer, world: World) -> None:
    """No page, JSON document or download of the viewer shows a planted secret."""
    starts = ["/sessions", "/machines", f"/sessions/{SECRET}/export", "/api/sessions",
              f"/api/sessions/{SECRET}", f"/api/sessions/{SECRET}/records",
              f"/api/search?session={SECRET}&kind=side_effect_intent",
              f"/search?session={SECRET}&kind=side_effect_intent",
              f"/sessions/{SECRET}/live?after=0&tail=1"]
    pages = crawl(viewer, starts)
    leaks = {(p, s) for p, b in pages.items() for s in SECRETS if s.encode() in b}
    secret_pages = [p for p in pages if SECRET in p]
    assert (set(), True) == (leaks, len(secret_pages) >= 6)


def test_raw_export_is_refused_unless_raw(viewer: Viewer, raw_viewer: Viewer) -> None:
    """The raw export holds the secrets: 403 by default, served under --raw."""
    refused = get(viewer, f"/sessions/{SECRET}/export?redaction=raw")[0]
    status, _, body = get(raw_viewer, f"/sessions/{SECRET}/export?redaction=raw")
    doc = json.loads(body)
    assert (403, 200, "raw", True) == (refused, status, doc["redaction"],
                                       SECRETS[0].encode() in body)


def test_raw_viewer_shows_secrets_and_says_so_on_every_page(raw_viewer: Viewer) -> None:
    """Under --raw the secrets are shown, and every page carries the RAW banner."""
    pages = crawl(raw_viewer, ["/sessions", "/machines", f"/search?session={SECRET}&text=key"])
    html = {p: b for p, b in pages.items()
            if not p.startswith(("/api/", "/static/")) and "/export" not in p}
    unmarked = {p for p, b in html.items() if b'id="redaction">RAW: ' not in b}
    shown = all(s.encode() in html[f"/sessions/{SECRET}"] for s in SECRETS[:3])
    assert (set(), True) == (unmarked, shown)


def test_redacted_viewer_says_so_on_every_page(viewer: Viewer) -> None:
    """By default every page says values are redacted, and JSON says redaction: redacted."""
    pages = crawl(viewer, ["/sessions", "/machines"])
    html = [b for p, b in pages.items() if not p.startswith(("/api/", "/static/"))
            and "/export" not in p]
    docs = [json.loads(b) for p, b in pages.items() if p.startswith("/api/")]
    assert (True, True) == (all(b'id="redaction">Redacted: ' in b for b in html),
                            all(d["redaction"] == "redacted" for d in docs))


def test_search_cannot_probe_for_a_secret(viewer: Viewer) -> None:
    """A text search matches redacted values only: guessing a secret finds nothing."""
    probe = json.loads(get(viewer, f"/api/search?text={SECRETS[0][:30]}")[2])
    around = json.loads(get(viewer, "/api/search?text=curl%20-H&kind=side_effect_intent")[2])
    assert (0, ["curl -H 'Authorization: [REDACTED:authorization]' https://api.example"]) == (
        probe["total"], [h["text"] for h in around["hits"]])


# --------------------------------------------------------------------- JSON twins, data


def test_each_page_links_its_json_twin(viewer: Viewer, world: World) -> None:
    """Every page's footer links the same data as JSON, and that link answers JSON."""
    pages = ["/sessions", f"/sessions/{APPROVED}", f"/sessions/{APPROVED}/effects",
             f"/sessions/{APPROVED}/approvals/{pending_id(world)}", "/machines",
             f"/machines/{world.machine_key}", "/search?kind=proposed"]
    twins = {}
    for page in pages:
        body = get(viewer, page)[2].decode()
        href = re.search(r'href="([^"]+)" class="json-link"', body)
        assert href is not None, page
        status, headers, _ = get(viewer, href.group(1).replace("&amp;", "&"))
        twins[page] = (status, headers["content-type"])
    assert {p: (200, "application/json") for p in pages} == twins


def test_sessions_json_lists_every_session(viewer: Viewer) -> None:
    """The sessions list: every journaled session, with its termination."""
    doc = json.loads(get(viewer, "/api/sessions")[2])
    got = {s["session_id"]: s["termination"] for s in doc["sessions"]}
    assert {APPROVED: "clean", HOSTILE: "clean", SECRET: "clean", RUNNING: "open"} == {
        k: got[k] for k in (APPROVED, HOSTILE, SECRET, RUNNING)}


def test_sessions_name_the_harness_of_another_host(viewer: Viewer) -> None:
    """A session another agent CLI drove names its harness in the list and its JSON (read
    from its session.start); Claude Code's sessions name none."""
    doc = json.loads(get(viewer, "/api/sessions")[2])
    got = {s["session_id"]: s.get("harness") for s in doc["sessions"]}
    assert ("gemini", None) == (got[GEMINI], got[APPROVED])
    page = get(viewer, "/sessions")[2].decode()
    assert f'{GEMINI}</a> <span class="harness">(gemini)</span>' in page


@pytest.mark.parametrize(("query", "expected"), [
    ("termination=open", {RUNNING, "5e7a0c11-aaaa-4bbb-8ccc-0000000000ff"}),
    ("project={project}&termination=clean", {APPROVED, HOSTILE, SECRET}),
    ("project=/work/long", {LONG}),
    ("project=/elsewhere", set()),
    ("since=2999-01-01", set()),
    ("until=1999-01-01", set()),
])
def test_session_filters(viewer: Viewer, world: World, query: str,
                         expected: set[str]) -> None:
    """Filters by project (the folder and below), termination and time narrow the list."""
    query = query.replace("{project}", str(world.project))
    doc = json.loads(get(viewer, f"/api/sessions?{query}")[2])
    assert expected == {s["session_id"] for s in doc["sessions"]}


@pytest.mark.parametrize(("url", "error", "fix"), [
    ("/api/sessions?since=yesterday", "since 'yesterday' is not a UTC date, time or age",
     "write 2026-08-02, 2026-08-02T10:15 or 7d"),
    ("/api/search?until=soon", "until 'soon' is not a UTC date, time or age",
     "write 2026-08-02, 2026-08-02T10:15 or 7d"),
    ("/api/sessions?termination=gone",
     "termination 'gone' is not one of clean, crash_inferred, subagent_stop, open",
     "pick one from the list"),
    ("/api/search?session=..", "session '..' is not a session id",
     "copy it from the sessions page"),
])
def test_bad_filter_is_a_400_with_the_fix(viewer: Viewer, url: str, error: str,
                                          fix: str) -> None:
    """A malformed filter value is refused with what to write instead."""
    status, _, body = get(viewer, url)
    expected = (400, {"error": error, "fix": fix})
    doc = json.loads(body)
    assert expected == (status, {"error": doc["error"], "fix": doc["fix"]})


def test_search_finds_the_judge_approved_rm_rf(viewer: Viewer) -> None:
    """search: intents authorized by the LLM judge -> the one rm -rf."""
    doc = json.loads(get(viewer, "/api/search?kind=side_effect_intent&authorizer=llm_judge")[2])
    got = [(h["session_id"], h["text"], h["authorization"], h["rule"]) for h in doc["hits"]]
    assert [(APPROVED, "rm -rf stale_cache.txt", "allow:llm_judge",
             "fs.delete-recursive-workspace")] == got


def test_unknown_session_is_a_404(viewer: Viewer) -> None:
    """An unknown or malformed session id is a 404 page naming the fix, never a traceback."""
    status, _, body = get(viewer, "/api/sessions/nope-nope")
    traversal = get(viewer, "/api/sessions/..%2F..%2Fetc")[0]
    assert ((404, {"error": "no session 'nope-nope' in this journal folder",
                   "fix": "pick one on the sessions page"}), True) == (
        (status, {k: v for k, v in json.loads(body).items() if k in ("error", "fix")}),
        traversal in (404, 400))


def test_export_download_is_the_export_document(viewer: Viewer, world: World) -> None:
    """The redacted download is `smllm export --redacted`, byte for byte."""
    status, headers, body = get(viewer, f"/sessions/{APPROVED}/export")
    out = world.home.parent / "cli-export.json"
    world.smllm("export", "--journal", APPROVED, "--redacted", "--out", str(out))
    assert (200, True, out.read_bytes()) == (
        status, headers["content-disposition"].startswith('attachment; filename="trajectory-'),
        body)


def test_docs_console_transcript(world: World) -> None:
    """docs/serve.md's console transcript runs as shown, byte for byte."""
    from helpers import REPO, console_transcript

    steps = console_transcript(REPO / "docs" / "serve.md")
    got = []
    for command, _ in steps:
        args = command.split()[1:]
        proc = subprocess.run([sys.executable, "-m", "smllm", *args], capture_output=True,
                              text=True, timeout=60, check=False,
                              env={**os.environ, "SMLLM_HOME": str(world.home)})
        got.append((command, (proc.stdout + proc.stderr).rstrip("\n")))
    assert (steps, 1) == (got, len(steps))


@pytest.mark.parametrize(("query", "expected"), [
    ("text=rm%20-rf&kind=side_effect_intent", [(APPROVED, "rm -rf stale_cache.txt")]),
    ("text=no-such-text-anywhere", []),
    ("tool=Bash&decision=allow&rule=fs.delete-recursive-workspace",
     [(APPROVED, "rm -rf stale_cache.txt")]),
])
def test_search_by_text_tool_decision_rule(viewer: Viewer, query: str,
                                           expected: list[tuple[str, str]]) -> None:
    """Text, tool, decision and rule-family filters find the records a person means."""
    doc = json.loads(get(viewer, f"/api/search?{query}")[2])
    assert expected == [(h["session_id"], h["text"]) for h in doc["hits"]]


def test_a_long_timeline_pages(viewer: Viewer) -> None:
    """200 lines a page: next and last links, the last page ends at the last line, and
    the records JSON serves any range."""
    first = get(viewer, f"/sessions/{LONG}")[2].decode()
    nxt = re.search(r'rel="next" href="([^"]+)"', first)
    assert nxt is not None
    second = get(viewer, f"/sessions/{LONG}" + nxt.group(1).replace("&amp;", "&"))[2].decode()
    last = get(viewer, f"/sessions/{LONG}?from=401")[2].decode()
    records = json.loads(get(viewer, f"/api/sessions/{LONG}/records?from=441&limit=20")[2])
    lines = [re.findall(r'data-line="(\d+)"', page) for page in (first, second, last)]
    expected = ([("1", "200"), ("201", "400"), ("401", str(LONG_RECORDS))], LONG_RECORDS,
                list(range(441, LONG_RECORDS + 1)))
    assert expected == ([(ls[0], ls[-1]) for ls in lines], records["lines"],
                        [r["sequence"] for r in records["records"]])


# --------------------------------------------------------------------- --store


def test_store_sessions_carry_the_team_columns(store_viewer: Viewer) -> None:
    """Over the team store: the shipped sessions, with who and where shipped them."""
    doc = json.loads(get(store_viewer, "/api/sessions")[2])
    got = {s["session_id"]: (s["host"], s["user"], s["termination"]) for s in doc["sessions"]}
    page = get(store_viewer, "/sessions")[2].decode()
    assert ("team store", ("host-w", "alice", "clean"), ("host-w", "alice", "open"), True) == (
        doc["source"], got[APPROVED], got[RUNNING], "<th>git remote</th>" in page)


def test_store_session_page_is_read_from_the_stored_rows(store_viewer: Viewer,
                                                          world: World) -> None:
    """A stored session: its effects, chain and export come from the rows in PostgreSQL."""
    doc = json.loads(get(store_viewer, f"/api/sessions/{APPROVED}")[2])
    rm = [e for e in doc["effects"] if e["what"] == "rm -rf stale_cache.txt"]
    chain = json.loads(get(store_viewer, f"/api/sessions/{APPROVED}/approvals/"
                                         f"{pending_id(world)}")[2])
    local = json.loads(get(store_viewer, f"/api/sessions/{APPROVED}/records?limit=1000")[2])
    assert ([("allow:llm_judge", "succeeded")], "llm_judge", local["lines"]) == (
        [(e["authorized_by"], e["outcome"]) for e in rm], chain["decision_source"]["kind"],
        doc["summary"]["records"])


def test_store_search_and_no_secret(store_viewer: Viewer) -> None:
    """Search runs in the store; no page over the store shows a planted secret."""
    hits = json.loads(get(store_viewer, "/api/search?kind=side_effect_intent"
                                        "&authorizer=llm_judge")[2])["hits"]
    pages = crawl(store_viewer, ["/sessions", f"/sessions/{SECRET}",
                                 f"/api/sessions/{SECRET}/records"])
    leaks = {(p, s) for p, b in pages.items() for s in SECRETS if s.encode() in b}
    assert ([(APPROVED, "rm -rf stale_cache.txt")], set()) == (
        [(h["session_id"], h["text"]) for h in hits], leaks)


def test_a_stored_stream_name_cannot_place_a_copy_outside_the_viewers_folder(
        store_viewer: Viewer, postgres: Any, tmp_path: Path) -> None:
    """The rows of a stored session are copied only below the viewer's private folder: a
    stream name that climbs out of it (any writer can store one) is not copied."""
    db = f"serve_world_{os.getpid()}"  # the store store_viewer shipped the world to
    rows = [("main", b'{"sequence":1}'), ("subagent/../../../escaped", b'{"sequence":1}'),
            ("subagent/agent-1", b'{"sequence":1}')]
    with postgres.connect(db) as conn:
        conn.execute("INSERT INTO smllm.sessions (host, session_id, os_user) "
                     "VALUES ('host-x', 'escape-1', 'mallory')")
        for stream, line in rows:
            conn.execute("INSERT INTO smllm.records (host, session_id, stream, sequence, hash, "
                         "line) VALUES ('host-x', 'escape-1', %s, 1, 'h', %s)",
                         (stream, line.decode()))
    source = StoreSource(postgres.url(db))
    private, source.folder = source.folder, str(tmp_path / "copies")
    try:
        source._fetch("escape-1", "host-x")
    finally:
        source.folder = private
        source.close()
        with postgres.connect(db) as conn:
            conn.execute("SET session_replication_role = replica")  # past the no-delete trigger
            conn.execute("DELETE FROM smllm.records WHERE session_id = 'escape-1'")
            conn.execute("DELETE FROM smllm.sessions WHERE session_id = 'escape-1'")
    assert ["copies/escape-1/session.jsonl",
            "copies/escape-1/subagent/agent-1/session.jsonl"] == sorted(
        str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())


# --------------------------------------------------------------------- crashed and resumed


def test_sessions_say_which_crashed_and_were_resumed(viewer: Viewer) -> None:
    """A session that crashed, was resumed and ended cleanly is clean with one crash and
    one resume; one that never crashed has neither; its page says the same."""
    doc = json.loads(get(viewer, "/api/sessions")[2])
    got = {s["session_id"]: (s["termination"], s["crashes"], s["resumes"])
           for s in doc["sessions"]}
    one = json.loads(get(viewer, f"/api/sessions/{RESUMED}")[2])["summary"]
    assert ({RESUMED: ("clean", 1, 1), APPROVED: ("clean", 0, 0), RUNNING: ("open", 0, 0)},
            ("clean", 1, 1)) == ({k: got[k] for k in (RESUMED, APPROVED, RUNNING)},
                                 (one["termination"], one["crashes"], one["resumes"]))


def test_store_sessions_say_which_crashed_and_were_resumed(store_viewer: Viewer) -> None:
    """Over the team store the same marks, from the stored records."""
    doc = json.loads(get(store_viewer, "/api/sessions")[2])
    got = {s["session_id"]: (s["termination"], s["crashes"], s["resumes"])
           for s in doc["sessions"]}
    assert {RESUMED: ("clean", 1, 1), APPROVED: ("clean", 0, 0)} == {
        k: got[k] for k in (RESUMED, APPROVED)}
