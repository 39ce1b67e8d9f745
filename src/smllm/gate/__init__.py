"""The approval gate. This package's own module is the decision: :func:`decide` is the
whole verdict on one tool call (:class:`Verdict`), in this order: the crash hold, smllm's
self-protection, the state machine's tool rules, then the policy, its mode and the
workspace grants — over one analysis of the call (:mod:`smllm.gate.analysis`).

``review`` is the gate's place in PreToolUse (:func:`smllm.gate.review.evaluate`: the
decision, then the review chain, journaled); ``policy`` reads and compiles the policy files
and assesses a call statically; ``shell`` analyses Bash commands; ``reviewers`` are the LLM
judge and the command reviewer (the user is Claude Code's own prompt); ``grants`` are the
workspace amendments.

:func:`decide` is pure in the sense that matters: it writes no journal and consults no
reviewer, so ``smllm policy explain`` and the PreToolUse hook call the very same
function and cannot disagree. It returns what smllm answers Claude Code (``decision``)
and what the journal stamps on the intent (``policy_decision``, e.g. ``allow:policy``),
with the rule, the reason and the facts found. A call the policy escalates carries the
reviewer chain still to consult (:attr:`Verdict.review`), which :mod:`smllm.gate.review`
runs and journals. When the chain starts with the ``user`` the verdict already is the
hook's answer (``ask:user``: Claude Code's own prompt decides).

Authority (product §6): under ``authority = "guard"`` (default) an allow of the policy is
an abstention (``defer:host``) so Claude Code's own permissions decide, unless the host
runs in ``bypassPermissions``; ``authority = "gate"`` makes the policy's allows
authoritative (``allow:policy``). A machine reviewer's answer takes effect under either
authority (:func:`reviewed`): configuring ``llm_judge`` or ``command`` is the user's
opt-in for it to approve the calls it reviews, so its approval answers ``allow``
(``allow:llm_judge``, ``allow:command``), and so does a workspace grant it made. Claude
Code's own deny rules still win over that allow. ``mode = "yolo"`` answers nothing and
stamps ``allow:yolo``.
"""

from __future__ import annotations

from smllm.base import catalogue
from smllm.gate import analysis
from smllm.gate.policy.assess import assess, sensitive_paths

TYPE_CHECKING = False  # typing costs milliseconds on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import CompiledPolicy, VerdictFacts
    from smllm.gate.protect import Fresh

    HostDecision = Literal["allow", "ask", "deny", "abstain"]


class Escalation:
    """A call the policy escalates: the reviewers to ask, in order, and what they are shown
    (``scripts``: each script file the command runs, as ``(path, digest, text)`` of what
    the analysis read; a grant the reviewer makes pins their digests and the findings)."""

    __slots__ = ("findings", "reason", "reviewers", "rule", "scripts", "source")

    def __init__(self, reviewers: tuple[str, ...], rule: str, source: str, reason: str,  # noqa: PLR0917 - a record
                 findings: tuple[str, ...],
                 scripts: tuple[tuple[str, str, str], ...] = ()) -> None:
        self.reviewers = reviewers
        self.rule = rule
        self.source = source
        self.reason = reason
        self.findings = findings
        self.scripts = scripts


class Verdict:
    """What smllm answers the host, and what the intent is stamped with."""

    __slots__ = ("decision", "facts", "pending_action_id", "policy_decision", "reason",
                 "review", "rule")

    def __init__(  # noqa: PLR0917 - a record
        self,
        decision: HostDecision,
        policy_decision: str,
        reason: str,
        rule: str | None = None,
        pending_action_id: str | None = None,
        facts: VerdictFacts | None = None,
        review: Escalation | None = None,
    ) -> None:
        self.decision: HostDecision = decision
        self.policy_decision = policy_decision
        self.reason = reason
        self.rule = rule
        self.pending_action_id = pending_action_id
        self.facts: VerdictFacts = facts if facts is not None else {}
        self.review = review

    def __repr__(self) -> str:
        return (f"Verdict({self.decision!r}, {self.policy_decision!r}, {self.reason!r}, "
                f"rule={self.rule!r})")


