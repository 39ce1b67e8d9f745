"""Static assessment of one tool call against the compiled policy (no journal, no reviewer).

:func:`assess` returns the decision (``allow``, ``ask`` or ``deny``), the rule that made
it with its ``file:line`` source, the reason, and the facts the analysis found. Order:
the analysis of the call (shell analysis for Bash, paths for file tools, credential
stores for Read/Grep, secrets in web requests, what an MCP tool does), then the policy's
rules (a matching ``command`` rule replaces the findings for that simple command;
tool-only rules add a floor), then the mode.

``Assessment.targets`` lists every write, delete, move, link and chmod the analysis
recognised, each with its resolved path (None: only known at run time), so that one
check (the protected set) can apply to all of them.
"""

from __future__ import annotations

from smllm.base import catalogue as tools
from smllm.base import credentials
from smllm.base import osfast as os

TYPE_CHECKING = False  # typing, dataclasses and pathlib cost milliseconds per tool call
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import CompiledPolicy
    from smllm.gate.analysis import CallAnalysis
    from smllm.gate.shell import Decision, Finding


class Item:
    """One reason for a decision: a finding or a matching rule (``path``: the resolved
    path a write or delete finding is about)."""

    __slots__ = ("decision", "path", "reason", "rule", "source")

    def __init__(self, decision: Decision, rule: str, source: str, reason: str,
                 path: str | None = None) -> None:
        self.decision: Decision = decision
        self.rule = rule
        self.source = source
        self.reason = reason
        self.path = path


class Assessment:
    """The static decision on one call, the rule that made it, and every reason found."""

    __slots__ = (
        "commands",
        "decision",
        "explicit_allow",
        "items",
        "known_safe",
        "reason",
        "rule",
        "scripts",
        "source",
        "targets",
    )

    def __init__(  # noqa: PLR0917 - a record
        self,
        decision: Decision,
        rule: str,
        source: str,
        reason: str,
        known_safe: bool,
        explicit_allow: bool,
        items: tuple[Item, ...] = (),
        commands: tuple[dict[str, Any], ...] = (),
        scripts: dict[str, str] | None = None,
    ) -> None:
        self.decision: Decision = decision
        self.scripts = scripts or {}  # script path -> digest of what was analysed
        self.rule = rule
        self.source = source
        self.reason = reason
        self.known_safe = known_safe
        self.explicit_allow = explicit_allow
        self.items = items
        self.commands = commands
        self.targets: list[dict[str, str | None]] = []  # {effect, path, by}

    def facts(self) -> list[dict[str, str]]:
        out = []
        for i in self.items:
            fact = {"decision": i.decision, "rule": i.rule, "source": i.source,
                    "reason": i.reason}
            if i.path is not None:
                fact["path"] = i.path
            out.append(fact)
        return out


def _glob(text: str, pattern: str) -> bool:
    import fnmatch  # noqa: PLC0415 - only when the policy has rules

    return fnmatch.fnmatchcase(text, pattern)


def _tool_match(pattern: str, tool: str) -> bool:
    return any(_glob(tool, p.strip()) for p in pattern.split("|"))


def _builtin(compiled: CompiledPolicy, rule: str, decision: Decision) -> tuple[Decision, str]:
    over = compiled.get("overrides", {}).get(rule)
    if over:
        return over["decision"], over["source"]
    builtin = compiled.get("builtin", {}).get(rule)
    return decision, builtin["source"] if builtin else "built-in"


def _items(compiled: CompiledPolicy, findings: Iterable[Finding]) -> list[Item]:
    """The analysis' findings as reasons, each with the decision the policy gives its rule."""
    out = []
    for f in findings:
        d, src = _builtin(compiled, f.rule, f.decision)
        out.append(Item(d, f.rule, src, f.reason, f.path))
    return out


