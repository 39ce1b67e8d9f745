"""GitHub Copilot CLI's hooks (1.0.102): its native payloads in smllm's shape, its tools as
the catalogue's, and answers that are safe on Copilot.

smllm installs Copilot's **native** hook file (camelCase events, ``.github/hooks/smllm.json``
or ``~/.copilot/hooks/smllm.json``), not the Claude Code format Copilot also reads: the
Claude format renames the tools (``Bash``, ``Write``) but keeps Copilot's argument shapes,
drops a SessionStart's ``additionalContext`` and leaves PermissionRequest unconverted, so
smllm would read a mix of two hosts; the native format is one host's vocabulary, mapped here
once (``/work/shared/ref/copilot-hooks.md`` §4-5, measured).

A native payload is camelCase; :func:`payload` gives the shape every handler reads:

>>> p = payload("PostToolUse", {"sessionId": "s1", "cwd": "/p", "timestamp": 7,
...             "toolName": "bash", "toolArgs": {"command": "ls"},
...             "toolResult": {"resultType": "success", "textResultForLlm": "a"}},
...             call_id=lambda *a: "toolu_1")
>>> p["session_id"], p["tool_name"], p["tool_input"], p["tool_use_id"]
('s1', 'bash', {'command': 'ls'}, 'toolu_1')

and its tools become the catalogue's, with their argument names
(:data:`smllm.base.catalogue.HOST_TOOLS`):

>>> c = tool_call({"session_id": "s", "cwd": "/p", "tool_name": "create",
...                "tool_input": {"path": "/p/a.md", "file_text": "hi"}, "tool_use_id": "t"})
>>> c.tool, c.input, c.harness
('Write', {'file_path': '/p/a.md', 'content': 'hi'}, 'copilot')

Copilot blocks a tool when a preToolUse hook exits 1, 2 or 3 or answers a native deny; it
**runs** it when the hook prints unparsable output, a Claude-format answer
(``hookSpecificOutput``, ignored in a native file) or times out. So every answer here is
the flat native object (:func:`native`), and an ``ask`` is a deny saying how a person can
approve (``ask`` is a deny without a prompt in ``copilot -p``, and a prompt whose answer
smllm could not journal otherwise):

>>> native("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse",
...        "permissionDecision": "deny", "permissionDecisionReason": "no"}})
{'permissionDecision': 'deny', 'permissionDecisionReason': 'no'}
>>> pre_tool_use("deny", "")["permissionDecisionReason"] != ""
True

The project is found from the payload's ``cwd`` (Copilot's project root) alone: a
``CLAUDE_PROJECT_DIR`` inherited from a Claude Code session that started Copilot would name
another project.

Hot path: ``os`` and smllm's base only; loaded only by hooks that Copilot runs.
"""

from __future__ import annotations

from smllm import harness
from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.gate import Verdict
    from smllm.journal.codec import Entry

HARNESS = "copilot"
GATING_EVENT = "PreToolUse"
#: consecutive agentStop blocks Copilot honours in one turn: the ninth stop ends the turn
#: whatever the hook answers (measured: an always-blocking hook ran 9 times). smllm's own
#: chain cap (:data:`smllm.machine.engine.STOP_CHAIN_CAP`) lets a stop through first
STOP_BLOCK_CAP = 8
#: smllm's event -> Copilot's native event name (the hook file's keys)
EVENTS: dict[str, str] = {
    "SessionStart": "sessionStart",
    "UserPromptSubmit": "userPromptSubmitted",
    "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse",
    "PostToolUseFailure": "postToolUseFailure",
    "Stop": "agentStop",
    "SubagentStart": "subagentStart",
    "SubagentStop": "subagentStop",
    "SessionEnd": "sessionEnd",
}
#: payload keys renamed to the shared shape (the rest are kept as they are)
KEYS: tuple[tuple[str, str], ...] = (
    ("sessionId", "session_id"), ("toolName", "tool_name"), ("toolArgs", "tool_input"),
    ("toolResult", "tool_response"), ("transcriptPath", "transcript_path"),
    ("agentId", "agent_id"), ("agentType", "agent_type"), ("agentName", "agent_name"),
    ("parentAgentId", "parent_agent_id"), ("stopReason", "stop_reason"),
    ("initialPrompt", "initial_prompt"),
)
#: what a person can do about a call smllm would have escalated
HOW_TO_APPROVE = (
    "smllm does not hand this call to Copilot's prompt (there is none in `copilot -p`, and "
    "smllm could not journal a person's answer to it), so it blocks a call it would "
    "escalate for review. " + harness.APPROVE_BY_POLICY)