def allowed(reason: str, rule: str | None, authoritative: bool, facts: VerdictFacts
            ) -> Verdict:
    """An allow of the policy (``allow:policy``), or under ``authority = "guard"`` an
    abstention that leaves the call to Claude Code's own permissions."""
    if authoritative:
        return Verdict("allow", "allow:policy", reason, rule, facts=facts)
    facts = {**facts, "smllm_verdict": "allow:policy"}
    return Verdict(
        "abstain",
        "defer:host",
        f"{reason}; Claude Code's own permissions decide (authority = guard)",
        rule,
        facts=facts,
    )


#: what ``approve = "known-safe"`` approves, by the analysis' scope of the call
_PROVED = {"read": "read-only", "temp": "confined to the temp folders (scratch)",
           "workspace": "confined to the workspace and scratch"}


def known_safe_scope(analysed: analysis.CallAnalysis, call: ToolCall) -> str | None:
    """The scope (:meth:`analysis.CallAnalysis.scope`) by which ``approve = "known-safe"``
    approves ``call``, or None: read-only calls always; scratch work where Claude Code
    would otherwise prompt for it (its ``default`` and ``acceptEdits`` modes: not ``plan``,
    where nothing is to change, nor ``dontAsk``, which refuses what is not pre-approved);
    workspace writes only where Claude Code already lets the agent edit the workspace
    without a prompt (``acceptEdits``)."""
    scope = analysed.scope(call)
    if scope == "temp" and call.permission_mode not in ("default", "acceptEdits"):
        return None
    if scope == "workspace" and call.permission_mode != "acceptEdits":
        return None
    return scope


def approved_known_safe(reason: str, compiled: CompiledPolicy, facts: VerdictFacts,
                        scope: str = "read") -> Verdict:
    """``approve = "known-safe"`` under the guard authority: a call the analysis proves
    read-only, or confined to scratch (and, in ``acceptEdits``, the workspace), is
    answered ``allow`` (``allow:policy``, rule ``policy.known-safe``), so Claude Code does
    not prompt for it; Claude Code's own deny rules still apply."""
    facts = {**facts, "rule_source": compiled["sources"].get("approve", "default"),
             "known_safe": scope == "read"}
    if scope != "read":
        facts["confined_to"] = scope
    return Verdict("allow", "allow:policy",
                   f"{reason}; the analysis proves it {_PROVED[scope]}, and the policy "
                   "approves such calls itself (approve = \"known-safe\")",
                   "policy.known-safe", facts=facts)


#: why smllm answers allow to ``smllm reconcile`` in any mode
AGENT_RECONCILE = ("smllm lets the agent record the verified outcome of an effect a crash "
                   "left unknown: the journal keeps it as the agent's claim, with its evidence")


class World:
    """What a decision consults besides the call: the compiled policy, the home folder, and
    the session's crash hold and state machine when a hook decides (``smllm policy
    explain|test`` have no session: neither applies). ``held(call)`` is why the call must
    wait for reconciliation; ``machine_rule(call)`` the state's ``(decision, reason)``;
    ``tripped`` why every call is denied while a tripwire violation is open
    (:mod:`smllm.tripwire`); ``fresh()`` the session's start and the folders its file tools
    made (:class:`smllm.gate.protect.Fresh`), for links and folders made in it."""

    __slots__ = ("compiled", "fresh", "held", "home", "machine_rule", "tripped")

    def __init__(
        self,
        compiled: CompiledPolicy,
        *,
        home: str | None = None,
        held: Callable[[ToolCall], str | None] | None = None,
        machine_rule: Callable[[ToolCall], tuple[str, str] | None] | None = None,
        tripped: str | None = None,
        fresh: Callable[[], Fresh | None] | None = None,
    ) -> None:
        self.compiled = compiled
        self.home = home
        self.held = held
        self.machine_rule = machine_rule
        self.tripped = tripped
        self.fresh = fresh


