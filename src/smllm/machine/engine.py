"""The engine: what a call (bind, fire, stop) decides, and how its audit line changes state.

``decide_*`` reads a session's state and returns the audit line plus the text shown;
:func:`apply` folds one audit line into the state. The live path and
:func:`replay` both use :func:`apply`, so replaying the audit reproduces the state.
"""

from __future__ import annotations

from smllm.machine import texts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import AuditLine, CompiledMachine, Machines
    from smllm.machine import guards
    from smllm.machine.texts import Offer

#: consecutive blocks in one ``stop_hook_active`` chain before a stop is let through
STOP_CHAIN_CAP = 4
#: the status an instance gets from the built-in that sets it aside
_SET_ASIDE = {"pause": "paused", "unmatched": "unmatched"}
YIELD_NOTE: texts.Param = ("note", False, None, None, "What you are waiting for.")


def new_state(key: str) -> dict[str, Any]:
    return {"key": key, "binding": None, "created": None, "last": None, "focus": None,
            "instances": {}, "yielded": False, "blocks": 0, "chain": 0, "auditSize": 0}


def line(at: int, key: str, call: str, **fields: Any) -> AuditLine:
    """One audit line, with seed 001's fields in seed 001's order."""
    get = fields.get
    return {"at": at, "session": key, "source": "agent", "call": call,
            "event": get("event"), "machine": get("machine"), "instance": get("instance"),
            "from": get("from"), "to": get("to"), "params": get("params", {}),
            "offered": get("offered", []), "outcome": get("outcome", "accepted"),
            "reason": get("reason"), "trace": get("trace", []), "binding": get("binding"),
            "reply": get("reply")}


def channel(state: dict[str, Any]) -> str:
    """How this session's agent fires events (its binding says; the MCP tool by default)."""
    return str((state.get("binding") or {}).get("channel") or "mcp")


def focused(state: dict[str, Any]) -> dict[str, Any] | None:
    focus = state.get("focus")
    inst: dict[str, Any] | None = state["instances"].get(focus) if focus else None
    return inst


# ---- offers -------------------------------------------------------------------------

def _enter_offer(machines: Machines) -> Offer:
    ids = list(machines)
    which = "; ".join(f"{m} = {machines[m].get('description') or m}" for m in ids)
    params: list[texts.Param] = [("stateMachine", True, None, ids or None,
                                  f"The machine to start ({which})." if ids else
                                  "The machine to start.")]
    extra = sorted({s for m in machines.values() for s, st in m["states"].items()
                    if st["entryPoint"] and s != m["initial"]})
    if extra:
        params.append(("at", False, None, extra,
                       "Start in this entry point instead of the machine's first state."))
    return ("enter", "Start a state machine at its first state.", params)


def _resume_offer(state: dict[str, Any], machines: Machines) -> Offer | None:
    waiting = [i for i in state["instances"].values() if i["status"] in ("paused", "unmatched")]
    if not waiting:
        return None
    names = [i["id"] for i in waiting]
    return ("resume", "Return to work put aside with pause or unmatched.",
            [("instance", True, None, names, "The id of the work to resume.")])


def offers(state: dict[str, Any], machines: Machines) -> list[Offer]:
    """The events the session offers now, in the order the agent is shown them."""
    inst = focused(state)
    if inst is None:
        out = [_enter_offer(machines)]
        resume = _resume_offer(state, machines)
        return [*out, resume] if resume else out
    machine = machines[inst["machine"]]
    st = machine["states"][inst["state"]]
    own: list[Offer] = []
    for event in st["on"]:
        spec = machine["events"][event]
        own.append((event, spec["description"], [
            (n, p["required"], p["pattern"], p["enum"], p["description"])
            for n, p in spec["params"].items()]))
    who = texts.label(inst, machine)
    return [
        *own,
        ("yield", f"Stop for now and stay in {inst['state']}.", [YIELD_NOTE]),
        ("pause", f"Put {who} aside and return to idle.", []),
        ("unmatched", "The request fits none of these; handle it from idle, then resume.", []),
    ]


