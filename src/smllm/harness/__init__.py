"""Harness adapters: how each host's hooks speak, mapped onto smllm's one model.

An adapter owns three mappings for its host: the hook payload -> :class:`ToolCall`
(:mod:`smllm.base.catalogue`), a :class:`smllm.gate.Verdict` -> the decision JSON that is
safe on that host, and the deny that is printed when nothing else can be. Claude Code's
is :mod:`smllm.harness.claude`, Codex's :mod:`smllm.harness.codex`.

The first mapping is the same for every host once its adapter has the payload in the
shared shape (``tool_name``, ``tool_input``, ``session_id``, ``cwd`` and, where the host
has them, ``tool_use_id``, ``permission_mode``, ``agent_id``): :func:`tool_call` here. What
differs between hosts is two facts the adapter gives it:

* where the project is: declared by the host (Claude Code's ``CLAUDE_PROJECT_DIR``, read
  from ``env``), or found from the call's ``cwd`` alone (``env={}``: a host that declares
  none, so an inherited variable naming another project is not read);
* the host's tool names and argument shapes: ``tools`` maps a host's tool onto the
  catalogue's with its input keys renamed, so the gate, the machines' tool rules and the
  ledger see ``Bash``/``Write``/``Edit`` whichever host sent the call.

>>> tools = {"create": ("Write", (("path", "file_path"), ("file_text", "content")))}
>>> call = tool_call({"tool_name": "create", "tool_input": {"path": "/p/a.md", "file_text": "x"},
...                   "session_id": "s", "cwd": "/p"}, "copilot", env={}, tools=tools)
>>> call.tool, call.input, call.harness
('Write', {'file_path': '/p/a.md', 'content': 'x'}, 'copilot')

Hot path: ``os`` and smllm's base only (the modules every tool event loads anyway), so the
builder costs a hook no module of its own; the catalogue is loaded by tool events only.
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.base import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import TracebackType
    from typing import Any

    from smllm import journal
    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import SessionKey, VerdictFacts
    from smllm.gate import Verdict
    from smllm.journal.codec import Entry

#: how a person approves a call smllm would have escalated, on a host without smllm's
#: prompt (each such adapter's ``HOW_TO_APPROVE``: why that host cannot ask, then this)
APPROVE_BY_POLICY = (
    "A person can approve such calls by adding an allow rule for it to the project's "
    ".smllm/policy.toml ([[rule]] with decision = \"allow\"), or by configuring a reviewer "
    "(reviewers = [\"llm_judge\"] or [\"command\"]) that answers in the person's stead; "
    "or the person runs it outside the agent"
)
#: a deny's reason when none was given (on Codex a reasonless deny would run the tool)
NO_REASON = "smllm denies this call (no reason was given, so smllm fails closed)"


def renamed(tool_input: Mapping[str, Any], keys: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """``tool_input`` with each of the host's keys renamed to the catalogue's (the other keys
    kept as they are).

    >>> renamed({"path": "a", "view_range": [1, 2]}, (("path", "file_path"),))
    {'view_range': [1, 2], 'file_path': 'a'}
    """
    out = dict(tool_input)
    for theirs, ours in keys:
        if theirs in out:
            out[ours] = out.pop(theirs)
    return out


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) else None


def tool_call(payload: Mapping[str, Any], harness: str, *, env: Mapping[str, str],
              tools: dict[str, tuple[str, tuple[tuple[str, str], ...]]] | None = None,
              ) -> ToolCall:
    """The call a (validated) tool event's payload names, for ``harness``: the project from
    ``env``'s declared folder or else from ``cwd``; a tool ``tools`` names as the
    catalogue's tool with its keys renamed, any other as the host named it."""
    from smllm.base.catalogue import ToolCall  # noqa: PLC0415 - tool events only (a host's other hooks shape payloads here)

    where = _text(payload, "cwd") or os.getcwd()
    name = str(payload["tool_name"])
    tool_input: dict[str, Any] = payload["tool_input"]
    mapped = tools.get(name) if tools else None
    if mapped is not None:
        name, keys = mapped
        tool_input = renamed(tool_input, keys)
    return ToolCall(
        name,
        tool_input,
        cwd=where,
        project=paths.project_root(where, env),
        session_id=str(payload["session_id"]),
        tool_use_id=_text(payload, "tool_use_id"),
        permission_mode=_text(payload, "permission_mode"),
        agent_id=_text(payload, "agent_id"),
        harness=harness,
    )


