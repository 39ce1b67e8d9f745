"""Gemini CLI's hooks (0.61): its events, payloads and tools as smllm's, and answers that
are safe on Gemini CLI.

Gemini CLI names its events differently (``BeforeTool`` is smllm's PreToolUse, …,
:data:`EVENTS`; ``smllm install --harness gemini`` registers ``smllm-hook PreToolUse
--harness gemini`` under ``BeforeTool``) and its tools too; they are judged as the
catalogue's (:data:`smllm.base.catalogue.HOST_TOOLS`), so the gate, the machines' tool
rules and the ledger see ``Bash``/``Write``/``Edit``:

>>> call = tool_call({"tool_name": "run_shell_command", "session_id": "s", "cwd": "/p",
...                   "tool_input": {"command": "make", "dir_path": "sub"},
...                   "timestamp": "2026-12-01T10:00:00.000Z"}, {"GEMINI_PROJECT_DIR": "/p"})
>>> call.tool, call.command, call.cwd, call.project, call.tool_use_id
('Bash', 'make', '/p/sub', '/p', 'g-0a34520e80c8-1796119200000')

Its payloads carry no tool call id, so smllm names a call by what it is and when Gemini
asked (:func:`call_id`) and pairs the AfterTool with the oldest open call of the same tool
and input (:func:`open_call`).

Gemini CLI fails *open* where a governor needs it closed (shared/ref/gemini-hooks.md §4,
measured): exit 1, a timeout, or output that is not one JSON object let the tool run, and
``ask`` hangs a headless run for ever. So a PreToolUse answer here is a reasoned deny or
nothing, never ``ask``; an escalation becomes a deny that says how a person approves such
calls (:func:`smllm.harness.settled`, :func:`smllm.harness.answer`):

>>> pre_tool_use("deny", "no")
{'decision': 'deny', 'reason': 'no'}
>>> pre_tool_use("allow", "fine") is None, pre_tool_use("abstain", "host") is None
(True, True)
>>> pre_tool_use("ask", "rm -rf escalates")["decision"]
'deny'

Hot path: ``os`` and smllm's base, journal and harness modules; loaded only by hooks that
Gemini CLI runs.
"""

from __future__ import annotations

from smllm import harness, hooks
from smllm.base import catalogue, clock
from smllm.base import osfast as os
from smllm.journal import hostcall

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.gate import Verdict
    from smllm.journal.codec import Entry

HARNESS = "gemini"
#: the host as smllm's reasons name it
HOST = "Gemini CLI"
GATING_EVENT = "PreToolUse"
#: smllm's event -> Gemini CLI's name for it (:data:`smllm.hooks.HOST_EVENTS`)
HOST_EVENTS: dict[str, str] = hooks.HOST_EVENTS[HARNESS]
#: the same as pairs, in the order install writes them
EVENTS: tuple[tuple[str, str], ...] = tuple(HOST_EVENTS.items())
#: the argument of run_shell_command that widens Gemini's tool sandbox for one command
#: (granted without asking anyone in yolo mode)
SANDBOX_ESCAPE = "additional_permissions"
#: what a person can do about a call smllm would have escalated (Gemini cannot be asked)
HOW_TO_APPROVE = (
    "Gemini CLI cannot ask you from a hook (an `ask` would hang a headless run), so smllm "
    "blocks a call it would escalate for review. " + harness.APPROVE_BY_POLICY)
#: a deny's reason when none was given
NO_REASON = harness.NO_REASON


def gemini_home(env: Mapping[str, str] | None = None) -> str:
    """Gemini CLI's folder of the user: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    env = os.environ if env is None else env
    base = env.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(base), ".gemini")


def call_id(payload: Mapping[str, Any]) -> str:
    """The id smllm gives a call Gemini CLI names none for: ``g-`` + 12 hex digits of its
    tool and input, ``-`` + the Unix ms of the payload's ``timestamp`` (when Gemini asked).
    Two identical calls asked for in the same millisecond share it; the PreToolUse hook
    makes the second one unique (:func:`unique`)."""
    digest = hostcall.input_digest(payload.get("tool_name"), payload.get("tool_input"))
    stamp = payload.get("timestamp")
    at = clock.parse_iso_ms(stamp) if isinstance(stamp, str) else None
    return f"g-{digest.partition(':')[2][:12]}-{at if at is not None else clock.now_ms()}"


def unique(tool_use_id: str, taken: Mapping[str, Any]) -> str:
    """``tool_use_id``, or with ``.2``, ``.3``, … when an open call has it already."""
    n = 1
    out = tool_use_id
    while out in taken:
        n += 1
        out = f"{tool_use_id}.{n}"
    return out


def open_call(open_intents: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
    """The open call an AfterTool payload closes: the oldest open intent of the same tool
    and input (their ids share :func:`call_id`'s digest); else a new id (a call no
    PreToolUse of smllm saw)."""
    prefix = call_id(payload).rpartition("-")[0] + "-"
    found = [(int(v.get("seq") or 0), tid) for tid, v in open_intents.items()
             if tid.startswith(prefix) and isinstance(v, dict)]
    return min(found)[1] if found else call_id(payload)


def _shaped(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload in the shared shape: an MCP tool named ``mcp__<server>__<tool>``, a
    command's ``dir_path`` as the call's folder, and the call's id."""
    out = dict(payload)
    mcp = payload.get("mcp_context")
    if isinstance(mcp, dict) and isinstance(mcp.get("server_name"), str) \
            and isinstance(mcp.get("tool_name"), str):
        out["tool_name"] = f"mcp__{mcp['server_name']}__{mcp['tool_name']}"
    tool_input = payload.get("tool_input")
    folder = tool_input.get("dir_path") if isinstance(tool_input, dict) else None
    cwd = payload.get("cwd")
    if payload.get("tool_name") == "run_shell_command" and isinstance(folder, str) and folder \
            and isinstance(cwd, str):
        out["cwd"] = os.path.normpath(os.path.join(cwd, folder))
    if not isinstance(payload.get("tool_use_id"), str):
        out["tool_use_id"] = call_id(payload)
    return out