def sensitive_paths(compiled: CompiledPolicy, project: str,
                    guard: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Paths no call may write without review: smllm's protected set (``guard``, when the
    caller has it already), plus the policy's ``sensitive`` list
    (:func:`smllm.base.protected.with_policy`)."""
    from smllm.base import protected  # noqa: PLC0415 - a read-only call rarely needs it

    return protected.with_policy(project, compiled.get("sensitive", []), guard)


def assess(call: ToolCall, analysed: CallAnalysis, compiled: CompiledPolicy) -> Assessment:
    """The static decision on ``call``, given its one analysis."""
    items: list[Item] = []
    commands: list[dict[str, Any]] = []
    known_safe = tools.read_only(call.tool)
    explicit = False
    kind = call.kind
    if kind == tools.SHELL:
        known_safe, explicit = _bash(call, analysed, compiled, items, commands)
    elif kind == tools.WRITE:
        items += _file_tool(call, analysed, compiled)
    elif kind == tools.READ:
        items += _read_tool(call, analysed, compiled)
    elif kind == tools.WEB:
        items += _web_tool(call.tool, call.input, compiled)
    elif kind == tools.MCP and analysed.judgement is not None:
        items += _items(compiled, analysed.judgement.findings)
    ruled, allowed = _tool_rules(call, compiled)
    items += ruled
    out = _conclude(items, commands, known_safe, explicit or allowed, compiled)
    out.scripts = dict(analysed.shell.scripts) if analysed.shell is not None else {}
    out.targets = analysed.targets()
    return out


def _tool_rules(call: ToolCall, compiled: CompiledPolicy) -> tuple[list[Item], bool]:
    """The policy's tool and path rules that match ``call`` (command rules apply per simple
    command, in :func:`_bash`), and whether one of them allows it explicitly."""
    path = tools.path_of(call.tool, call.input)
    items: list[Item] = []
    explicit = False
    for r in compiled.get("rules", []):
        if "tool" in r and not _tool_match(r["tool"], call.tool):
            continue
        if "command" in r:
            continue  # applied per simple command in _bash
        if "path" in r and not (path and _path_match(r["path"], path, call.project)):
            continue
        if "tool" not in r and "path" not in r:
            continue
        explicit = explicit or r["decision"] == "allow"
        if r["decision"] != "allow" or "path" in r:
            items.append(Item(r["decision"], r["id"], r["source"],
                              r.get("reason") or f"policy rule {r['id']}"))
    return items, explicit


def _path_match(pattern: str, path: str, project: str) -> bool:
    rel = os.path.relpath(path, project) if os.path.isabs(path) else path
    return _glob(path, pattern) or _glob(rel, pattern)


def _bash(call: ToolCall, analysed: CallAnalysis, compiled: CompiledPolicy,
          items: list[Item], commands: list[dict[str, Any]]) -> tuple[bool, bool]:
    analysis = analysed.shell
    if analysis is None:
        items.append(Item("ask", "shell.syntax", "built-in", "Bash call without a command"))
        return False, False
    from smllm.gate.shell import SEVERITY  # noqa: PLC0415 - Bash only

    items += _items(compiled, analysis.findings)
    cmd_rules = [
        r
        for r in compiled.get("rules", [])
        if "command" in r and _tool_match(r.get("tool", "Bash"), "Bash")
    ]
    known_safe = True
    explicit_all = bool(analysis.commands)
    for report in analysis.commands:
        matched = [r for r in cmd_rules if _glob(report.text, r["command"])]
        entry: dict[str, Any] = {"argv": list(report.argv), "findings": []}
        if matched:
            rule = max(matched, key=lambda r: SEVERITY[r["decision"]])
            items.append(
                Item(
                    rule["decision"],
                    rule["id"],
                    rule["source"],
                    rule.get("reason") or f"policy rule {rule['id']} matches {report.text!r}",
                )
            )
            entry["rule"] = rule["id"]
            explicit_all = explicit_all and rule["decision"] == "allow"
        else:
            explicit_all = False
            known_safe = known_safe and report.known_safe
            for f in report.findings:
                d, src = _builtin(compiled, f.rule, f.decision)
                items.append(Item(d, f.rule, src, f.reason, f.path))
                entry["findings"].append({"rule": f.rule, "decision": d, "reason": f.reason})
        commands.append(entry)
    return known_safe and not analysis.findings, explicit_all


def _file_tool(call: ToolCall, analysed: CallAnalysis, compiled: CompiledPolicy
               ) -> list[Item]:
    tool_name, tool_input, project = call.tool, call.input, call.project
    path = tools.path_of(tool_name, tool_input)
    if path is None or analysed.file is None:
        return [Item("ask", "file.outside-workspace", "built-in", f"{tool_name} without a path")]
    ctx = analysed.context(call)
    _, full, real = analysed.file
    where = ctx.where_linked(full, real)  # a link into ~/.ssh is ~/.ssh
    out: list[Item] = []
    if where in ("sensitive", "critical", "device"):
        d, src = _builtin(compiled, "file.sensitive", "deny")
        out.append(Item(d, "file.sensitive", src, f"{tool_name} of the protected path {path}"))
    elif where == "outside":
        d, src = _builtin(compiled, "file.outside-workspace", "ask")
        out.append(
            Item(
                d,
                "file.outside-workspace",
                src,
                f"{tool_name} of {path}, outside the workspace {project}",
            )
        )
    if (
        tool_name == "Write"
        and tool_input.get("content") == ""
        and os.path.isfile(full)
        and os.path.getsize(full) > 0
    ):
        d, src = _builtin(compiled, "file.empty-write", "ask")
        out.append(Item(d, "file.empty-write", src, f"Write empties the existing file {path}"))
    return out


def _read_tool(call: ToolCall, analysed: CallAnalysis, compiled: CompiledPolicy
               ) -> list[Item]:
    """Read/Grep/Glob of a credential store (or Grep through a folder holding them)."""
    tool_name, home = call.tool, analysed.home
    path = tools.path_of(tool_name, call.input)
    grep_up = tool_name == "Grep" and path is not None and (
        home.startswith(path.rstrip("/") + "/") or path.rstrip("/") in (home.rstrip("/"), "~"))
    if path is None or (not any(h in path for h in credentials.HINTS) and not grep_up):
        return []  # the common case: nothing that could name a secret, nothing imported
    ctx = analysed.context(call)
    text = home + path[1:] if path.startswith("~") else path
    full = ctx.follow(ctx.resolve(text) or text)
    if ctx.secret_kind(full) == "store" or (tool_name == "Grep" and ctx.holds_secrets(full)):
        d, src = _builtin(compiled, "exfil.read-credentials", "ask")
        what = "searches" if tool_name == "Grep" else "reads"
        return [Item(d, "exfil.read-credentials", src,
                     f"{tool_name} {what} the credential store {path}", full)]
    return []


def _web_tool(tool_name: str, tool_input: dict[str, Any], compiled: CompiledPolicy
              ) -> list[Item]:
    """WebFetch/WebSearch carrying a secret-looking value in the URL, query or prompt."""
    from smllm.gate.mcp import request_secrets  # noqa: PLC0415 - web calls only

    texts = [v for k in ("url", "query", "prompt") if isinstance(v := tool_input.get(k), str)]
    return _items(compiled, request_secrets(tool_name, texts))


def _worst(decisions: list[Decision]) -> Decision:
    for d in ("deny", "ask"):
        if d in decisions:
            return d
    return "allow"


def _conclude(
    items: list[Item],
    commands: list[dict[str, Any]],
    known_safe: bool,
    explicit: bool,
    compiled: CompiledPolicy,
) -> Assessment:
    decision = _worst([i.decision for i in items])
    mode = compiled.get("mode", "on-request")
    msrc = str(compiled.get("sources", {}).get("mode", "default"))
    if (
        decision == "allow"
        and not known_safe
        and not explicit
        and mode in ("untrusted", "deny-unmatched")
    ):
        rule = f"mode.{mode}"
        d, _ = _builtin(compiled, rule, "ask" if mode == "untrusted" else "deny")
        items.append(Item(d, rule, msrc, f"{mode} mode: this call is not known to be read-only"))
        decision = d
    if decision == "ask" and mode == "deny-unmatched":
        items.append(
            Item(
                "deny", "mode.deny-unmatched", msrc, "deny-unmatched mode: escalations are denied"
            )
        )
        decision = "deny"
    top = next((i for i in items if i.decision == decision), None)
    if top is None:
        top = Item("allow", "default.allow", "built-in", "ordinary call: no risk found")
    return Assessment(
        decision,
        top.rule,
        top.source,
        top.reason,
        known_safe,
        explicit,
        tuple(items),
        tuple(commands),
    )