# ------------------------------------------------------------------ hosts with no prompt
# Codex and Copilot: a call smllm would escalate to a person is denied with how a person
# can approve it (the host would run it, or refuse it unjournaled), and the host's own
# configuration (its hooks, their trust) is guarded like smllm's protected set.


def settled(found: Verdict, guard: Callable[[], str | None], how: str) -> Verdict:
    """The gate's verdict ``found`` as a host without smllm's prompt gets it: a call that
    would change the host's own configuration denied (``guard()``: why, or None; asked only
    of a call not denied already), an ``ask`` made a deny saying ``how`` to approve."""
    if found.decision != "deny":
        guarded = guard()
        if guarded is not None:
            from smllm.gate import Verdict  # noqa: PLC0415 - loaded by the hook already

            return Verdict("deny", "deny:policy", guarded, rule="protect.self",
                           facts=found.facts)
    return found if found.decision != "ask" else ask_as_deny(found, how)


def answer(decision: str, reason: str, how: str, host: str, *,
           deny: Callable[[str], dict[str, Any]],
           allow: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The PreToolUse answer of a host without smllm's prompt: ``deny`` with the reason (an
    ``ask`` as a deny saying ``how`` to approve), ``allow`` for an allow (None: the host
    has no plain allow, and the tool runs when nothing denies), nothing for ``abstain``."""
    if decision == "deny":
        return deny(reason)
    if decision == "ask":
        return deny(f"{reason.rstrip('. ') or 'smllm escalates this call'}. {how}")
    if decision == "allow":
        return allow
    if decision == "abstain":
        return None
    return deny(f"smllm cannot answer {decision!r} on {host} and denies the call "
                f"(fail closed): {reason}")


def ask_as_deny(found: Verdict, how: str) -> Verdict:
    """``found`` (an ``ask``) as the deny a host without smllm's prompt gets: its reason,
    then ``how`` a person can approve such calls; ``smllm_verdict`` keeps the ask."""
    from smllm.gate import Verdict  # noqa: PLC0415 - loaded by the hook already

    facts: VerdictFacts = {**found.facts, "smllm_verdict": found.policy_decision}
    source = found.policy_decision.partition(":")[2] or "policy"
    return Verdict("deny", f"deny:{'machine' if source == 'machine' else 'policy'}",
                   f"{found.reason.rstrip('. ') or 'smllm escalates this call'}. {how}",
                   found.rule, found.pending_action_id, facts)


def refused_ask(v: Verdict, tool_use_id: str, how: str, host: str) -> list[Entry]:
    """The end of the review an ``ask`` made a deny (:func:`ask_as_deny`) opened for the
    person: ``decision_applied`` rejected and ``approval_wait.effect.terminal``, as the
    host's refusal (``host`` shows no approval prompt smllm can use)."""
    if v.pending_action_id is None or v.facts.get("smllm_verdict") != "ask:user":
        return []
    from smllm.journal import records  # noqa: PLC0415 - loaded by the hook already

    source = {"kind": "host", "observed_via": "PreToolUse", "host_said": how,
              "inferred": f"{host} shows no approval prompt smllm can use: smllm denied "
                          f"the call"}
    return [
        records.new("decision_applied", pending_action_id=v.pending_action_id,
                    decision="rejected", policy_result="deny", decision_source=source),
        records.new("approval_wait.effect.terminal", pending_action_id=v.pending_action_id,
                    outcome="rejected", tool_use_id=tool_use_id),
    ]


