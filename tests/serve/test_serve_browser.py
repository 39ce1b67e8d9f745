"""`smllm serve` in a real headless Chromium (Debian's, driven by Playwright).

What a person sees: the DOM of each page, and a screenshot kept under tests/artifacts/serve/
(listed at the end of the run). Chromium starts once for the module.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from serve_world import (
    APPROVED,
    HOSTILE,
    LONG_COMMAND,
    RESUMED,
    RUNNING,
    SECRET,
    SECRETS,
    SHOTS,
    XSS,
    Viewer,
    World,
    write_session,
)

from smllm.serve.access import CSP

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium, headless, on a fresh empty profile (Playwright's own temp dir)."""
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


class Watched:
    """A page and what it did: console messages, dialogs, failed requests."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.console: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def tab(browser: Browser) -> Iterator[Watched]:
    """A fresh browser context (no cookie) and page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield Watched(context.new_page())
    finally:
        context.close()


def login(tab: Watched, viewer: Viewer) -> None:
    """Open the URL `smllm serve` printed, token and all, as a person would."""
    response = tab.page.goto(viewer.url)
    assert response is not None
    assert 200 == response.status


def shot(page: Page, artifacts: Path, name: str) -> Path:
    path = artifacts / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    SHOTS.append(path)
    return path


def texts(page: Page, selector: str) -> list[str]:
    return [t.strip() for t in page.locator(selector).all_inner_texts()]


# --------------------------------------------------------------------- acceptance 1


def test_sessions_page(tab: Watched, viewer: Viewer, artifacts: Path) -> None:
    """The printed URL opens the sessions page: every session, its project and termination."""
    login(tab, viewer)
    page = tab.page
    rows = {r.locator("td").nth(0).inner_text(): r.locator("td.termination").inner_text()
            for r in page.locator("#sessions tbody tr").all()}
    shot(page, artifacts, "sessions")
    expected = {APPROVED: "clean", HOSTILE: "clean", SECRET: "clean",
                RUNNING: "open (no end recorded)"}
    assert (expected, "Sessions · smllm serve") == ({k: rows[k] for k in expected},
                                                   page.title())


def test_session_with_a_judge_approved_rm_rf(tab: Watched, viewer: Viewer,
                                             artifacts: Path) -> None:
    """The session page: the rm -rf effect first, authorized by the judge, succeeded; its
    chain listed; the timeline coloured by lane like the ledger; model calls folded."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/sessions/{APPROVED}")
    rm = page.locator("#effects tr.effect", has_text="rm -rf stale_cache.txt")
    effect = [rm.locator(c).inner_text().strip() for c in ("td.what", "td.outcome")]
    auth = rm.locator("td.auth").inner_text()
    chain = texts(page, "#approvals tbody tr td")
    intent = page.locator("li.rec[data-kind='side_effect_intent']").first
    review = page.locator("li.rec[data-kind='approval.review']").first
    colours = [el.evaluate("e => getComputedStyle(e).borderLeftColor") for el in (intent, review)]
    fold = page.locator("li.fold").first
    folded = (fold.get_attribute("data-count"), fold.locator("li.rec").count())
    order = page.evaluate("""() => [...document.querySelectorAll('main section')]
                             .map(s => s.id)""")
    shot(page, artifacts, "session-approved")
    expected = (["rm -rf stale_cache.txt", "succeeded via hook"], True,
                ["bash: rm -rf stale_cache.txt", "fs.delete-recursive-workspace", "approved",
                 "llm_judge"], ["rgb(31, 157, 85)", "rgb(224, 161, 0)"], ("3", 3),
                ["summary", "effects-section", "approvals", "timeline-section"], "ended")
    assert expected == (effect, auth.startswith("allow:llm_judge"), chain[1:], colours, folded,
                        order, page.locator("#status").inner_text())


def test_approval_chain_page(tab: Watched, viewer: Viewer, world: World,
                             artifacts: Path) -> None:
    """The chain: request → review → decision → intent → start → result, with the judge's
    prompt version and the digest of exactly what the judge was sent."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/sessions/{APPROVED}")
    page.locator("#approvals a").first.click()
    page.wait_for_selector("#chain")
    steps = [li.get_attribute("data-step") for li in page.locator("#chain > li").all()]
    digest = "sha256:" + hashlib.sha256(world.judge_bodies[0]).hexdigest()
    shot(page, artifacts, "approval-chain")
    expected = (["requested", "wait", "resolved", "decision", "discharged", "intent",
                 "started", "result"], "bash: rm -rf stale_cache.txt",
                "approved by llm_judge", "2", digest)
    assert expected == (steps, page.locator("#chain-action").inner_text(),
                        page.locator("#chain-decision").inner_text(),
                        page.locator("#prompt-version").inner_text(),
                        page.locator("#context-digest").inner_text())


