"""Sixteen processes appending to one log at once lose nothing and never share a sequence."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from smllm import journal
from smllm.journal.verify import verify

WRITER = """
import sys
from pathlib import Path
from smllm import journal
path, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(n):
    journal.append(path, [journal.event("stress", writer=who, i=i)])
"""


def test_sixteen_writers_two_hundred_records_each(tmp_path: Path) -> None:
    """16 writers x 200 records: 3,200 present, sequences 1..3200, verify passes."""
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir(mode=0o700)
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(log), f"w{w}", "200"])
        for w in range(16)
    ]
    assert [0] * 16 == [p.wait(timeout=300) for p in procs]
    recs = list(journal.iter_records(log))
    assert list(range(1, 3201)) == [r["sequence"] for r in recs]
    seen = {(r["payload"]["event"]["writer"], r["payload"]["event"]["i"]) for r in recs}
    assert {(f"w{w}", i) for w in range(16) for i in range(200)} == seen
    for w in range(16):  # each writer's own records stay in its order
        mine = [r["payload"]["event"]["i"] for r in recs if r["payload"]["event"]["writer"] == f"w{w}"]
        assert list(range(200)) == mine
    report = verify(log)
    assert (True, 3200, 0) == (report.ok, report.records, report.torn)