def config_guard(call: ToolCall, targets: list[Any], parts: tuple[str, ...], marker: str,
                 host: str) -> str | None:
    """Why ``call`` would change a host's own configuration (``parts``: its hooks and their
    trust), read from what the one analysis found it writes (``targets`` of the verdict's
    facts), or None. A write whose path is known only at run time is refused when the
    command names ``marker`` or one of ``parts``."""
    if not targets:  # a call the analysis found no write in (a Read): nothing to guard
        return None
    from smllm.gate import protect  # noqa: PLC0415 - a call that writes only

    command = call.command or ""
    named = marker in command or any(p in command for p in parts)
    for target in targets:
        if not isinstance(target, dict) or target.get("effect") not in protect.WRITE_EFFECTS:
            continue
        path = target.get("path")
        if path is None:
            if named:
                return (f"smllm protects {host}'s configuration: {target.get('by')} "
                        f"{target.get('effect')}s a path known only at run time in a "
                        f"command that names it")
            continue
        root = protect.reaches(str(path), call.cwd, parts)
        if root is not None:
            return (f"smllm protects {host}'s configuration: {call.tool} would "
                    f"{target.get('effect')} {path}, inside {root}, which the agent may "
                    f"not change (it holds the hooks and their trust)")
    return None


# ------------------------------------------------------------------ hosts' transcripts


def read_from(path: str, offset: int, limit: int) -> bytes | None:
    """At most ``limit`` bytes of ``path`` from ``offset``; None when it cannot be read or
    is shorter than ``offset`` (rewritten)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            return None
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, min(size - offset, limit))
    finally:
        os.close(fd)


def ingest_model_calls(txn: journal.Transaction, path: str, key: SessionKey,
                       read: Callable[[list[bytes], dict[str, Any]],
                                      tuple[list[dict[str, Any]], dict[str, Any]]],
                       limit: int) -> None:
    """Journal the model calls a host's transcript (``path``) gained since the last hook,
    under ``txn``: ``read`` turns its whole new lines into ``model.call`` fields and its
    state, kept in the sidecar under ``key`` with the offset read up to; a line still being
    written waits for the next hook."""
    from smllm.journal import records  # noqa: PLC0415 - loaded by the hook already

    saved = txn.state.get(key)
    st: dict[str, Any] = dict(saved) if isinstance(saved, dict) else {}
    if st.get("path") != path:
        st = {"path": path, "offset": 0}
    offset = int(st.get("offset") or 0)
    data = read_from(path, offset, limit)
    if not data:
        return
    end = data.rfind(b"\n") + 1
    if not end:
        return
    calls, st = read(data[:end].splitlines(), st)
    for call in calls:
        txn.append(records.new("model.call", **call))
    st["offset"] = offset + end
    txn.set_state(key, st)


class ingesting:
    """``journal.transaction`` that first journals what a host's transcript gained
    (``ingest(txn, path)``: Codex's rollout, Copilot's events.jsonl); a log that holds no
    record yet gets none before its ``session.start``."""

    __slots__ = ("ingest", "inner", "path")

    def __init__(self, inner: journal.transaction, path: str | None,
                 ingest: Callable[[journal.Transaction, str], None]) -> None:
        self.inner = inner
        self.path = path
        self.ingest = ingest

    def __enter__(self) -> journal.Transaction:
        txn = self.inner.__enter__()
        if self.path is not None and txn.tail.sequence > 0:
            from smllm.journal import sidecar  # noqa: PLC0415 - loaded by the hook already

            sidecar.ensure(txn)
            try:  # noqa: SIM105 - contextlib is too slow to import on the hot path
                self.ingest(txn, self.path)
            except Exception:  # noqa: S110 - model calls are observed: never fail the hook
                pass
        return txn

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.inner.__exit__(et, ev, tb)