def _check_params(event: str, spec: list[texts.Param], params: dict[str, str]) -> str | None:
    known = {p[0]: p for p in spec}
    for name in params:
        if name not in known:
            names = ", ".join(known) or "none"
            return f"{event} takes no param {name} (params: {names})"
    for name, required, pattern, enum, _ in spec:
        if name not in params:
            if required:
                bits = ", pattern: " + pattern if pattern else ""
                bits += ", one of: " + ", ".join(enum) if enum else ""
                return f"{event} needs {name} (required{bits})"
            continue
        value = params[name]
        if pattern:
            import re  # noqa: PLC0415 - only when a param has a pattern

        if pattern and re.fullmatch(pattern, value) is None:
            return f'{name} = "{value}" does not match {pattern}'
        if enum and value not in enum:
            return f'{name} = "{value}" is not one of: {", ".join(enum)}'
    return None


# ---- fire ---------------------------------------------------------------------------

class Decision:
    """An audit line and the text shown for it (``None``: nothing was shown)."""

    __slots__ = ("line", "text")

    def __init__(self, line: AuditLine, text: str | None) -> None:
        self.line = line
        self.text = text

    @property
    def ok(self) -> bool:
        return bool(self.line["outcome"] != "refused")


def _where(inst: dict[str, Any] | None) -> dict[str, Any]:
    if inst is None:
        return {"machine": None, "instance": None, "from": None, "to": None}
    return {"machine": inst["machine"], "instance": inst["id"], "from": inst["state"],
            "to": inst["state"]}


def _refuse(state: dict[str, Any], machines: Machines, at: int, event: str, *,
            params: dict[str, str], reason: str, trace: list[dict[str, Any]] | None = None,
            output: str | None = None) -> Decision:
    inst = focused(state)
    machine = machines.get(inst["machine"]) if inst else None
    offered = offers(state, machines)
    text = texts.refused(state["key"], inst, machine, reason=reason, offers=offered,
                         output=output, channel=channel(state))
    rec = line(at, state["key"], "fire", event=event, **_where(inst), params=params,
               offered=[o[0] for o in offered], outcome="refused", reason=reason,
               trace=trace or [], reply=texts.digest(text))
    return Decision(rec, text)


def decide_fire(state: dict[str, Any], machines: Machines, at: int, event: str,
                params: dict[str, str], *, env: dict[str, str], cwd: str,
                new_instance: Any = None) -> Decision:
    """Decide one fire. ``new_instance()`` hands out the id of an instance ``enter`` makes."""
    offered = offers(state, machines)
    names = [o[0] for o in offered]
    match = next((o for o in offered if o[0] == event), None)
    if match is None:
        return _refuse(state, machines, at, event, params=params,
                       reason=f"{event} is not offered here (offered: {', '.join(names)})")
    problem = _check_params(event, match[2], params)
    if problem is not None:
        return _refuse(state, machines, at, event, params=params, reason=problem)
    inst = focused(state)
    if event == "enter":
        return _enter(state, machines, at, params, new_instance)
    if event == "resume":
        return _resume(state, machines, at, params)
    assert inst is not None
    if event in ("yield", "pause", "unmatched"):
        return _builtin(state, machines, inst, at, event=event, params=params)
    return _transition(state, machines, inst, at, event=event, params=params, env=env,
                       cwd=cwd)


def _enter(state: dict[str, Any], machines: Machines, at: int, params: dict[str, str],
           new_instance: Any) -> Decision:
    machine = machines[params["stateMachine"]]
    start = params.get("at") or machine["initial"]
    if start not in machine["states"] or (
            start != machine["initial"] and not machine["states"][start]["entryPoint"]):
        return _refuse(state, machines, at, "enter", params=params,
                       reason=f"{machine['id']} has no entry point {start}")
    inst = {"id": new_instance(), "machine": machine["id"], "state": start, "ref": None,
            "status": "active"}
    st = machine["states"][start]
    text = texts.arrived(state["key"], inst, machine, f"enter (new {machine['kind']})",
                         params=params, prompt=st["prompt"], final=st["final"])
    rec = line(at, state["key"], "fire", event="enter", machine=machine["id"],
               instance=inst["id"], to=start, params=params, reply=texts.digest(text))
    return Decision(rec, text)