def test_machine_mid_way(tab: Watched, viewer: Viewer, world: World, artifacts: Path) -> None:
    """A machine stopped in FIX: the diagram highlights FIX (and only FIX) with the
    instance under it; the audit lists the calls that brought it there."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/machines")
    page.locator("#machine-sessions a", has_text=world.machine_key).click()
    page.wait_for_selector("svg.machine")
    current = [g.get_attribute("data-state") for g in page.locator("g.state.current").all()]
    states = [g.get_attribute("data-state") for g in page.locator("g.state").all()]
    label = page.locator("g.state.current text.instance").text_content() or ""
    fill = page.locator("g.state.current rect").first.evaluate(
        "e => getComputedStyle(e).fill")
    calls = [c.strip() for c in page.locator("#audit tbody tr td:nth-child(3)").all_inner_texts()]
    shot(page, artifacts, "machine-mid-way")
    expected = (["FIX"], ["TRIAGE", "FIX", "DONE"], True, "rgb(255, 204, 102)",
                ["bind", "fire enter", "fire reproduced"])
    assert expected == (current, states, label.endswith("BUG-7"), fill, calls)


# --------------------------------------------------------------------- acceptance 2


def _no_script_ran(tab: Watched) -> tuple[Any, list[str], list[str]]:
    csp = [c for c in tab.console if "Content Security Policy" in c or "Refused" in c]
    return tab.page.evaluate("() => window.__xss"), tab.dialogs, csp


def test_xss_corpus_is_inert_text(tab: Watched, viewer: Viewer, artifacts: Path) -> None:
    """Script tags, event handlers, javascript: URLs and terminal escapes from the journal
    show as text; no script of theirs runs (no canary, no dialog, nothing for the CSP to
    block), and the page is served with the CSP."""
    login(tab, viewer)
    page = tab.page
    response = page.goto(f"{viewer.base}/sessions/{HOSTILE}")
    assert response is not None
    for details in page.locator("#timeline details").all()[:40]:
        details.locator("summary").first.click()
    page.locator("#timeline a, #effects a").evaluate_all("els => els.forEach(a => a.click())")
    page.wait_for_timeout(300)
    body = page.locator("main").inner_text()
    shown = [text.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace("\u202e", "\\u202e")
             in body for text in XSS]
    scripts = page.evaluate("() => [...document.scripts].map(s => s.getAttribute('src'))")
    handlers = page.evaluate("""() => [...document.querySelectorAll('*')].flatMap(e =>
        [...e.attributes].filter(a => a.name.startsWith('on')
          || a.value.trim().toLowerCase().startsWith('javascript:')).map(a => a.name))""")
    shot(page, artifacts, "xss-corpus")
    expected = ((None, [], []), [True] * len(XSS), ["/static/app.js"], [], CSP)
    assert expected == (_no_script_ran(tab), shown, scripts, handlers,
                        response.headers["content-security-policy"])


def test_running_session_updates_as_records_land(tab: Watched, viewer: Viewer,
                                                 world: World, artifacts: Path) -> None:
    """A running session's page shows new records as the hooks write them, without a
    reload; hostile values arriving that way are inert too."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/sessions/{RUNNING}")
    before = page.locator("#timeline li.rec").count()
    world.bash(RUNNING, "toolu_r2", "echo live-marker-1", stdout="live\n")
    world.bash(RUNNING, "toolu_r3", "echo '<img src=x onerror=\"window.__xss=1\">'",
               stdout="<script>window.__xss=2</script>\n")
    page.locator("#timeline li.rec", has_text="echo live-marker-1").first.wait_for(
        timeout=20_000)
    page.locator("#effects td.what", has_text="onerror").first.wait_for(timeout=20_000)
    page.wait_for_timeout(300)
    after = page.locator("#timeline li.rec").count()
    shown_to = page.locator("#page-end").inner_text()
    shot(page, artifacts, "running-session")
    assert (True, str(after), "live", (None, [], [])) == (
        after > before, shown_to, page.locator("#status").inner_text(), _no_script_ran(tab))


