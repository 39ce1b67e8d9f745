"""``smllm install [--project DIR | --user] [--local] [--harness codex|copilot|gemini]
[--dry-run] [--json]``."""

from __future__ import annotations

import argparse
import importlib
import sys

from smllm.base.errors import UsageError
from smllm.commands import _output
from smllm.setup import INSTALLS, hostile, install, sandbox


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that name a settings file (shared with ``smllm uninstall``)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR",
                       help="the project folder: DIR/.claude/settings.json (default: the cwd)")
    where.add_argument("--user", action="store_true",
                       help="the user settings: ~/.claude/settings.json")
    parser.add_argument("--local", action="store_true",
                        help="the project's git-ignored .claude/settings.local.json instead")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the change as a diff and write nothing")
    parser.add_argument("--harness", choices=("claude", *INSTALLS), default="claude",
                        help="the agent CLI: Claude Code (default), OpenAI's Codex CLI "
                             "(.codex/hooks.json, or $CODEX_HOME/hooks.json with --user, "
                             "each hook trusted in $CODEX_HOME/config.toml), GitHub Copilot "
                             "CLI (.github/hooks/smllm.json, the folder trusted in "
                             "~/.copilot/config.json; or ~/.copilot/hooks/smllm.json with "
                             "--user) or Gemini CLI (.gemini/settings.json, or "
                             "~/.gemini/settings.json with "
                             "--user)")
    _output.add_json_flag(parser, "what was done (or, with --dry-run, would be)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    box = parser.add_mutually_exclusive_group()
    box.add_argument("--no-sandbox", action="store_true",
                     help="do not turn on Claude Code's Bash sandbox (the trust boundary is "
                          "then advisory: the gate only denies the writes it can see)")
    box.add_argument("--sandbox-only", action="store_true",
                     help="write only the sandbox settings, no hooks (for the plugin route)")
    parser.add_argument("--allow-domain", action="append", default=[], metavar="DOMAIN",
                        help="let the agent's sandboxed commands reach DOMAIN (pypi.org, "
                             "'*.github.com'); repeatable; kept by later installs")


def _data(plan: install.Plan, dry_run: bool) -> dict[str, object]:
    return {"action": plan.action, "scope": plan.target.scope, "dry_run": dry_run,
            "changed": plan.changed,
            "files": [{"path": str(p.target.path), "changed": p.before != p.after,
                       "exists_after": p.after is not None} for p in plan.plans],
            "summary": plan.summary}


def report(plan: install.Plan, args: argparse.Namespace) -> int:
    """Print what install (or uninstall) did or would do; after an install, each hostile
    setting (:mod:`smllm.setup.hostile`): over those, install says ``installed, but ...``
    instead of plain success, and exits 1 where they switch smllm or its sandbox off."""
    found = hostile.scan(install.project_of(plan.target)) if plan.action == "install" else []
    if args.dry_run:
        if args.json:
            _output.write({**_data(plan, True), "hostile": [h.as_json() for h in found]}
                          if plan.action == "install" else _data(plan, True))
            return 0
        sys.stdout.write(install.diff(plan))
        first = plan.summary.splitlines()[0]
        sys.stdout.write(f"dry run, nothing written: would have {first}\n"
                         if plan.changed else f"dry run: {first}\n")
        _warn(found)
        return 0
    install.apply(plan)
    if args.json:
        _output.write({**_data(plan, False), "hostile": [h.as_json() for h in found]}
                      if plan.action == "install" else _data(plan, False))
    else:
        sys.stdout.write(plan.summary + "\n")
        _warn(found)
    return 1 if hostile.errors(found) else 0


def _warn(found: list[hostile.Hostile]) -> None:
    for h in found:
        sys.stdout.write(f"{'error' if h.severity == 'error' else 'warning'}: {h.text()}\n")
    if found:
        sys.stdout.write(hostile.summary(found) + "\n")


def run_host(args: argparse.Namespace, action: str) -> int:
    """``--harness codex|copilot|gemini``: smllm's hooks for that host (its module in
    :data:`smllm.setup.INSTALLS`)."""
    unsupported = [flag for flag, on in (("--local", args.local),
                                         ("--sandbox-only", getattr(args, "sandbox_only", False)),
                                         ("--allow-domain", getattr(args, "allow_domain", [])))
                   if on]
    if unsupported:
        raise UsageError(f"{unsupported[0]} applies to Claude Code, not to --harness "
                         f"{args.harness}", "drop it")
    if args.harness == "copilot" and getattr(args, "no_sandbox", False):
        raise UsageError("--no-sandbox does not apply to --harness copilot: smllm turns on no "
                         "sandbox of Copilot's (its hooks would run inside it)", "drop it")
    host = importlib.import_module(INSTALLS[args.harness])
    target = host.resolve_target(args.project, args.user)
    with install.locked(install.Target("user" if args.user else "project", target.path),
                        dry_run=args.dry_run):
        if action == "uninstall":
            plan = host.plan_uninstall(target)
        elif args.harness == "copilot":  # no sandbox of Copilot's to turn on (refused above)
            plan = host.plan_install(target, *install.interpreter())
        else:
            plan = host.plan_install(target, *install.interpreter(),
                                     sandbox=not args.no_sandbox)
        if not args.dry_run:
            host.apply(plan)
    data = {"action": plan.action, "scope": target.scope, "harness": args.harness,
            "dry_run": args.dry_run, "changed": plan.changed,
            "files": [{"path": str(c.path), "changed": c.before != c.after,
                       "exists_after": c.after is not None} for c in plan.changes],
            "summary": plan.summary}
    if args.json:
        _output.write(data)
    elif args.dry_run:
        sys.stdout.write(host.diff(plan))
        sys.stdout.write(f"dry run, nothing written: {plan.summary.splitlines()[0]}\n")
    else:
        sys.stdout.write(plan.summary + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.harness != "claude":
        return run_host(args, "install")
    target = install.resolve_target(args.project, args.user, args.local)
    domains = [sandbox.check_domain(d) for d in args.allow_domain]
    if domains and args.no_sandbox:
        raise UsageError("--allow-domain opens the sandbox's network, which --no-sandbox "
                         "does not write", "drop one of them")
    python, flags = install.interpreter()
    if not args.dry_run:
        install.record_command()
    with install.locked(target, dry_run=args.dry_run):
        return report(install.plan_install(target, python, flags, hooks=not args.sandbox_only,
                                           sandbox=not args.no_sandbox, domains=domains),
                      args)