def _resume(state: dict[str, Any], machines: Machines, at: int,
            params: dict[str, str]) -> Decision:
    inst = dict(state["instances"][params["instance"]])
    machine = machines[inst["machine"]]
    st = machine["states"][inst["state"]]
    text = texts.arrived(state["key"], inst, machine, "resume from idle", params=params,
                         prompt=st["prompt"], final=False)
    rec = line(at, state["key"], "fire", event="resume", machine=inst["machine"],
               instance=inst["id"], to=inst["state"], params=params, reply=texts.digest(text))
    return Decision(rec, text)


def _builtin(state: dict[str, Any], machines: Machines, inst: dict[str, Any], at: int, *,
             event: str, params: dict[str, str]) -> Decision:
    key = state["key"]
    machine = machines[inst["machine"]]
    where = _where(inst)
    offered: list[str] = []
    if event == "yield":
        text = texts.yielded(key, inst, machine, params.get("note"))
    else:
        where["to"] = None
        who = texts.label(inst, machine)
        aside = {**inst, "status": _SET_ASIDE[event]}
        after = {**state, "focus": None, "instances": {**state["instances"], inst["id"]: aside}}
        idle_offers = offers(after, machines)
        offered = [o[0] for o in idle_offers]
        note = (f"Paused: {who} stays in {inst['state']} until you fire resume with "
                f"instance {inst['id']}." if event == "pause" else
                f"Set aside: {who} waits in {inst['state']}. Handle the request, then fire "
                f"resume with instance {inst['id']}.")
        text = texts.offer(key, None, None, idle_offers, note=note, channel=channel(state))
    rec = line(at, key, "fire", event=event, **where, params=params, offered=offered,
               reply=texts.digest(text))
    return Decision(rec, text)


def _transition(state: dict[str, Any], machines: Machines, inst: dict[str, Any], at: int, *,
                event: str, params: dict[str, str], env: dict[str, str],
                cwd: str) -> Decision:
    machine = machines[inst["machine"]]
    candidates = machine["states"][inst["state"]]["on"][event]
    trace: list[dict[str, Any]] = []
    chosen: int | None = None
    failed: guards.Result | None = None
    for i, t in enumerate(candidates):
        if t["guard"] is None:
            chosen = i
            break
        from smllm.machine import guards  # noqa: PLC0415 - only for guarded transitions

        result = guards.evaluate(t["guard"], params, env, cwd)
        trace += result.trace
        if result.ok:
            chosen = i
            break
        failed = failed or result
    if chosen is None:
        assert failed is not None
        return _refuse(state, machines, at, event, params=params,
                       reason=f"guard failed: {failed.reason}", trace=trace,
                       output=failed.output)
    if len(candidates) > 1:
        trace.append({"transition": chosen})
    t = candidates[chosen]
    after = dict(inst)
    if t["setRef"] and machine["ref"]:
        after["ref"] = params[machine["ref"]["param"]]
    target = t["target"] or inst["state"]
    after["state"] = target
    st = machine["states"][target]
    if t["target"] is None or (target == inst["state"] and not t["reenter"]):
        text = texts.stayed(state["key"], after, machine, event, params)
    else:
        text = texts.arrived(state["key"], after, machine, f"{event} from {inst['state']}",
                             params=params, prompt=st["prompt"], final=st["final"])
    rec = line(at, state["key"], "fire", event=event, machine=machine["id"],
               instance=inst["id"], **{"from": inst["state"]}, to=target, params=params,
               trace=trace, reply=texts.digest(text))
    return Decision(rec, text)


# ---- stop and bind ------------------------------------------------------------------

