"""``smllm policy``: explain a decision, list and revoke grants, check the policy files, and
test the policy against a corpus of commands."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from smllm import journal
from smllm.base import paths
from smllm.base.catalogue import ToolCall
from smllm.base.errors import PolicyError, UsageError
from smllm.base.shapes import VerdictFacts
from smllm.commands import _output
from smllm.gate import (
    Escalation,
    Verdict,
    World,
    ask_user,
    decide,
    grants,
    no_reviewer_decided,
    policy,
    reviewed,
)
from smllm.journal import records

#: Claude Code's permission modes (claude-code-contract.md: ``permission_mode``)
PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions")
#: the hook's answer to Claude Code, as explain prints it
ANSWERS = {"allow": "allow", "ask": "ask", "deny": "deny", "abstain": "none"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    ex = sub.add_parser("explain", help="the decision on a command or tool input, and why",
                        description="Print what the PreToolUse hook would decide on this call "
                        "(the policy_decision it journals, e.g. allow:policy, defer:host, "
                        "ask:user, deny:policy, allow:yolo, and its answer to Claude Code), "
                        "the rule and its source, the reason, and the facts the analysis "
                        "found.")
    ex.add_argument("--json", action="store_true", help="print one JSON object")
    ex.add_argument("--tool", default="Bash", metavar="NAME",
                    help="the tool (default Bash); for other tools give the input as JSON "
                    "or a file path")
    ex.add_argument("--cwd", default=None, metavar="DIR", help="where the call runs "
                    "(default: the current directory)")
    ex.add_argument("--permission-mode", default="default", choices=PERMISSION_MODES,
                    help="Claude Code's permission mode for the call (default: default); "
                    "under bypassPermissions smllm's allows are authoritative")
    ex.add_argument("input", nargs=argparse.REMAINDER, metavar="-- COMMAND_OR_INPUT")
    gr = sub.add_parser("grants", help="list workspace amendments; --revoke ID ends one")
    gr.add_argument("--revoke", metavar="ID", help="revoke this grant")
    gr.add_argument("--all", action="store_true", help="include revoked grants")
    gr.add_argument("--json", action="store_true",
                    help="print the grants as JSON Lines, one object per grant")
    ch = sub.add_parser("check", help="validate the policy files in effect")
    ch.add_argument("--cwd", default=None, metavar="DIR", help="the project (default: cwd)")
    ch.add_argument("--json", action="store_true",
                    help="print {ok, project, files, problems} as one JSON object")
    te = sub.add_parser("test", help="run a corpus of expected<TAB>command lines; print misses",
                        description="Decide every command of FILE (lines 'expected<TAB>"
                        "command'; expected is allow, ask, deny or !allow; a line starting "
                        "with a tab continues the command above; # starts a comment) with "
                        "the policy in effect, print each miss, and exit 1 if there is one.")
    te.add_argument("file", metavar="FILE", help="the corpus file")
    te.add_argument("--cwd", default=None, metavar="DIR", help="where the commands run "
                    "(default: the current directory)")
    te.add_argument("--json", action="store_true",
                    help="print {file, total, misses} as one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.action == "explain":
        return explain(args)
    if args.action == "grants":
        return grants_cmd(args)
    if args.action == "test":
        return corpus_cmd(args)
    return check_cmd(args)


def _tool_input(tool: str, words: list[str]) -> dict[str, Any]:
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("nothing to explain", "give the command after --, e.g. "
                         "smllm policy explain -- rm -rf build")
    text = " ".join(words)
    if tool == "Bash":
        return {"command": text}
    try:
        value = json.loads(text)
    except ValueError:
        return {"file_path": text}
    if not isinstance(value, dict):
        raise UsageError(f"the input for {tool} must be a JSON object", 'e.g. '
                         '\'{"file_path": "src/app.py", "content": "..."}\'')
    return value


def explain(args: argparse.Namespace) -> int:
    """What the PreToolUse hook would decide: the same :func:`smllm.gate.decide` it calls."""
    cwd = os.path.abspath(args.cwd or os.getcwd())
    tool_input = _tool_input(args.tool, list(args.input))
    project = paths.project_root(cwd)
    compiled = policy.load(project)
    call = ToolCall(args.tool, tool_input, cwd=cwd, project=project,
                    permission_mode=args.permission_mode)
    v = decide(call, World(compiled))
    out: dict[str, Any] = {
        "decision": v.policy_decision, "answer": ANSWERS[v.decision], "rule": v.rule,
        "source": v.facts.get("rule_source") or compiled.get("error"), "reason": v.reason,
        "tool": args.tool, "permission_mode": args.permission_mode, "project": project,
    }
    if compiled.get("error"):
        _emit(args, out)
        return 1
    out.update(mode=compiled["mode"], authority=compiled["authority"],
               reviewers=compiled["reviewers"], facts=v.facts.get("findings") or [])
    if v.review is not None:
        out["escalation"] = {"rule": v.review.rule, "reason": v.review.reason,
                             "reviewers": list(v.review.reviewers),
                             "outcomes": review_outcomes(v.review, v.facts)}
    if "grant" in v.facts:
        out["grant"] = v.facts["grant"]
    if "grant_mismatch" in v.facts:  # a grant of this call that no longer covers it
        out["grant_mismatch"] = v.facts["grant_mismatch"]
    _emit(args, out)
    return 0


def _shown(v: Verdict) -> dict[str, Any]:
    return {"decision": v.policy_decision, "answer": ANSWERS[v.decision], "rule": v.rule}


def review_outcomes(review: Escalation, facts: VerdictFacts) -> list[dict[str, Any]]:
    """What the hook answers for each answer a reviewer of the chain may give (explain asks
    no reviewer): a machine reviewer's approval, rejection or failure, and the ``user``'s
    prompt, which ends the chain. Built with the very functions the hook uses."""
    out: list[dict[str, Any]] = []
    chain = review.reviewers
    for i, name in enumerate(chain):
        if name == "user":
            out.append({"reviewer": name, "delegates": _shown(ask_user(review, None, facts))})
            break
        fails: dict[str, Any] = ({"next": chain[i + 1]} if i + 1 < len(chain) else
                                 _shown(no_reviewer_decided(review, [], None, facts)))
        out.append({"reviewer": name,
                    "approves": _shown(reviewed(review, name, True, "", None, facts)),
                    "rejects": _shown(reviewed(review, name, False, "", None, facts)),
                    "fails": fails})
    return out


def _outcome_lines(outcomes: list[dict[str, Any]]) -> list[str]:
    def said(o: dict[str, Any]) -> str:
        return f"{o['decision']} (answer: {o['answer']})"

    lines = []
    for o in outcomes:
        if "delegates" in o:
            lines.append(f"review:   {o['reviewer']}: {said(o['delegates'])}, Claude Code's "
                         "own prompt decides")
            continue
        fails = o["fails"]
        then = f"the next reviewer ({fails['next']})" if "next" in fails else said(fails)
        lines.append(f"review:   {o['reviewer']} approves: {said(o['approves'])}; rejects: "
                     f"{said(o['rejects'])}; fails: {then}")
    return lines


def _emit(args: argparse.Namespace, out: dict[str, Any]) -> None:
    if args.json:
        _output.write(out)
        return
    source = f" ({out['source']})" if out["source"] else ""
    lines = [f"decision: {out['decision']} (answer: {out['answer']})",
             f"rule:     {out['rule']}{source}", f"reason:   {out['reason']}"]
    if str(out["decision"]).startswith("review:"):  # machine reviewers first: what they may do
        lines += _outcome_lines(out["escalation"]["outcomes"])
    if "mode" in out:
        lines.append(f"policy:   mode {out['mode']}, authority {out['authority']}, "
                     f"reviewers {', '.join(out['reviewers']) or '(none)'}")
    lines += [f"  {f['decision']:<5}  {f['rule']}  {f['reason']}" for f in out.get("facts", [])]
    sys.stdout.write("\n".join(lines) + "\n")


def grants_cmd(args: argparse.Namespace) -> int:
    if args.revoke:
        grant = grants.revoke(args.revoke)
        _journal_revocation(grant)
        sys.stdout.write(f"revoked {grant['id']} ({grant['tool_name']}: {grant['match']})\n")
        return 0
    items = grants.list_grants(include_revoked=args.all)
    if args.json:
        _output.write_lines(items)
        return 0
    if not items:
        sys.stdout.write("no grants\n")
        return 0
    for g in items:
        state = f", revoked {g['revoked_at']}" if g.get("revoked_at") else ""
        sys.stdout.write(f"{g['id']}  {g['workspace']}  {g['tool_name']}: {g['match']}  "
                         f"(by {g['granted_by']} at {g['created_at']}{state})\n")
    return 0


def _journal_revocation(grant: dict[str, Any]) -> None:
    """Record the revocation in the journal of the session that made the grant."""
    sid = grant.get("session_id")
    if not isinstance(sid, str):
        return
    try:
        path = journal.log_path(sid)
    except Exception:
        return
    if not Path(path).exists():
        return
    journal.append(path, [records.new("policy.amendment", action="revoked", **grant)])


def check_cmd(args: argparse.Namespace) -> int:
    project = policy.project_root(os.path.abspath(args.cwd or os.getcwd()))
    problems = policy.check(project)
    if args.json:
        _output.write({"ok": not problems, "project": str(project),
                       "files": [str(p) for p in policy.files(project)],
                       "problems": problems})
        return 1 if problems else 0
    if problems:
        raise PolicyError(problems[0])
    names = ", ".join(str(p) for p in policy.files(project)) or "no policy files (defaults)"
    sys.stdout.write(f"policy OK: {names}\n")
    return 0


#: what a corpus line may expect, and the decisions that satisfy it
EXPECTATIONS = {"allow": {"allow"}, "ask": {"ask"}, "deny": {"deny"}, "!allow": {"ask", "deny"}}


def read_corpus(path: Path) -> list[tuple[int, str, str]]:
    """(line number, expected, command) of every entry of a corpus file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the corpus {path}: {getattr(exc, 'strerror', None) or exc}",
                         "give a readable UTF-8 file of expected<TAB>command lines") from exc
    entries: list[tuple[int, str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            if not entries:
                raise PolicyError("a continuation line with no command above it",
                                  "start the file with expected<TAB>command",
                                  where=f"{path}:{number}")
            n, expected, command = entries[-1]
            entries[-1] = (n, expected, command + "\n" + line.lstrip(" \t"))
            continue
        expected, _, command = line.partition("\t") if "\t" in line else line.partition(" ")
        expected = expected.strip()
        if expected not in EXPECTATIONS:
            raise PolicyError(f"unknown expectation {expected!r}",
                              "use one of: allow, ask, deny, !allow, then a tab and the "
                              "command", where=f"{path}:{number}")
        if not command.strip():
            raise PolicyError("no command after the expectation",
                              "write expected<TAB>command", where=f"{path}:{number}")
        entries.append((number, expected, command.strip()))
    return entries


def _outcome(v: Verdict) -> str:
    """What a corpus line's expectation is checked against: ``deny``, ``ask`` (escalated:
    to Claude Code's prompt or to smllm's reviewers) or ``allow`` (smllm lets the call
    through: an allow, a deferral to Claude Code's own permissions, or yolo)."""
    return {"deny": "deny", "ask": "ask"}.get(v.decision, "allow")


def corpus_cmd(args: argparse.Namespace) -> int:
    """Every corpus command through what the PreToolUse hook decides (self-protection, then
    :func:`smllm.gate.decide`), compared with its expectation."""
    corpus = Path(args.file)
    entries = read_corpus(corpus)
    cwd = os.path.abspath(args.cwd or os.getcwd())
    project = paths.project_root(cwd)
    compiled = policy.load(project)
    if compiled.get("error"):
        raise PolicyError(str(compiled["error"]))
    world = World(compiled)
    misses: list[dict[str, Any]] = []
    for number, expected, command in entries:
        v = decide(ToolCall("Bash", {"command": command}, cwd=cwd, project=project), world)
        actual = _outcome(v)
        if actual not in EXPECTATIONS[expected]:
            misses.append({"line": number, "expected": expected, "actual": actual,
                           "decision": v.policy_decision, "command": command,
                           "rule": v.rule or "", "reason": v.reason})
    if args.json:
        _output.write({"file": str(corpus), "total": len(entries), "misses": misses})
    else:
        for m in misses:
            shown = str(m["command"]).replace("\n", "\\n")
            sys.stdout.write(f"{corpus}:{m['line']}: expected {m['expected']}, got "
                             f"{m['actual']} ({m['decision']}): {shown}\n"
                             f"    {m['rule']}: {m['reason']}\n")
        passed = len(entries) - len(misses)
        sys.stdout.write(f"{len(entries)} commands: {passed} as expected, {len(misses)} "
                         f"{'miss' if len(misses) == 1 else 'misses'}\n")
    return 1 if misses else 0
