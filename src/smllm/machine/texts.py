"""The ``<smllm>`` texts the agent reads: replies to fires, the stop block, locations.

Seed 001 fixes these byte for byte (its reply hashes are the SHA-256 of them), so
every text is assembled here from lines, each ending in ``\\n``.
"""

from __future__ import annotations

from smllm.base import jsonfast
from smllm.base.digest import tagged as digest_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.shapes import CompiledMachine

#: one offered event: (name, description, [(param, required, pattern, enum, description)])
Param = tuple[str, bool, "str | None", "list[str] | None", str]
Offer = tuple[str, str, list[Param]]


def digest(text: str | None) -> str | None:
    """``sha256:<hex>`` of a text shown to the agent (the audit's ``reply``)."""
    if text is None:
        return None
    return digest_of(text.encode("utf-8"))


def label(inst: dict[str, Any], machine: CompiledMachine | None) -> str:
    """``bug BUG-7``: the instance's kind and its ref, or its id until it has one."""
    kind = machine["kind"] if machine else "task"
    return f"{kind} {inst.get('ref') or inst['id']}"


def header(key: str, inst: dict[str, Any] | None, machine: CompiledMachine | None) -> str:
    if inst is None:
        return f"session {key} · idle\n"
    return f"session {key} · {inst['machine']} › {inst['state']} · {label(inst, machine)}\n"


def _param_line(p: Param) -> str:
    name, required, pattern, enum, desc = p
    bits = ["required" if required else "optional"]
    if pattern:
        bits.append(f"pattern: {pattern}")
    if enum:
        bits.append(f"one of: {', '.join(enum)}")
    tail = f": {desc}" if desc else ""
    return f"    {name} ({', '.join(bits)}){tail}\n"


#: how the agent fires events: smllm's MCP tool (seed 001's text), or ``smllm fire`` in
#: Bash where no MCP server is registered (a local or user install; see machine.channel)
CHANNELS = ("mcp", "bash")


def fire_line(key: str, channel: str = "mcp") -> str:
    """The line that says how to fire one event."""
    if channel == "bash":
        return f"Fire one event: smllm fire --session {key} EVENT [--param NAME=VALUE]...\n"
    return f'Fire one event: smllm({{ session: "{key}", event, params }})\n'


def events_block(key: str, offers: list[Offer], channel: str = "mcp") -> str:
    out = fire_line(key, channel) + "<events>\n"
    for name, desc, params in offers:
        out += f"- {name}: {desc}\n" + "".join(_param_line(p) for p in params)
    return out + "</events>\n"


def _params_line(params: dict[str, str]) -> str:
    if not params:
        return ""
    shown = ", ".join(f"{k} = {jsonfast.dumps(v)}" for k, v in params.items())
    return f"Params: {shown}\n"


def _instructions(prompt: str | None) -> str:
    return f"<instructions>\n{prompt}\n</instructions>\n" if prompt else ""


def arrived(key: str, inst: dict[str, Any], machine: CompiledMachine, how: str, *,
            params: dict[str, str], prompt: str | None, final: bool) -> str:
    """The reply to an accepted fire that entered a state (seed: ``enter``, ``reproduced``)."""
    text = "<smllm>\n" + header(key, inst, machine) + f"Arrived by: {how}\n"
    text += _params_line(params) + _instructions(prompt)
    if final:
        text += (f"{label(inst, machine)} is done: {inst['state']} is final, "
                 "so you may stop once you have followed these instructions.\n")
    return text + "</smllm>\n"


def stayed(key: str, inst: dict[str, Any], machine: CompiledMachine, event: str,
           params: dict[str, str]) -> str:
    """The reply to an accepted fire whose transition stays without re-entering."""
    return ("<smllm>\n" + header(key, inst, machine)
            + f"Recorded: {event}; {label(inst, machine)} stays in {inst['state']}.\n"
            + _params_line(params) + "</smllm>\n")


def refused(key: str, inst: dict[str, Any] | None, machine: CompiledMachine | None, *,
            reason: str, offers: list[Offer], output: str | None = None,
            channel: str = "mcp") -> str:
    """The reply to a refused fire: the reason, then what may be fired instead."""
    text = "<smllm>\n" + header(key, inst, machine) + f"error: {reason}\n"
    if output is not None:
        text += f"<output>\n{output.rstrip()}\n</output>\n"
    return text + events_block(key, offers, channel) + "</smllm>\n"


def offer(key: str, inst: dict[str, Any] | None, machine: CompiledMachine | None,
          offers: list[Offer], *, prompt: str | None = None, note: str | None = None,
          channel: str = "mcp") -> str:
    """What the agent may fire here (the stop block, the bind text, locations)."""
    text = "<smllm>\n" + header(key, inst, machine)
    if note:
        text += note + "\n"
    text += _instructions(prompt) + events_block(key, offers, channel)
    return text + "</smllm>\n"


def yielded(key: str, inst: dict[str, Any], machine: CompiledMachine, note: str | None) -> str:
    text = "<smllm>\n" + header(key, inst, machine)
    text += (f"Yielded: {label(inst, machine)} stays in {inst['state']}; "
             "you may stop now, and continue from here later.\n")
    if note:
        text += f"Waiting for: {note}\n"
    return text + "</smllm>\n"
