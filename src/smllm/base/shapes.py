"""The shapes of the plain data that flows between smllm's parts, for the type checker.

Compiled forms are cached as JSON and read back on the hot path with the standard
library only, so they travel as plain dicts; these ``TypedDict`` s say what each holds.
Hot modules import this module only under ``if TYPE_CHECKING:`` (it imports ``typing``).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# --------------------------------------------------------------------- the policy

Mode = Literal["on-request", "untrusted", "deny-unmatched", "yolo"]
Authority = Literal["guard", "gate"]
RuleDecision = Literal["allow", "ask", "deny"]


class _RuleRequired(TypedDict):
    id: str
    decision: RuleDecision
    source: str
    reason: str


class PolicyRule(_RuleRequired, total=False):
    """A ``[[rule]]`` of a policy file, compiled: matchers present only when given."""

    tool: str
    command: str
    path: str


class BuiltinRule(TypedDict):
    """A built-in rule (``policy_defaults.toml``)."""

    decision: RuleDecision
    about: str
    source: str


class RuleOverride(TypedDict):
    """A policy file's change of a built-in rule's decision."""

    decision: RuleDecision
    source: str


class CompiledPolicy(TypedDict, total=False):
    """The compiled policy (``policy.load``): ``error`` set and nothing else when invalid."""

    version: int
    error: str | None
    mode: Mode
    authority: Authority
    approve: str  # "never" | "known-safe": smllm's own allows under the guard authority
    reviewers: list[str]
    llm_judge: dict[str, Any]
    command: dict[str, Any]
    overrides: dict[str, RuleOverride]
    rules: list[PolicyRule]
    sensitive: list[str]
    sandbox: dict[str, Any]  # [sandbox]: read_credentials, allowed_domains (setup/sandbox.py)
    builtin: dict[str, BuiltinRule]
    sources: dict[str, str]


class VerdictFacts(TypedDict, total=False):
    """What a verdict found (:attr:`smllm.gate.Verdict.facts`), stamped on the intent."""

    rule_source: str
    findings: list[dict[str, str]]  # {decision, rule, source, reason[, path]}
    mode: str
    authority: str
    scripts: dict[str, str]  # script path -> digest of what was analysed
    smllm_verdict: str  # the policy's own verdict when smllm deferred to the host
    grant: str  # the workspace amendment that allowed the call
    grant_mismatch: dict[str, Any]  # {id, changed}: a grant of this call that no longer covers it
    known_safe: bool  # the analysis proves the call changes nothing
    confined_to: str  # "temp" | "workspace": the files it changes are all there
    targets: list[dict[str, str | None]]  # {effect, path, by}: what the call changes
    targets_omitted: int  # targets past the cap


class Grant(TypedDict):
    """A workspace amendment (``policy-grants.json``)."""

    id: str
    workspace: str
    tool_name: str
    match: str
    granted_by: str
    session_id: str
    pending_action_id: str
    created_at: str
    revoked_at: str | None
    # and what it pins beside ``match``, absent from grants made before they existed:
    # ``scripts`` (script path -> the digest its reviewer was shown) and ``findings`` (the
    # policy's reasons it was escalated for); see smllm.gate.grants


# --------------------------------------------------------------------- the journal


class Record(TypedDict, total=False):
    """One journal line read back (the envelope; ``hash`` last). ``payload`` is
    ``{"event": {"kind": …}}`` for an event, ``{"kind": …, "record": {…}}`` for a fact."""

    sequence: int
    recorded_at: str
    record_type: Literal["event", "fact"]
    durability: Literal["durable", "live_only"]
    payload_type: str | None
    payload: dict[str, Any]
    id: str
    causation_id: str | None
    v: int
    skipped: int
    prev: str
    hash: str


class OpenIntent(TypedDict, total=False):
    """A tool call whose effect started and has no terminal record yet (by tool_use_id)."""

    seq: int
    key: str | None
    operation: str | None
    input: Any
    tool_name: str
    decision: str
    pending: str | None
    scripts: dict[str, str] | None
    prompted: bool
    host: bool  # Claude Code decides it (journal/hostcall.py): no effect.started yet
    ran: dict[str, Any]  # PostToolUse's observation of such a call, until it closes


class UnknownEffect(TypedDict, total=False):
    """An intent found in flight at a resume: its outcome is unknown until reconciled."""

    sequence: int | None
    tool_use_id: str
    operation: str | None
    idempotency_key: str | None
    input: Any
    stream: str


class TranscriptCursor(TypedDict, total=False):
    """Where transcript ingestion stopped, and what it holds back until complete."""

    path: str
    offset: int
    pending: dict[str, dict[str, Any]]
    results: dict[str, dict[str, Any]]
    emitted: dict[str, int]  # message id -> its model.call records (a list before parts)
    lines: list[str]  # uuids of the assistant lines read last
    tools: list[str]  # the tool uses read last
    missed: int  # PreToolUse waits in a row that ended without their tool use


class SessionState(TypedDict, total=False):
    """``state.json`` beside a log: a cache of facts the log holds (see journal.sidecar)."""

    open: bool
    started_at_ms: int
    turns: int
    open_intents: dict[str, OpenIntent]
    unknown: dict[str, UnknownEffect]
    transcript: TranscriptCursor
    closed_calls: list[dict[str, Any]]  # host-decided calls closed last (journal/hostcall)
    rollout: dict[str, Any]  # Codex's rollout file: path, offset, model, the open call
    copilot_events: dict[str, Any]  # Copilot's events.jsonl: path, offset, model, usage
    gemini_chat: dict[str, Any]  # Gemini CLI's chat file: path, offset, model calls seen
    # not in the log (a rebuilt sidecar has neither: the check of folders made in the
    # session is then off until the next SessionStart): the session's start on the real
    # clock, and the folders its file tools were to create (gate/protect.py)
    started_ns: int
    host_dirs: list[str]


SessionKey = Literal["open", "started_at_ms", "turns", "open_intents", "unknown", "transcript",
                     "closed_calls", "rollout", "copilot_events", "gemini_chat", "started_ns",
                     "host_dirs"]


# --------------------------------------------------------------------- state machines


class ParamSpec(TypedDict):
    """One parameter of a machine event."""

    required: bool
    pattern: str | None
    enum: list[str] | None
    description: str


class EventSpec(TypedDict):
    """A machine event: ``meta.events.<name>``, compiled."""

    description: str
    params: dict[str, ParamSpec]


class Transition(TypedDict):
    """One transition of a state on an event, compiled (``target`` None: stay)."""

    target: str | None
    setRef: bool
    guard: dict[str, Any] | None
    reenter: bool
    description: str | None


class ToolRules(TypedDict):
    """A state's ``meta.tools``: allow (None: everything) and deny patterns."""

    allow: list[str] | None
    deny: list[str]


