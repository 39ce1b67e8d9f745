"""Effects left in flight by a crash: how the agent is told, and the hold on re-attempts.

PreToolUse loads this module when a crash left an effect unknown (the sidecar says so):
standard library only at module level.
Reading the journal back (``smllm resume``, ``smllm reconcile``) is :mod:`smllm.journal.recovery`.

At a resume, every intent with no terminal record is **unknown**: it may or may not
have happened. The agent is told so, and a call that would repeat one (same tool, same
input) is held until someone records the verified outcome with
``smllm reconcile SEQ --outcome applied|not-applied``.
"""

from __future__ import annotations

import sys

from smllm import journal
from smllm.base import jsonfast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import UnknownEffect


def _describe(u: UnknownEffect) -> str:
    inp = u.get("input") or {}
    has_command = isinstance(inp, dict) and "command" in inp
    what = inp["command"] if has_command else jsonfast.dumps(inp)
    where = f"{u['stream']} " if u.get("stream") else ""
    return f"- {where}sequence {u.get('sequence')}: {u.get('operation')} {str(what)[:300]}"


def unknown_effects_text(unknown: list[UnknownEffect]) -> str:
    lines = [
        "smllm: this session was resumed after a crash. These effects were announced "
        "(their intent is in the journal) but no outcome was recorded: their outcome is "
        "UNKNOWN. Verify the actual state before retrying any of them; do not simply "
        "run them again.",
        *(_describe(u) for u in unknown),
        "Once you have checked, record what you found: "
        "`smllm reconcile SEQUENCE --outcome applied` (it happened) or "
        "`--outcome not-applied` (it did not). A repeat of an unknown effect is held "
        "until then.",
        f"If `smllm` is not on your PATH, run `{sys.executable} -m smllm reconcile ...`.",
    ]
    return "\n".join(lines)


def _comparable(tool_input: Any) -> Any:
    """The input without cosmetic fields; a shell command with its whitespace folded."""
    if isinstance(tool_input, dict):
        out = {k: v for k, v in tool_input.items() if k not in ("description", "timeout")}
        if isinstance(out.get("command"), str):
            out["command"] = " ".join(out["command"].split())
        return out
    return tool_input


def hold_reason(main_log: str, call: ToolCall) -> str | None:
    """The reason to hold ``call``, if it repeats an unreconciled unknown effect of the
    session whose journal is ``main_log``."""
    state = journal.read_state(main_log)  # a link or FIFO there raises: deny
    unknown = state.get("unknown") or {}
    if not unknown:
        return None
    op = call.operation
    mine = _comparable(call.input)
    for seq, u in sorted(unknown.items(), key=lambda kv: int(kv[0])):
        if u.get("operation") == op and _comparable(u.get("input")) == mine:
            return (
                f"smllm holds this call: it repeats effect {seq} ({op}), which was in "
                "flight when the session crashed and whose outcome is unknown. Check "
                "whether it already happened, then run "
                f"`smllm reconcile {seq} --outcome applied` or "
                f"`smllm reconcile {seq} --outcome not-applied`, and retry only if it "
                "did not apply."
            )
    return None
