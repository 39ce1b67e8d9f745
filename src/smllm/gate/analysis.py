"""What one tool call does, analysed once: the facts self-protection and the policy share.

:func:`of` runs the one analysis a call gets: the shell analysis of a Bash command, or
the judgement of an MCP tool (:func:`smllm.gate.mcp.judge`, with the commands it runs
analysed as Bash), both against one *sensitive* set (smllm's protected set and the
policy's ``sensitive`` paths). Self-protection (:mod:`smllm.gate.protect`) reads its
effects, the policy (:mod:`smllm.gate.policy.assess`) its findings; the intent record
keeps what the ledger needs (:attr:`CallAnalysis.known_safe`, :attr:`CallAnalysis.targets`),
so that no reader analyses a call again.

Hot path: the analyser and the MCP judge load only for the calls that need them.
"""

from __future__ import annotations

from smllm.base import catalogue as tools
from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from smllm.base.catalogue import ToolCall
    from smllm.base.shapes import VerdictFacts
    from smllm.gate.mcp import Judgement
    from smllm.gate.shell import Analysis
    from smllm.gate.shell._model import Context

#: targets kept on an intent record (the rest are counted)
MAX_TARGETS = 20


class CallAnalysis:
    """The analysis of one call: ``shell`` (a Bash command's), ``judgement`` (an MCP
    tool's) and ``commands`` (each command that MCP tool runs, with its analysis)."""

    __slots__ = ("_sensitive", "commands", "file", "home", "judgement", "shell")
    # file: a file tool's (tool, the path as given made absolute, where links lead)

    def __init__(self, sensitive: tuple[str, ...] | Callable[[], tuple[str, ...]],
                 home: str) -> None:
        self._sensitive = sensitive
        self.home = home
        self.shell: Analysis | None = None
        self.judgement: Judgement | None = None
        self.commands: list[tuple[str, Analysis]] = []
        self.file: tuple[str, str, str] | None = None

    @property
    def sensitive(self) -> tuple[str, ...]:
        """The sensitive set the analysis judges paths against; given as a function, it is
        computed on first use (a read-only call needs it only when its path may name a
        secret)."""
        value = self._sensitive
        if callable(value):
            value = self._sensitive = value()
        return value

    def context(self, call: ToolCall) -> Context:
        """The analyser's view of where ``call`` runs (for file and MCP tools)."""
        from smllm.gate.shell._model import Context  # noqa: PLC0415 - file and MCP tools only

        return Context(root=os.path.normpath(call.project), cwd=os.path.normpath(call.cwd),
                       home=os.path.normpath(self.home), extra_sensitive=self.sensitive)

    def known_safe(self, call: ToolCall) -> bool:
        """Does the analysis prove the call changes nothing (a read-only tool, or a shell
        command every part of which is known to be read-only)?"""
        if self.shell is not None:
            return not self.shell.all_findings() and bool(self.shell.commands) and all(
                c.known_safe for c in self.shell.commands)
        return tools.read_only(call.tool)

    def scope(self, call: ToolCall) -> str | None:
        """How far the call is proved to reach: ``read`` (:meth:`known_safe`), ``temp``
        (a shell command changing files in the temp folders only), ``workspace`` (in the
        workspace, and maybe temp), or None (anything else, or not known)."""
        if self.shell is None:
            return "read" if tools.read_only(call.tool) else None
        if self.shell.all_findings() or not self.shell.commands:
            return None
        scopes = {c.scope for c in self.shell.commands}
        for scope in (None, "workspace", "temp"):
            if scope in scopes:
                return scope
        return "read"

    def targets(self) -> list[dict[str, str | None]]:
        """Every write, delete, move, link and chmod recognised, with its resolved path
        (None: only known at run time) and the program that does it."""
        out: list[dict[str, str | None]] = []
        if self.shell is not None:
            out += [{"effect": e.kind, "path": e.path, "by": e.by} for e in self.shell.effects]
        if self.judgement is not None:
            out += self.judgement.targets
        if self.file is not None:
            out.append({"effect": "write", "path": self.file[2], "by": self.file[0]})
        return out


def analyse_shell(command: str, call: ToolCall, sensitive: tuple[str, ...],
                  home: str) -> Analysis:
    """The shell analysis of ``command`` as ``call`` would run it."""
    from smllm.gate.shell import analyse  # noqa: PLC0415 - Bash calls and MCP commands only

    return analyse(command, cwd=call.cwd, home=home, root=call.project, sensitive=sensitive)


def of(call: ToolCall, sensitive: tuple[str, ...] | Callable[[], tuple[str, ...]],
       home: str | None = None) -> CallAnalysis:
    """The one analysis of ``call`` against ``sensitive`` (or the function that computes it,
    called only if the analysis needs it)."""
    out = CallAnalysis(sensitive, home or os.path.expanduser("~"))
    command = call.command
    if command is not None:
        out.shell = analyse_shell(command, call, out.sensitive, out.home)
    elif call.kind == tools.MCP:
        from smllm.gate import mcp  # noqa: PLC0415 - MCP calls only

        def analyse_command(text: str) -> tuple[list[Any], list[dict[str, str | None]]]:
            a = analyse_shell(text, call, out.sensitive, out.home)
            out.commands.append((text, a))
            effects = [{"effect": e.kind, "path": e.path, "by": e.by} for e in a.effects]
            return list(a.all_findings()), effects

        out.judgement = mcp.judge(call.tool, call.input, out.context(call), analyse_command)
    elif call.kind == tools.WRITE:
        path = tools.path_of(call.tool, call.input)
        if path is not None:
            ctx = out.context(call)
            full = ctx.resolve(path) or path
            out.file = (call.tool, full, ctx.follow(full))
    return out


def stamped(call: ToolCall, analysed: CallAnalysis) -> VerdictFacts:
    """What the intent record keeps of the analysis: whether the call is known to be safe,
    and what it changes (at most :data:`MAX_TARGETS`, with the count of the rest)."""
    targets = analysed.targets()
    facts: VerdictFacts = {"known_safe": analysed.known_safe(call)}
    if targets:
        facts["targets"] = targets[:MAX_TARGETS]
        if len(targets) > MAX_TARGETS:
            facts["targets_omitted"] = len(targets) - MAX_TARGETS
    return facts