# --------------------------------------------------------------------- acceptance 3


def test_browser_without_the_token_is_refused(tab: Watched, viewer: Viewer,
                                              world: World) -> None:
    """A browser that never opened the printed URL gets 403 on pages, JSON and assets."""
    paths = ["/", f"/sessions/{APPROVED}", "/api/sessions", f"/machines/{world.machine_key}",
             "/static/app.js"]
    statuses = {}
    for path in paths:
        response = tab.page.goto(viewer.base + path)
        assert response is not None
        statuses[path] = (response.status, response.headers["content-security-policy"])
    assert {p: (403, CSP) for p in paths} == statuses


def test_browser_cannot_change_anything(tab: Watched, viewer: Viewer, world: World) -> None:
    """From a logged-in page, fetch() with POST, PUT, DELETE and PATCH is refused (405)."""
    login(tab, viewer)
    paths = ["/sessions", f"/sessions/{APPROVED}", f"/api/sessions/{APPROVED}",
             f"/sessions/{APPROVED}/export", "/machines", "/search"]
    got = tab.page.evaluate("""async (paths) => {
        const out = {};
        for (const p of paths) for (const m of ['POST', 'PUT', 'DELETE', 'PATCH']) {
            const r = await fetch(p, {method: m, body: m === 'DELETE' ? null : 'x=1'});
            out[m + ' ' + p] = r.status;
        }
        return out;
    }""", paths)
    assert {f"{m} {p}": 405 for p in paths for m in ("POST", "PUT", "DELETE", "PATCH")} == got


# --------------------------------------------------------------------- acceptance 4


def test_secrets_not_shown_unless_raw(browser: Browser, viewer: Viewer, raw_viewer: Viewer,
                                      artifacts: Path) -> None:
    """The secrets session, opened in the browser: markers by default, the secrets (and
    the RAW banner) only under --raw."""
    seen = {}
    for name, v in (("redacted", viewer), ("raw", raw_viewer)):
        context = browser.new_context()
        try:
            tab = Watched(context.new_page())
            login(tab, v)
            tab.page.goto(f"{v.base}/sessions/{SECRET}")
            for details in tab.page.locator("#timeline details").all():
                details.locator("summary").first.click()
            html = tab.page.content()
            seen[name] = ([s in html for s in SECRETS], "[REDACTED:" in html,
                          tab.page.locator("#redaction").inner_text().split(":")[0])
            shot(tab.page, artifacts, f"secrets-{name}")
        finally:
            context.close()
    assert {"redacted": ([False] * 4, True, "Redacted"),
            "raw": ([True] * 4, False, "RAW")} == seen


