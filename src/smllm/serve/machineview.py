"""smllm sessions and their machines, read without writing anything.

The state of a session is replayed from its audit (the record), as ``smllm session
show`` would, but without the session lock and without the compiled-machine cache: the
viewer never creates or rewrites a file. Machines are loaded from the files the
session's configs name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smllm.base import paths
from smllm.base.errors import SessionNotFound, SmllmError
from smllm.machine import catalog, engine, loader, locations, texts
from smllm.machine.auditlog import when

if TYPE_CHECKING:
    from smllm.base.shapes import AuditLine, Machines


@dataclass
class MachineSession:
    key: str
    state: dict[str, Any]
    audit: list[AuditLine]
    machines: Machines = field(default_factory=dict)
    error: str | None = None

    @property
    def binding(self) -> dict[str, Any]:
        b = self.state.get("binding")
        return b if isinstance(b, dict) else {}

    def focus(self) -> dict[str, Any] | None:
        inst = engine.focused(self.state)
        return inst if isinstance(inst, dict) else None

    def current(self, machine_id: str) -> dict[str, list[str]]:
        """State name -> the instances of ``machine_id`` standing in it (done ones too)."""
        out: dict[str, list[str]] = {}
        for inst in self.state["instances"].values():
            if inst["machine"] == machine_id:
                label = inst["id"] + (f" {inst['ref']}" if inst.get("ref") else "")
                if inst["status"] != "active":
                    label += f" ({inst['status']})"
                out.setdefault(inst["state"], []).append(label)
        return out


def _load_machines(configs: list[str]) -> Machines:
    machines: Machines = {}
    for config in configs:
        for file in catalog.read_config(config):
            machine = loader.load(Path(file))
            machines.setdefault(machine["id"], machine)
    return machines


def session_keys() -> list[str]:
    return locations.all_keys()


def load(key: str) -> MachineSession:
    """The session ``key``: its audit, its state replayed from it, its machines."""
    paths.check_id(key, "smllm session")
    audit = locations.read_audit(key)
    if not audit:
        raise SessionNotFound(f"no smllm session {key!r}", "pick one on the machines page")
    binding = next((ln["binding"] for ln in audit if ln.get("binding")), None)
    configs = list((binding or {}).get("configs") or [])
    session = MachineSession(key, engine.new_state(key), audit)
    try:
        session.machines = _load_machines(configs)
        session.state = engine.replay(key, audit, session.machines)
    except (SmllmError, KeyError, OSError) as exc:
        session.error = f"the machines of this session do not load: {exc}"
        session.state["binding"] = binding
        session.state["last"] = audit[-1].get("at")
    return session


def summary(session: MachineSession) -> dict[str, Any]:
    """One line of the machines page."""
    focus = session.focus()
    binding = session.binding
    return {
        "key": session.key, "harness": binding.get("harness"),
        "host_session": binding.get("hostSession"), "cwd": binding.get("cwd"),
        "machine": focus["machine"] if focus else None,
        "instance": focus["id"] if focus else None,
        # what the instance is called now: its ref once it has one (`bug BUG-7`), as in
        # the header of `smllm status`
        "label": texts.label(focus, session.machines.get(focus["machine"])) if focus else None,
        "state": focus["state"] if focus else None,
        "instances": len(session.state["instances"]),
        "last_active": when(session.state.get("last") or 0),
        "calls": len(session.audit), "error": session.error,
    }


def audit_row(rec: AuditLine) -> dict[str, Any]:
    """One audit line in columns (seed 001's fields)."""
    return {
        "at": when(int(rec.get("at") or 0)), "source": rec.get("source"),
        "call": rec.get("call"), "event": rec.get("event"), "machine": rec.get("machine"),
        "instance": rec.get("instance"), "from": rec.get("from"), "to": rec.get("to"),
        "params": rec.get("params") or {}, "outcome": rec.get("outcome"),
        "reason": rec.get("reason"),
    }