def tool_call(payload: dict[str, Any], env: Mapping[str, str]) -> ToolCall:
    """The call a (validated) BeforeTool or AfterTool payload names, as the catalogue's tool
    (:data:`smllm.base.catalogue.HOST_TOOLS`), in the project Gemini CLI declares."""
    declared = {"CLAUDE_PROJECT_DIR": env.get("GEMINI_PROJECT_DIR", "")}
    return harness.tool_call(_shaped(payload), HARNESS, env=declared,
                             tools=catalogue.HOST_TOOLS[HARNESS])


def protected_parts(project: str, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Gemini CLI's own configuration, which the agent must not change either: the
    project's ``.gemini/`` (its hooks, its settings), ``.geminiignore`` (which keeps
    ``.gemini/`` and ``.smllm/`` out of the tool sandbox's reach) and the user's
    ``~/.gemini`` (:func:`gemini_home`)."""
    return (os.path.join(project, ".gemini"), os.path.join(project, ".geminiignore"),
            gemini_home(env))


def refused_ask(v: Verdict, tool_use_id: str) -> list[Entry]:
    """The end of the review an ``ask`` made a deny (:func:`verdict`) opened for the person,
    as the host's refusal (:func:`smllm.harness.refused_ask`)."""
    return harness.refused_ask(v, tool_use_id, HOW_TO_APPROVE, HOST)


def sandbox_escape(call: ToolCall) -> str | None:
    """Why a command that asks to widen Gemini's tool sandbox is denied, or None."""
    asked = call.input.get(SANDBOX_ESCAPE) if call.kind == "shell" else None
    if not asked:
        return None
    return (f"smllm denies a command that asks to widen Gemini CLI's tool sandbox "
            f"({SANDBOX_ESCAPE}): Gemini grants it without asking anyone in yolo mode, and "
            f"the sandbox is what keeps smllm's files and the project's .gemini/ read-only "
            f"to your commands. Run the command without it; a person who needs it runs it "
            f"outside the agent")


def verdict(call: ToolCall, decide: Callable[[ToolCall], Verdict],
            held: Callable[[ToolCall], str | None]) -> Verdict:
    """The gate's verdict on a Gemini call: the crash hold (``held``: a re-attempt of an
    unknown effect), a sandbox escape denied, then ``decide`` (the hook's decision and
    review chain), then a write into Gemini's own configuration denied
    (:func:`smllm.harness.config_guard`) and an ``ask`` made a deny saying how a person
    approves such calls (:func:`smllm.harness.settled`)."""
    from smllm.gate import Verdict  # noqa: PLC0415 - loaded by the hook already

    hold = held(call)
    if hold:
        return Verdict("deny", "deny:reconcile", hold, rule="reconcile.unknown-effect")
    escape = sandbox_escape(call)
    if escape is not None:
        return Verdict("deny", "deny:policy", escape, rule="gemini.sandbox-escape")
    found = decide(call)
    return harness.settled(found, lambda: harness.config_guard(
        call, list(found.facts.get("targets") or []), protected_parts(call.project),
        ".gemini", HOST), HOW_TO_APPROVE)


def pre_tool_use(decision: str, reason: str) -> dict[str, Any] | None:
    """The BeforeTool answer that holds on Gemini CLI: a deny with its reason; an ``ask`` as
    a deny saying how a person can approve (``ask`` hangs a headless run); nothing for
    ``allow`` and ``abstain`` (the tool runs: Gemini's yolo mode or its own policy decide)."""
    return harness.answer(decision, reason, HOW_TO_APPROVE, HOST, deny=deny)


def deny(reason: str) -> dict[str, Any]:
    """A BeforeTool deny: Gemini does not run the tool and hands the model
    ``Tool execution blocked: <reason>``. Its reason is never empty."""
    return {"decision": "deny", "reason": reason.strip() or NO_REASON}


def native(event: str, result: dict[str, Any]) -> dict[str, Any]:
    """A handler's answer as Gemini CLI reads it (:func:`smllm.hooks.for_host`): Claude
    Code's deny (what every failure path of a gating hook prints) as Gemini's flat deny, and
    the context a hook adds to the prompt under Gemini's name of the event; a stop's block
    and Gemini's own answers as they are.

    >>> native("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse",
    ...     "permissionDecision": "deny", "permissionDecisionReason": "no"}})
    {'decision': 'deny', 'reason': 'no'}
    >>> native("UserPromptSubmit", {"hookSpecificOutput": {
    ...     "hookEventName": "UserPromptSubmit", "additionalContext": "x"}})
    {'hookSpecificOutput': {'hookEventName': 'BeforeAgent', 'additionalContext': 'x'}}
    """
    specific = result.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return result
    if "permissionDecision" in specific:  # only ever a deny: see pre_tool_use()
        return deny(str(specific.get("permissionDecisionReason") or ""))
    return {**result, "hookSpecificOutput": {**specific,
                                             "hookEventName": HOST_EVENTS.get(event, event)}}