def _fail_closed(what: str, exc: Exception, rule: str) -> Verdict:
    return Verdict("deny", "deny:policy", f"smllm could not {what} and denies it (fail closed): "
                   f"{type(exc).__name__}: {exc}", rule=rule)


def _machine(call: ToolCall, world: World) -> Verdict | None:
    found = world.machine_rule(call) if world.machine_rule is not None else None
    if found is None:
        return None
    decision, reason = found
    if decision == "allow":  # smllm's own firing (smllm.machine.hostview.tool_rule)
        return Verdict("allow", "allow:policy", reason, rule="machine.fire")
    return Verdict("deny" if decision == "deny" else "ask", f"{decision}:machine", reason,
                   rule="machine.tools")


#: the kinds of call that can change smllm's protected set (the others only read)
CHANGING = frozenset({catalogue.SHELL, catalogue.WRITE, catalogue.MCP, catalogue.OTHER})


def _analysed(call: ToolCall, compiled: CompiledPolicy, home: str | None,
              fresh: Callable[[], Fresh | None] | None = None,
              ) -> tuple[analysis.CallAnalysis, str | None]:
    """The call's one analysis, and why self-protection denies it (None: it does not).

    A call of a kind that only reads cannot change the protected set: it is not checked
    against it, and the sensitive set is computed only if its analysis asks (a Read whose
    path may name a secret)."""
    project = call.project
    if call.kind not in CHANGING:
        hidden = hidden_read(call) if call.kind == catalogue.READ else None
        return analysis.of(call, lambda: _sensitive(compiled, project, None), home), hidden
    from smllm.base import protected  # noqa: PLC0415 - calls that can change something only
    from smllm.gate import protect  # noqa: PLC0415 - calls that can change something only

    guard = protected.protected_set(project)
    analysed = analysis.of(call, _sensitive(compiled, project, guard), home)
    session = fresh() if fresh is not None and call.kind != catalogue.SHELL else None
    return analysed, protect.check(call, analysed, guard, session)


#: the deny of a read tool that names what the sandbox hides from the agent's commands
HIDDEN_READ = ("smllm denies {tool} of {path}: smllm's journals, its key and locks, and "
               "Claude Code's transcripts are not for the agent to read (the sandbox hides "
               "them from your commands too); the session you run in: `smllm ledger --last`, "
               "`smllm verify`, `smllm export --last --out FILE`")


def hidden_read(call: ToolCall) -> str | None:
    """Why a read tool of Claude Code's (Read, Grep, Glob, ...: it runs outside the sandbox)
    is denied, or None: it names, directly or through a link, what the sandbox hides from
    the agent's commands (:func:`smllm.base.protected.unreadable`), or Grep searches a
    folder that holds it. Cheap for every other read: one ``realpath`` and three prefix
    tests before the protected set is loaded."""
    path = catalogue.path_of(call.tool, call.input)
    if not path:
        return None
    from smllm.base import osfast as os  # noqa: PLC0415 - loaded on every hook's path already
    from smllm.base import paths  # noqa: PLC0415 - loaded on every hook's path already

    full = os.path.realpath(os.path.join(call.cwd, os.path.expanduser(path)))
    above = full.rstrip(os.sep) + os.sep
    roots = (paths.data_root(), paths.state_root(), paths.claude_root())
    if not any(full == r or full.startswith(r + os.sep) or r.startswith(above) for r in roots):
        return None
    from smllm.base import protected  # noqa: PLC0415 - a read near smllm's folders only

    for hidden in protected.unreadable():
        real = os.path.realpath(hidden)
        inside = full == real or full.startswith(real + os.sep)
        if inside or (call.tool == "Grep" and real.startswith(above)):
            return HIDDEN_READ.format(tool=call.tool, path=path)
    return None


