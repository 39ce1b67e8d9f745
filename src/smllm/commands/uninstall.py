"""``smllm uninstall [--project DIR | --user] [--local] [--harness codex|copilot|gemini]
[--dry-run] [--json]``."""

from __future__ import annotations

import argparse

from smllm.commands.install import add_target_arguments, report, run_host
from smllm.setup import install


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.harness != "claude":
        return run_host(args, "uninstall")
    target = install.resolve_target(args.project, args.user, args.local)
    with install.locked(target, dry_run=args.dry_run):
        return report(install.plan_uninstall(target), args)
