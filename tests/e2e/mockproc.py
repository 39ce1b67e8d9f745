"""A scripted model server (``mock_*.py`` in this folder) run by a test harness: started
with ``--port 0`` (the port read from its port file), its script replaced through
``POST /_mock/script``, its request log read from an offset, and killed by the PID it
wrote (the tests kill only what they started)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class MockProcess:
    def __init__(self, script: Path, root: Path, log: Path, lifetime: float = 900) -> None:
        port_file, pid_file, err = root / "mock.port", root / "mock.pid", root / "mock.err"
        with open(err, "w") as err_fh:
            proc = subprocess.Popen(
                [sys.executable, str(script), "--port", "0", "--port-file", str(port_file),
                 "--pid-file", str(pid_file), "--log", str(log), "--max-lifetime",
                 str(lifetime)], stdout=subprocess.DEVNULL, stderr=err_fh,
                start_new_session=True)
        deadline = time.monotonic() + 60
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the mock did not start: {err.read_text()}")
            time.sleep(0.05)
        self.pid: int | None = int(pid_file.read_text()) if pid_file.exists() else proc.pid
        self.port = int(port_file.read_text())
        self.log = log

    def set_script(self, script: Sequence[Mapping[str, Any]]) -> None:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/_mock/script",
                                     data=json.dumps(list(script)).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()

    def offset(self) -> int:
        """Where the requests of the next run start in the log."""
        return self.log.stat().st_size if self.log.exists() else 0

    def requests(self, offset: int = 0) -> list[dict[str, Any]]:
        """The logged requests from ``offset`` on (one JSON object a line)."""
        try:
            data = self.log.read_bytes()[offset:]
        except FileNotFoundError:
            return []
        out = []
        for line in data.split(b"\n"):
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    out.append(obj)
        return out

    def close(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            self.pid = None
