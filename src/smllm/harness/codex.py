"""OpenAI Codex CLI's hooks (0.169): its payloads as :class:`ToolCall`, and answers that are
safe on Codex.

Codex speaks nearly Claude Code's hook format, but it fails *open* where Claude Code does
not (``/work/shared/ref/codex-hooks.md`` §5, measured): ``ask``, a deny without a reason,
``allow`` without ``updatedInput``, exit 1, exit 3, a timeout and text after the JSON all
let the tool run. So every answer here is a deny with a non-empty reason, or nothing:

>>> pre_tool_use("deny", "no")["hookSpecificOutput"]["permissionDecisionReason"]
'no'
>>> pre_tool_use("allow", "fine") is None, pre_tool_use("abstain", "host") is None
(True, True)
>>> "Codex cannot ask you" in pre_tool_use("ask", "rm -rf escalates")[
...     "hookSpecificOutput"]["permissionDecisionReason"]
True
>>> deny("")["hookSpecificOutput"]["permissionDecisionReason"] != ""
True

Shell calls arrive as ``Bash`` (``tool_input.command``, as on Claude Code); edits as
``apply_patch`` whose ``tool_input.command`` is the patch text. The gate judges a patch by
the files it changes, each as Claude Code's ``Write`` (a file added, deleted, or the
destination of a move) or ``Edit`` (a file updated), so the protected set and the path
rules apply to a patch as they do to Write and Edit (:func:`judged`):

>>> patch = "*** Begin Patch\\n*** Add File: a.md\\n+hi\\n*** Update File: b.py\\n" \\
...         "*** Move to: c.py\\n@@\\n-x\\n+y\\n*** Delete File: d.txt\\n*** End Patch\\n"
>>> [(c.tool, c.input["file_path"]) for c in judged(ToolCall(
...     "apply_patch", {"command": patch}, cwd="/p", project="/p", harness="codex"))]
[('Write', 'a.md'), ('Edit', 'b.py'), ('Write', 'c.py'), ('Write', 'd.txt')]

The project is found from the call's ``cwd`` alone (the nearest folder holding ``.smllm/``
or ``.git``): Codex sets no ``CLAUDE_PROJECT_DIR``, and one inherited from a Claude Code
session that started Codex would name another project.

Hot path: ``os`` and smllm's base only; loaded only by hooks that Codex runs.
"""

from __future__ import annotations

from smllm import harness
from smllm.base import catalogue
from smllm.base import osfast as os
from smllm.base.catalogue import ToolCall
from smllm.base.errors import SmllmError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from smllm.gate import Verdict
    from smllm.journal.codec import Entry

HARNESS = "codex"
GATING_EVENT = "PreToolUse"
#: Codex's name for an edit, and its input key holding the patch text
PATCH_TOOL = "apply_patch"
#: what a person can do about a call smllm would have escalated (Codex shows no prompt)
HOW_TO_APPROVE = ("Codex cannot ask you, so smllm blocks a call it would escalate for "
                  "review. " + harness.APPROVE_BY_POLICY)
#: a deny's reason when none was given (Codex lets a reasonless deny run the tool)
NO_REASON = harness.NO_REASON


class PatchError(SmllmError):
    """An ``apply_patch`` input smllm cannot read (the gate then denies it)."""


def patch_files(text: str) -> list[tuple[str, str]]:
    """Each file a patch changes, in order: ``(action, path)`` with action ``add``,
    ``update``, ``delete`` or ``move`` (the destination of the update before it).

    >>> patch_files("*** Begin Patch\\n*** Delete File: x\\n*** End Patch")
    [('delete', 'x')]
    >>> patch_files("just text")
    Traceback (most recent call last):
    smllm.harness.codex.PatchError: the patch does not start with '*** Begin Patch' (line 1)
    """
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() != "*** Begin Patch":
        raise PatchError(f"the patch does not start with '*** Begin Patch' "
                         f"(line {1 if first is None else first + 1})")
    out: list[tuple[str, str]] = []
    ended = False
    for number, line in enumerate(lines[first + 1:], first + 2):
        if not line.startswith("*** "):
            continue
        head = line.rstrip()
        if head == "*** End Patch":
            ended = True
            break
        if head == "*** End of File":
            continue
        for marker, action in (("*** Add File: ", "add"), ("*** Update File: ", "update"),
                               ("*** Delete File: ", "delete"), ("*** Move to: ", "move")):
            if head == marker.rstrip() or head.startswith(marker):
                path = head[len(marker):].strip()
                if not path:
                    raise PatchError(f"the patch names no file after {marker.strip()!r} "
                                     f"(line {number})")
                if action == "move" and (not out or out[-1][0] != "update"):
                    raise PatchError(f"'*** Move to:' follows no '*** Update File:' "
                                     f"(line {number})")
                out.append((action, path))
                break
        else:
            raise PatchError(f"the patch has an unknown header {head[:80]!r} (line {number})")
    if not ended:
        raise PatchError("the patch has no '*** End Patch' line")
    if not out:
        raise PatchError("the patch changes no file")
    return out


