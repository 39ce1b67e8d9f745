"""What the Claude Code hooks ask of the state-machine feature.

Until a project configures machines (``.smllm/config.toml``), every answer is
neutral: no location text, no stop block, no tool rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from smllm.hooks._context import HookContext


def on_session_start(ctx: HookContext) -> str | None:
    return None


def on_prompt(ctx: HookContext) -> str | None:
    return None


def on_stop(ctx: HookContext) -> str | None:
    return None


def tool_rule(ctx: HookContext) -> tuple[str, str] | None:
    return None