class MachineState(TypedDict):
    """One state of a compiled machine."""

    final: bool
    entryPoint: bool
    prompt: str | None
    description: str | None
    tools: ToolRules | None
    on: dict[str, list[Transition]]


class InstanceRef(TypedDict):
    """``meta.instance.ref``: the parameter that names an instance."""

    param: str
    pattern: str | None
    description: str


class CompiledMachine(TypedDict):
    """A machine file, validated and compiled (``machine.loader.load``; cached as JSON)."""

    id: str
    description: str | None
    file: str
    initial: str
    kind: str
    ref: InstanceRef | None
    events: dict[str, EventSpec]
    states: dict[str, MachineState]


#: machine id -> compiled machine: the machines a session may run
Machines = dict[str, CompiledMachine]

#: One line of an smllm session's audit (seed 001's fields, in its order).
AuditLine = TypedDict("AuditLine", {
    "at": int,
    "session": str,
    "source": str,
    "call": str,
    "event": str | None,
    "machine": str | None,
    "instance": str | None,
    "from": str | None,
    "to": str | None,
    "params": dict[str, str],
    "offered": list[Any],
    "outcome": str,
    "reason": str | None,
    "trace": list[dict[str, Any]],
    "binding": dict[str, Any] | None,
    "reply": str | None,
})