def decide_stop(state: dict[str, Any], machines: Machines, at: int,
                stop_hook_active: bool) -> Decision:
    """Block a stop in a non-final state unless the agent yielded or already was refused."""
    inst = focused(state)
    trace: list[dict[str, Any]] = []
    if stop_hook_active:
        trace.append({"stopHookActive": True, "chain": int(state.get("chain", 0))})
    where = _where(inst)
    if inst is None or state.get("yielded"):
        return Decision(line(at, state["key"], "stop", **where, trace=trace), None)
    if state.get("blocks", 0) > 0 or (stop_hook_active and state.get("chain", 0)
                                      >= STOP_CHAIN_CAP):
        return Decision(line(at, state["key"], "stop", **where, outcome="runaway",
                             trace=trace), None)
    machine = machines[inst["machine"]]
    offered = offers(state, machines)
    text = texts.offer(state["key"], inst, machine, offered, channel=channel(state))
    rec = line(at, state["key"], "stop", **where, offered=[o[0] for o in offered],
               outcome="block", trace=trace, reply=texts.digest(text))
    return Decision(rec, text)


def decide_bind(state: dict[str, Any], machines: Machines, at: int,
                binding: dict[str, Any]) -> Decision:
    offered = offers(state, machines)
    text = texts.offer(state["key"], None, None, offered,
                       channel=channel({"binding": binding}))
    rec = line(at, state["key"], "bind", offered=[o[0] for o in offered], binding=binding,
               reply=texts.digest(text))
    return Decision(rec, text)


def location_text(state: dict[str, Any], machines: Machines) -> str:
    """Where the session is, its instructions and what it offers (status, hooks)."""
    inst = focused(state)
    offered = offers(state, machines)
    if inst is None:
        return texts.offer(state["key"], None, None, offered, channel=channel(state))
    machine = machines[inst["machine"]]
    prompt = machine["states"][inst["state"]]["prompt"]
    return texts.offer(state["key"], inst, machine, offered, prompt=prompt,
                       channel=channel(state))


# ---- apply and replay ---------------------------------------------------------------

def apply(state: dict[str, Any], rec: AuditLine, machines: Machines) -> None:
    """Fold one audit line into the session's state."""
    state["last"] = rec["at"]
    if rec.get("binding") is not None:
        state["binding"] = rec["binding"]
        state["created"] = rec["at"]
    if rec["call"] == "stop":
        _apply_stop(state, rec)
        return
    if rec["call"] != "fire":
        return
    state["blocks"] = 0
    if rec["outcome"] != "accepted":
        return
    event = rec["event"]
    state["yielded"] = event == "yield"
    if event == "yield":
        return
    iid = rec["instance"]
    if event == "enter":
        state["instances"][iid] = {"id": iid, "machine": rec["machine"], "state": rec["to"],
                                   "ref": None, "status": "active"}
    inst = state["instances"][iid]
    if event in _SET_ASIDE:
        inst["status"] = _SET_ASIDE[event]
        state["focus"] = None
        return
    inst["status"] = "active"
    state["focus"] = iid
    machine = machines[str(rec["machine"])]
    if event not in ("enter", "resume"):
        _apply_transition(inst, rec, machine)
    if machine["states"][inst["state"]]["final"]:
        inst["status"] = "done"
        state["focus"] = None


def _apply_transition(inst: dict[str, Any], rec: AuditLine,
                      machine: CompiledMachine) -> None:
    candidates = machine["states"][str(rec["from"])]["on"][str(rec["event"])]
    chosen = next((e["transition"] for e in rec["trace"] if "transition" in e), 0)
    t = candidates[chosen]
    if t["setRef"] and machine["ref"]:
        inst["ref"] = rec["params"][machine["ref"]["param"]]
    inst["state"] = rec["to"]


def _apply_stop(state: dict[str, Any], rec: AuditLine) -> None:
    active = any(e.get("stopHookActive") for e in rec["trace"])
    if rec["outcome"] == "block":
        state["blocks"] = state.get("blocks", 0) + 1
        state["chain"] = (state.get("chain", 0) if active else 0) + 1
    else:
        state["blocks"] = 0
        state["chain"] = 0
        state["yielded"] = False


def replay(key: str, lines: list[AuditLine], machines: Machines) -> dict[str, Any]:
    """The state a session's audit leads to."""
    state = new_state(key)
    for rec in lines:
        apply(state, rec, machines)
    return state
