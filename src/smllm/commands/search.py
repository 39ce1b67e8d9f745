"""``smllm search``: records and effects across sessions, from the index or the team store.

Filters that matter for audit: the record kind, the tool, the decision and the
authorizer (an intent matches on its effective authorization), the rule, a substring
of the command or path, a time range; plus the session filters of ``smllm sessions``.
``--count-by`` answers "how many, per user" (or host, project, session, tool, ...).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from smllm import index
from smllm.base.errors import UsageError
from smllm.commands import _listing, _output
from smllm.store import reader

GROUPS = ("user", "host", "folder", "session_id", "tool", "kind", "authorization", "rule")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    _listing.add_filters(parser)
    parser.add_argument("--kind", metavar="KIND",
                        help="record kind: side_effect_intent, tool_batch.effect.terminal, "
                             "approval.review, session.start, ...")
    parser.add_argument("--effects", action="store_true",
                        help="side effects only (--kind side_effect_intent), each with its "
                             "authorization and outcome")
    parser.add_argument("--tool", metavar="NAME", help="the tool: bash, edit, write, ...")
    parser.add_argument("--decision", metavar="D", help="allow, deny, ask or defer")
    parser.add_argument("--authorizer", metavar="WHO",
                        help="policy, llm_judge, user, host, command, machine, ...")
    parser.add_argument("--rule", metavar="ID", help="the policy rule that decided")
    parser.add_argument("--text", metavar="TEXT",
                        help="a substring of the command, file path, path or URL acted on, or of "
                             "what the model said (model.call)")
    parser.add_argument("--count-by", metavar="FIELD", choices=GROUPS,
                        help=f"print counts per FIELD instead of rows ({', '.join(GROUPS)})")


def run(args: argparse.Namespace) -> int:
    if args.effects and args.kind not in (None, "side_effect_intent"):
        raise UsageError("--effects and --kind name different record kinds",
                         "give one of them")
    f = _listing.filters(
        args, kind="side_effect_intent" if args.effects else args.kind, tool=args.tool,
        decision=args.decision, authorizer=args.authorizer, rule=args.rule, text=args.text)
    if args.limit is None and args.count_by is None:
        f = f.with_(limit=100)
    hits = _listing.query(_listing.store_url(args), f, index.search, reader.search)
    if args.count_by:
        counts = Counter(getattr(h, args.count_by) for h in hits)
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
        if args.json:
            _output.write_lines({args.count_by: k, "count": n} for k, n in ordered)
        else:
            for key, n in ordered:
                sys.stdout.write(f"{n:>7}  {key}\n")
        return 0
    if args.json:
        _output.write_lines(h.as_json() for h in hits)
        return 0
    for h in hits:
        auth = h.authorization or h.decision or ""
        outcome = h.outcome or ""
        sys.stdout.write(
            f"{_listing.when(h.recorded_at)}  {h.user}@{h.host}  {h.session_id[:8]} "
            f"{h.stream} #{h.sequence}  {h.kind}  {h.tool or ''}  {auth}  {outcome}  "
            f"{_listing.short(h.text, 80)}".rstrip() + "\n")
    if not hits:
        sys.stderr.write("no matching records\n")
    return 0