#: a deny's reason when none was given (Copilot tells the model "No reason provided")
NO_REASON = harness.NO_REASON

def copilot_home(env: Mapping[str, str] | None = None) -> str:
    """Copilot's own folder: ``$COPILOT_HOME``, else ``~/.copilot``."""
    env = os.environ if env is None else env
    home = env.get("COPILOT_HOME")
    return os.path.abspath(home) if home else os.path.join(os.path.expanduser("~"), ".copilot")


def events_path(session_id: str, env: Mapping[str, str] | None = None) -> str:
    """The session's ``events.jsonl`` (Copilot's transcript; the agentStop hook's
    ``transcriptPath``). ``session_id`` is checked by the input parser first."""
    return os.path.join(copilot_home(env), "session-state", session_id, "events.jsonl")


def payload(event: str, data: dict[str, Any],
            call_id: Callable[[str, dict[str, Any], Any], str | None] | None = None,
            ) -> dict[str, Any]:
    """A native payload (``data``, decoded) in the shape smllm's handlers read: the keys of
    :data:`KEYS` renamed, the transcript path when Copilot does not say it, and for a tool
    event the ``tool_use_id`` Copilot gives the model (``call_id(event, data, ts)``, from
    its events.jsonl; a made-up ``copilot-<timestamp>`` when it cannot be found)."""
    out = dict(data)
    for theirs, ours in KEYS:
        if theirs in out:
            out[ours] = out.pop(theirs)
    if event == "PostToolUseFailure" and "error" in out and not isinstance(out["error"], str):
        out["error"] = str(out["error"])
    if "tool_name" in out:
        args = out.get("tool_input")
        if isinstance(args, str):  # older versions sent a JSON string
            from smllm.base import jsonfast  # noqa: PLC0415 - loaded by the parser already

            try:
                args = jsonfast.loads(args)
            except ValueError:
                args = {"raw": args}
            out["tool_input"] = args if isinstance(args, dict) else {"raw": args}
        found = call_id(event, out, data.get("timestamp")) if call_id is not None else None
        out["tool_use_id"] = found or f"copilot-{data.get('timestamp')}"
    return out


def under_copilot(raw: bytes, env: Mapping[str, str]) -> str | None:
    """Is this Claude Code's hook of smllm (``.claude/settings.json``) run by Copilot, which
    reads that file too in a trusted folder? Then its payload is Copilot's Claude-format
    one (snake_case with an ISO ``timestamp``, no ``tool_use_id``, no ``permission_mode``:
    Claude Code always sends one of those). Returns the project's folder when so, else
    None. ``COPILOT_CLI`` alone is not trusted: a variable cannot turn Claude Code's hooks
    off."""
    if env.get("COPILOT_CLI") != "1" or b'"timestamp"' not in raw:
        return None
    from smllm.base import jsonfast, paths  # noqa: PLC0415 - loaded by the parser already

    try:
        data = jsonfast.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("timestamp"), str) \
            or "tool_use_id" in data or "permission_mode" in data:
        return None
    cwd = data.get("cwd")
    return paths.project_root(cwd if isinstance(cwd, str) and cwd else os.getcwd(), {})


def installed(project: str, env: Mapping[str, str] | None = None) -> bool:
    """Are smllm's Copilot hooks installed for ``project`` (or for the user)?"""
    return any(os.path.isfile(os.path.join(folder, "smllm.json")) for folder in (
        os.path.join(project, ".github", "hooks"), os.path.join(copilot_home(env), "hooks")))


