"""A project folder with ``.smllm/config.toml`` and machines, for the state-machine tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SEED_FIX = REPO / "tests" / "golden" / "seed001" / "fix.smllm.yaml"


class Project:
    """``root/.smllm`` holding the given machines; runs smllm in-process or as a subprocess."""

    def __init__(self, root: Path, machines: dict[str, str] | None = None) -> None:
        self.root = root
        smllm_dir = root / ".smllm"
        smllm_dir.mkdir(parents=True, exist_ok=True)
        machines = machines or {"fix.smllm.yaml": SEED_FIX.read_text()}
        for name, text in machines.items():
            (smllm_dir / name).write_text(text)
        files = ", ".join(json.dumps(n) for n in machines)
        (smllm_dir / "config.toml").write_text(f"[machines]\nfiles = [{files}]\n")

    def cli(self, *args: str, env: dict[str, str] | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        full = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "smllm", *args], capture_output=True,
                              text=True, env=full, cwd=self.root, input=stdin, timeout=120,
                              check=False)

    def hook(self, event: str, host: str = "cc-1", env: dict[str, str] | None = None,
             **payload: Any) -> dict[str, Any] | None:
        body = {"session_id": host, "transcript_path": f"/tmp/smllm-test/{host}.jsonl",
                "cwd": str(self.root), "hook_event_name": event, **payload}
        proc = self.cli("hook", event, env=env, stdin=json.dumps(body) + "\n")
        assert proc.returncode == 0, proc.stderr
        out: dict[str, Any] | None = json.loads(proc.stdout) if proc.stdout.strip() else None
        return out

    def fire(self, key: str | None, event: str, **params: str) -> tuple[bool, str, str]:
        """Fire in-process; return (ok, key, text)."""
        from smllm.machine import session

        key, decision, _ = session.fire(key, event, params, cwd=str(self.root))
        return decision.ok, key, decision.text or ""


def machine_yaml(states: str, *, events: str = "", extra_meta: str = "") -> str:
    """A small machine ``m`` with the given ``states:`` body and ``meta.events`` body."""
    return (
        "id: m\ndescription: A test machine.\ninitial: A\nmeta:\n  smllm: 1\n"
        "  instance: { kind: job, ref: { param: job, pattern: \"^J-[0-9]+$\", "
        "description: \"The job.\" } }\n"
        f"{extra_meta}  events:\n{events}states:\n{states}"
    )


def alias_bomb(levels: int = 14, width: int = 10) -> str:
    """A "billion laughs" machine file of about 1 KB: each level refers ``width`` times to
    the one before, so it stands for ``width ** (levels + 1)`` strings once expanded."""
    lines = ["id: m", 'l0: &l0 ["lol"' + ', "lol"' * (width - 1) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]"
              for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"
