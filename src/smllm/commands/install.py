"""``smllm install [--project DIR | --user] [--local] [--dry-run]``."""

from __future__ import annotations

import argparse
import sys

from smllm.setup import install


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)


def report(plan: install.Plan, dry_run: bool) -> int:
    if dry_run:
        sys.stdout.write(install.diff(plan))
        first = plan.summary.splitlines()[0]
        sys.stdout.write(f"dry run, nothing written: would have {first}\n"
                         if plan.changed else f"dry run: {first}\n")
        return 0
    install.apply(plan)
    sys.stdout.write(plan.summary + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    target = install.resolve_target(args.project, args.user, args.local)
    python, flags = install.interpreter()
    return report(install.plan_install(target, python, flags), args.dry_run)