def _sensitive(compiled: CompiledPolicy, project: str,
               guard: tuple[str, ...] | None) -> tuple[str, ...]:
    """The analysis' sensitive set: the protected set, and the policy's ``sensitive``
    paths unless the policy does not compile."""
    if compiled.get("error"):
        if guard is not None:
            return guard
        from smllm.base import protected  # noqa: PLC0415 - see _analysed

        return protected.protected_set(project)
    return sensitive_paths(compiled, project, guard)


def _own_reconcile(call: ToolCall) -> bool:
    from smllm.gate import protect  # noqa: PLC0415 - loaded for shell calls already

    return protect.agent_reconcile(call)


def decide(call: ToolCall, world: World) -> Verdict:
    """The gate's whole verdict on ``call``, before any reviewer is consulted: the crash
    hold, self-protection (in every mode), the state's tool rules, then the policy. The
    call is analysed once; what the ledger needs of that analysis is in the facts. An open
    tripwire violation comes first: nothing runs until a person has answered it."""
    if world.tripped:
        return Verdict("deny", "deny:policy", world.tripped, rule="tripwire.violation")
    held = world.held(call) if world.held is not None else None
    if held:
        return Verdict("deny", "deny:reconcile", held, rule="reconcile.unknown-effect")
    compiled = world.compiled
    try:
        analysed, guarded = _analysed(call, compiled, world.home, world.fresh)
    except Exception as exc:
        return _fail_closed("check this call against its protected set", exc, "protect.self")
    stamp = analysis.stamped(call, analysed)
    if guarded is not None:  # self-protection: before any policy, in every mode
        return Verdict("deny", "deny:policy", guarded, rule="protect.self", facts=stamp)
    if call.kind == catalogue.SHELL and _own_reconcile(call):  # finish a recovery alone
        return Verdict("allow", "allow:policy", AGENT_RECONCILE, rule="reconcile.agent-claim",
                       facts=stamp)
    try:
        verdict = _machine(call, world) or _policy(call, analysed, compiled)
    except Exception as exc:
        verdict = _fail_closed("evaluate this call", exc, "gate.internal-error")
    verdict.facts.update(stamp)
    return verdict


def is_authoritative(compiled: CompiledPolicy, permission_mode: str | None) -> bool:
    """Whether smllm's allows are answers (``authority = "gate"``, or the host bypasses its
    own permissions) rather than abstentions."""
    return compiled["authority"] == "gate" or permission_mode == "bypassPermissions"


def ask_user(review: Escalation, pending: str | None, facts: VerdictFacts) -> Verdict:
    """The chain reached the ``user``: smllm answers ``ask`` and Claude Code's prompt decides."""
    return Verdict("ask", "ask:user",
                   f"smllm escalates this call for your review: {review.reason} "
                   f"(rule {review.rule})",
                   review.rule, pending, facts, review)


def invalid_policy(error: str) -> Verdict:
    """Every call is denied while the policy in effect does not compile."""
    return Verdict(
        "deny",
        "deny:policy",
        f"smllm's approval policy is invalid, so every call is denied (fail closed): {error}",
        rule="policy.invalid",
    )