def tool_call(payload: dict[str, Any], env: Mapping[str, str] | None = None) -> ToolCall:
    """The call a (validated) Codex PreToolUse, PermissionRequest or PostToolUse payload
    names, as it is journaled (Codex's own tool name and input). ``env`` is not read: Codex
    declares no project folder, so the project comes from ``cwd`` alone."""
    return harness.tool_call(payload, HARNESS, env={})


def _like(call: ToolCall, tool: str, tool_input: dict[str, Any]) -> ToolCall:
    return ToolCall(tool, tool_input, cwd=call.cwd, project=call.project,
                    session_id=call.session_id, tool_use_id=call.tool_use_id,
                    permission_mode=call.permission_mode, agent_id=call.agent_id,
                    harness=call.harness)


def judged(call: ToolCall) -> list[ToolCall]:
    """The calls the gate judges for ``call``: a patch's files as Write/Edit calls (raises
    :class:`PatchError` for a patch that cannot be read), a ``view_image`` as a Read, any
    other call as it is."""
    if call.tool == PATCH_TOOL:
        text = call.input.get("command")
        if not isinstance(text, str):
            text = call.input.get("patch") if isinstance(call.input.get("patch"), str) else None
        if text is None:
            raise PatchError("the apply_patch input holds no patch text ('command')")
        return [_like(call, catalogue.PATCH_ACTIONS[action],
                      {"file_path": path, "patch_action": action})
                for action, path in patch_files(text)]
    mapped = catalogue.JUDGED_AS.get(call.tool)
    if mapped is not None:
        tool, keys = mapped
        return [_like(call, tool, harness.renamed(call.input, keys))]
    return [call]


def verdict(call: ToolCall, decide: Callable[[ToolCall], Verdict],
            held: Callable[[ToolCall], str | None]) -> Verdict:
    """The gate's verdict on a Codex call: the crash hold on the call as journaled
    (``held``: a re-attempt of an unknown effect), then ``decide`` (the hook's decision and
    review chain) over each call :func:`judged` gives, the first that does not let it run
    winning; then an ``ask`` made a deny, since Codex runs the tool on ``ask`` and shows no
    prompt (:func:`refused_ask` journals the end of the review it opened)."""
    from smllm.gate import Verdict  # noqa: PLC0415 - loaded by the hook already

    hold = held(call)
    if hold:
        return Verdict("deny", "deny:reconcile", hold, rule="reconcile.unknown-effect")
    try:
        calls = judged(call)
    except PatchError as exc:
        return Verdict("deny", "deny:policy", f"smllm cannot read this patch and denies it "
                       f"(fail closed): {exc.render()}", rule="codex.patch-unreadable")
    found: Verdict | None = None
    targets: list[Any] = []
    for one in calls:
        v = decide(one)
        targets += v.facts.get("targets") or []
        if v.decision not in ("allow", "abstain"):
            found = v
            break
        if found is None or (v.decision == "abstain" and found.decision == "allow"):
            found = v
    if found is None:  # judged() gives at least one call
        raise PatchError("the call gives the gate nothing to judge")
    if len(calls) > 1 and targets:
        found.facts["targets"] = targets[:20]
    return harness.settled(found, lambda: guard(call, targets), HOW_TO_APPROVE)


def protected_parts(project: str, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Codex's own configuration, which the agent must not change either: the project's
    ``.codex/`` (its hooks) and ``$CODEX_HOME`` (``~/.codex``: the trust of every hook)."""
    env = os.environ if env is None else env
    home = env.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return (os.path.join(project, ".codex"), os.path.abspath(home))


def guard(call: ToolCall, targets: list[Any]) -> str | None:
    """Why ``call`` would change Codex's own configuration (:func:`protected_parts`), read
    from what the one analysis found it writes (``targets`` of the verdict's facts), or
    None. A write whose path is known only at run time is refused when the command names
    ``.codex``."""
    return harness.config_guard(call, targets, protected_parts(call.project), ".codex",
                                "Codex")


def refused_ask(v: Verdict, tool_use_id: str) -> list[Entry]:
    """The end of the review an ``ask`` made a deny (:func:`verdict`) opened for the
    person, as the host's refusal (Codex has no prompt for a person to answer)."""
    return harness.refused_ask(v, tool_use_id, HOW_TO_APPROVE, "Codex")


def pre_tool_use(decision: str, reason: str) -> dict[str, Any] | None:
    """The PreToolUse answer that holds on Codex: a deny with its reason; an ``ask`` as a
    deny saying how a person can approve; nothing for ``allow`` and ``abstain`` (Codex
    supports no plain allow: the tool runs when the hook denies nothing)."""
    return harness.answer(decision, reason, HOW_TO_APPROVE, "Codex", deny=deny)


def deny(reason: str) -> dict[str, Any]:
    """A PreToolUse deny that blocks on Codex: its reason is never empty (Codex runs the
    tool for a deny without one). The same object as Claude Code's deny."""
    text = reason.strip() or NO_REASON
    return {
        "hookSpecificOutput": {
            "hookEventName": GATING_EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": text,
        }
    }