def test_json_twin_in_the_browser(tab: Watched, viewer: Viewer) -> None:
    """The footer's JSON link opens the same session as JSON, in the browser."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/sessions/{APPROVED}")
    page.locator("a.json-link").click()
    page.wait_for_load_state()
    doc = json.loads(page.locator("body").inner_text())
    assert (APPROVED, "redacted", 3) == (doc["session_id"], doc["redaction"],
                                        doc["effects_total"])


def _big_home(root: Path, steps: int) -> tuple[Path, str]:
    """A session of ``4 * steps + 2`` records (model call, intent, start, terminal with a
    1.5 kB output per step), written with the journal's encoder."""
    from smllm import journal

    sid = "5e7a0c11-bbbb-4bbb-8ccc-00000000b16b"
    home = root / "smllm-home"
    entries = [journal.fact("session.start", {"session_id": sid, "cwd": "/work/big"})]
    for i in range(steps):
        tid = f"t{i}"
        entries += [
            journal.event("model.call", message_id=f"m{i}", model="claude-sonnet-4-5",
                          stop_reason="tool_use", tool_use_ids=[tid]),
            journal.event("side_effect_intent", operation="tool:bash", tool_name="Bash",
                          tool_use_id=tid, policy_decision="allow:policy", rule="default",
                          input={"command": f"pytest -k case_{i}"}),
            journal.fact("tool_batch.effect.started", {"tool_use_id": tid}),
            journal.fact("tool_batch.effect.terminal", {"tool_use_id": tid,
                         "outcome": "succeeded", "observed_via": "hook",
                         "output": {"stdout": "." * 1500}}),
        ]
    entries.append(journal.fact("session.end", {"exit_reason": "clean", "uptime_ms": 1}))
    write_session(home, sid, entries)
    return home, sid


def test_a_long_session_shows_at_once_and_fills_in(tab: Watched, tmp_path: Path) -> None:
    """A long log's page shows with its first lines while the log is still being read,
    then fills in its totals by itself (every effect counted, the reading note gone)."""
    from serve_world import start_viewer

    steps = 8000
    home, sid = _big_home(tmp_path, steps)
    v = start_viewer(home)
    try:
        login(tab, v)
        page = tab.page
        page.goto(f"{v.base}/sessions/{sid}", wait_until="domcontentloaded")
        first_rows = page.locator("#timeline > li").count()
        page.wait_for_selector("#scanning", state="detached", timeout=60_000)
        page.wait_for_function("document.body.dataset.live === '0'", timeout=20_000)
        counts = page.locator("p.effect-counts").inner_text()
        records = page.locator("#records").inner_text().split(" ")[0]
    finally:
        v.stop()
    assert (True, f"{steps} side effects · succeeded: {steps}", str(4 * steps + 2)) == (
        first_rows > 0, counts, records)


def test_team_store_in_the_browser(tab: Watched, store_viewer: Viewer, artifacts: Path) -> None:
    """`smllm serve --store`: the sessions page names who shipped each session and where;
    a stored session opens with its judge-approved rm -rf."""
    login(tab, store_viewer)
    page = tab.page
    row = page.locator("#sessions tbody tr", has_text=APPROVED)
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    shot(page, artifacts, "store-sessions")
    row.locator("a").first.click()
    page.wait_for_selector("#effects")
    rm = page.locator("#effects tr.effect", has_text="rm -rf stale_cache.txt")
    shot(page, artifacts, "store-session")
    assert (["alice", "host-w"], True, "source: team store") == (
        cells[4:6], rm.locator("td.auth").inner_text().startswith("allow:llm_judge"),
        page.locator("nav .source").inner_text())


# --------------------------------------------------------------------- reading it all


def test_crashed_and_resumed_sessions_are_marked(tab: Watched, viewer: Viewer,
                                                 artifacts: Path) -> None:
    """The sessions page marks the session that crashed and was resumed (it ended clean, so
    its termination alone would hide it), and its page does too; the others carry no mark."""
    login(tab, viewer)
    page = tab.page
    rows = {r.locator("td").nth(0).inner_text(): r.locator("td.termination").inner_text()
            for r in page.locator("#sessions tbody tr").all()}
    shot(page, artifacts, "sessions-resumed")
    page.goto(f"{viewer.base}/sessions/{RESUMED}")
    facts = page.locator("#termination").inner_text()
    expected = ({RESUMED: "clean crashed resumed", APPROVED: "clean"}, "clean crashed resumed")
    assert expected == ({k: rows[k] for k in (RESUMED, APPROVED)}, facts)