def _policy(  # noqa: PLR0911 - one return per kind of outcome
    call: ToolCall, analysed: analysis.CallAnalysis, compiled: CompiledPolicy,
) -> Verdict:
    """The policy's verdict on ``call``: its mode, rules, the analysis' findings, grants."""
    project, tool, tool_input = call.project, call.tool, call.input
    error = compiled.get("error")
    if error:
        return invalid_policy(str(error))
    a = assess(call, analysed, compiled)
    facts: VerdictFacts = {
        "rule_source": a.source,
        "findings": a.facts()[:20],
        "mode": compiled["mode"],
        "authority": compiled["authority"],
    }
    if a.scripts:
        facts["scripts"] = dict(a.scripts)
    authoritative = is_authoritative(compiled, call.permission_mode)
    if compiled["mode"] == "yolo":
        facts["rule_source"] = compiled["sources"]["mode"]
        return Verdict("abstain", "allow:yolo",
                       f"yolo mode: no approvals (analysis: {a.decision}, {a.reason})",
                       rule="mode.yolo", facts=facts)
    if a.decision == "deny":
        return Verdict("deny", "deny:policy",
                       f"smllm policy denies this call: {a.reason} (rule {a.rule}, {a.source})",
                       rule=a.rule, facts=facts)
    if a.decision == "allow":
        scope = None if authoritative or compiled.get("approve") != "known-safe" else \
            known_safe_scope(analysed, call)
        if scope is not None:
            return approved_known_safe(a.reason, compiled, facts, scope)
        return allowed(a.reason, a.rule, authoritative, facts)
    from smllm.gate import grants  # noqa: PLC0415 - json and pathlib: escalated calls only

    findings = tuple(i.reason for i in a.items)
    grant, stale = grants.find(project, tool, tool_input, grants.Pins(a.scripts, findings))
    if grant is not None:
        # a grant is a machine reviewer's "always allow in this workspace": it takes effect
        # as that reviewer's own approval does, under either authority (reviewed())
        facts["grant"] = grant["id"]
        return allowed(f"allowed by the workspace amendment {grant['id']} "
                       f"(granted by {grant.get('granted_by')})",
                       f"amendment:{grant['id']}", True, facts)
    reason = a.reason
    if stale is not None:  # reviewed again, saying which grant no longer covers it and why
        facts["grant_mismatch"] = stale.as_json()
        reason = f"{reason}; {stale.text()}"
    chain = tuple(compiled["reviewers"])
    sources = dict(analysed.shell.sources) if analysed.shell is not None else {}
    review = Escalation(chain, a.rule, a.source, reason, findings, tuple(
        (path, digest, sources.get(path, "")) for path, digest in sorted(a.scripts.items())))
    if chain and chain[0] == "user":
        return ask_user(review, None, facts)
    if not chain:
        return no_reviewer_decided(review, [], None, facts)
    return Verdict("ask", "review:" + ",".join(chain),
                   f"smllm escalates this call to its reviewers ({', '.join(chain)}): "
                   f"{reason} (rule {a.rule})",
                   a.rule, None, facts, review)


def reviewed(review: Escalation, reviewer: str, approved: bool, reason: str,  # noqa: PLR0917
             pending: str | None, facts: VerdictFacts) -> Verdict:
    """A machine reviewer's answer (``llm_judge``, ``command``), which takes effect under
    either authority: configuring the reviewer is the user's opt-in for it to approve the
    calls it reviews. An approval answers ``allow`` (``allow:<reviewer>``; Claude Code's
    own deny rules still win over it), a rejection ``deny`` (``deny:<reviewer>``)."""
    if approved:
        return Verdict("allow", f"allow:{reviewer}",
                       f"approved by the {reviewer} reviewer: {reason}", review.rule, pending,
                       facts)
    return Verdict("deny", f"deny:{reviewer}", f"rejected by the {reviewer} reviewer: {reason}",
                   review.rule, pending, facts, review)


def no_reviewer_decided(review: Escalation, failures: list[dict[str, Any]],
                        pending: str | None, facts: VerdictFacts) -> Verdict:
    """The chain ended without an answer: denied (fail closed)."""
    errors = "; ".join(f"{f['kind']}: {f['error']}" for f in failures) or "no reviewer configured"
    return Verdict(
        "deny",
        "deny:policy",
        f"smllm escalated this call ({review.reason}) but no "
        f"reviewer could decide ({errors}); denied (fail closed)",
        "reviewer.fallback",
        pending,
        facts,
        review,
    )