#: the deny of smllm's Claude Code hooks run by Copilot without smllm's Copilot hooks
NOT_INSTALLED = ("smllm is installed in this project for Claude Code, and Copilot runs those "
                 "hooks too, but smllm's Copilot hooks are not installed, so it cannot govern "
                 "this session and denies the call: run `smllm install --harness copilot`")


def tool_call(p: Mapping[str, Any], env: Mapping[str, str] | None = None) -> ToolCall:
    """The call a (shaped, validated) Copilot tool event names: Copilot's tool as the
    catalogue's (:data:`smllm.base.catalogue.HOST_TOOLS`); the project from ``cwd``
    alone."""
    from smllm.base import catalogue  # noqa: PLC0415 - loaded by the builder already

    return harness.tool_call(p, HARNESS, env={}, tools=catalogue.HOST_TOOLS[HARNESS])


def protected_parts(project: str, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Copilot's own configuration, which the agent must not change either: the project's
    ``.github/hooks`` and ``.github/copilot`` (hook files, ``disableAllHooks``) and
    ``$COPILOT_HOME`` (``~/.copilot``: user hooks, folder trust, the sandbox's settings)."""
    return (os.path.join(project, ".github", "hooks"),
            os.path.join(project, ".github", "copilot"), copilot_home(env))


def verdict(call: ToolCall, decide: Callable[[ToolCall], Verdict],
            held: Callable[[ToolCall], str | None]) -> Verdict:
    """The gate's verdict on a Copilot call: the crash hold (``held``), then ``decide`` (the
    hook's decision and review chain); a call that would change Copilot's configuration
    denied; an ``ask`` made a deny (:data:`HOW_TO_APPROVE`)."""
    from smllm.gate import Verdict  # noqa: PLC0415 - loaded by the hook already

    hold = held(call)
    if hold:
        return Verdict("deny", "deny:reconcile", hold, rule="reconcile.unknown-effect")
    found = decide(call)
    return harness.settled(found, lambda: harness.config_guard(
        call, list(found.facts.get("targets") or []), protected_parts(call.project), ".github",
        "Copilot"), HOW_TO_APPROVE)


def refused_ask(v: Verdict, tool_use_id: str) -> list[Entry]:
    """The end of the review an ``ask`` made a deny opened for the person."""
    return harness.refused_ask(v, tool_use_id, HOW_TO_APPROVE, "Copilot")


def pre_tool_use(decision: str, reason: str) -> dict[str, Any] | None:
    """The native preToolUse answer: ``allow`` (smllm authorized it: no prompt), a deny
    with its reason (an ``ask`` as a deny saying how a person can approve); nothing for
    ``abstain`` (Copilot's own permissions decide)."""
    allow = {"permissionDecision": "allow", "permissionDecisionReason": reason}
    return harness.answer(decision, reason, HOW_TO_APPROVE, "Copilot", deny=deny,
                          allow=allow)


def deny(reason: str) -> dict[str, Any]:
    """A native preToolUse deny, never without a reason."""
    return {"permissionDecision": "deny",
            "permissionDecisionReason": reason.strip() or NO_REASON}


def native(event: str, result: dict[str, Any]) -> dict[str, Any]:
    """A handler's answer as Copilot's native file needs it: what Claude Code reads under
    ``hookSpecificOutput`` (a decision, ``additionalContext``) flat at the top level, where a
    native file reads it (the nested object would be ignored, and a deny lost)."""
    inner = result.get("hookSpecificOutput")
    if not isinstance(inner, dict):
        return result
    out = {k: v for k, v in result.items() if k != "hookSpecificOutput"}
    if event == GATING_EVENT:
        decision = str(inner.get("permissionDecision") or "deny")
        reason = str(inner.get("permissionDecisionReason") or "")
        flat = pre_tool_use(decision, reason)
        return {**out, **(flat or {})}
    if isinstance(inner.get("additionalContext"), str):
        out["additionalContext"] = inner["additionalContext"]
    return out