#: the number of lines each element of a kind spans (an inline element has one client
#: rectangle per line), and the text of each
LINES = """sel => [...document.querySelectorAll(sel)].map(e => e.getClientRects().length)"""


def test_paths_times_and_commands_wrap_only_between_parts(tab: Watched, viewer: Viewer,
                                                          world: World,
                                                          artifacts: Path) -> None:
    """On a narrow window a path wraps after a slash only, a command at a space or a slash
    (never inside `report-001`), and timestamps and session ids stay whole; the text is
    the path as journaled."""
    login(tab, viewer)
    page = tab.page
    page.set_viewport_size({"width": 640, "height": 900})
    page.goto(f"{viewer.base}/sessions")
    times = page.evaluate(LINES, "#sessions time")
    ids = page.evaluate(LINES, "#sessions td.session a")
    parts = page.evaluate(LINES, "#sessions td.folder .nw")
    folders = page.evaluate(LINES, "#sessions td.folder .path")
    texts_ = page.locator("#sessions td.folder").all_text_contents()
    shot(page, artifacts, "sessions-narrow")
    page.goto(f"{viewer.base}/sessions/{RESUMED}")
    words = page.evaluate(LINES, "#effects td.what .nw")
    command = page.evaluate(LINES, "#effects td.what code")
    shot(page, artifacts, "session-narrow")
    expected = (True, True, True, True, True, True, True)
    assert expected == (
        len(times) >= 8 and set(times) == {1}, len(ids) >= 4 and set(ids) == {1},
        len(parts) >= 8 and set(parts) == {1}, max(folders) > 1,
        str(world.project) in texts_, len(words) >= 40 and set(words) == {1},
        command[0] > 5)


def test_long_approval_rows_can_be_read_whole(tab: Watched, viewer: Viewer,
                                              artifacts: Path) -> None:
    """An approval too long for its row is cut with "…", and the whole of it is one click
    away: "show all" in the approvals table, the opened timeline row (and its title),
    the chain page's action and its opened steps."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/sessions/{RESUMED}")
    cell = page.locator("#approvals td.what")
    cut = cell.locator("summary code").inner_text()
    cell.locator("summary").click()
    table = cell.locator("code.whole-text").inner_text()
    review = page.locator("li.rec[data-kind='approval.review']").first
    title = review.locator("summary .what").get_attribute("title") or ""
    review.locator("summary").click()
    row = review.locator(".whole-text").inner_text()
    shot(page, artifacts, "long-approval")
    page.locator("#approvals a").first.click()
    page.wait_for_selector("#chain")
    action = page.locator("#chain-action").inner_text()
    step = page.locator("#chain > li[data-step='requested']")
    step.locator("summary").click()
    requested = step.locator(".whole-text").inner_text()
    shot(page, artifacts, "long-approval-chain")
    whole = f"bash: {LONG_COMMAND}"

    def flat(text: str) -> str:
        return " ".join(text.split())

    assert (True, whole, True, True, whole, True) == (
        cut.endswith("…") and len(cut) < len(whole), flat(table), whole in flat(title),
        whole in flat(row), flat(action), whole in flat(requested))


def test_machine_header_names_the_instance_as_status_does(tab: Watched, viewer: Viewer,
                                                          world: World) -> None:
    """Once the bug has its ref, the machine pages say `bug BUG-7` where the instance
    stands (as `smllm status` does), not the instance id it started with."""
    login(tab, viewer)
    page = tab.page
    page.goto(f"{viewer.base}/machines")
    listed = page.locator("#machine-sessions tbody tr", has_text=world.machine_key)
    where = listed.locator("td").nth(1).inner_text()
    page.goto(f"{viewer.base}/machines/{world.machine_key}")
    assert ("fix › FIX · bug BUG-7", "fix › FIX · bug BUG-7") == (
        where, page.locator("#location").inner_text())
