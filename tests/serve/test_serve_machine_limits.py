"""`smllm serve`'s machine pages read the session's machine files within bounds (issue 19
acceptance 5): an alias bomb planted after the bind is refused with file:line:col, and the
viewer keeps answering (it used to expand the bomb: 35 s and 3.1 GB for 393 bytes)."""

from __future__ import annotations

import html
import json
import os
import urllib.request
from pathlib import Path

from serve_world import SEED_FIX, World, start_viewer

from machine_project import alias_bomb

BOMB = ("m.smllm.yaml:5:5: aliases expand to more than 10000 nodes (the value here already "
        "expands to 11111; the file itself holds 43) (write the repeated parts out, or refer "
        "to them fewer times (*name))")


def _get(base: str, token: str, path: str) -> tuple[int, str]:
    req = urllib.request.Request(base + path, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, r.read().decode()


def test_the_machine_page_refuses_an_alias_bomb(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".smllm").mkdir(parents=True)
    machine = project / ".smllm" / "m.smllm.yaml"
    machine.write_text(SEED_FIX.read_text())
    (project / ".smllm" / "config.toml").write_text('[machines]\nfiles = ["m.smllm.yaml"]\n')
    world = World(tmp_path / "home", project)
    host = "5e7a0c11-aaaa-4bbb-8ccc-0000000000aa"
    world.hook("SessionStart", host, source="startup")
    world.smllm("fire", "enter", "--param", "stateMachine=fix",
                env={"CLAUDE_CODE_SESSION_ID": host})
    keys = [k[:-6] for k in os.listdir(world.home / "audit") if k.endswith(".jsonl")]
    assert 1 == len(keys), keys
    machine.write_text(alias_bomb())
    viewer = start_viewer(world.home)
    try:
        status, body = _get(viewer.base, viewer.token, f"/api/machines/{keys[0]}")
        page_status, page = _get(viewer.base, viewer.token, f"/machines/{keys[0]}")
        listing_status, _ = _get(viewer.base, viewer.token, "/machines")
    finally:
        viewer.stop()
    error = json.loads(body)["summary"]["error"]
    assert (200, 200, 200) == (status, page_status, listing_status)
    assert error.startswith("the machines of this session do not load: ")
    assert error.endswith(BOMB)
    assert BOMB in html.unescape(page)
