"""Shell command analysis for the approval gate: parse as shell, not text.

>>> from smllm.gate.shell import analyse
>>> analyse("grep -r 'rm -rf' .", cwd="/work/p", home="/home/me").decision
'allow'
>>> a = analyse("sudo env rm -rf ~", cwd="/work/p", home="/home/me")
>>> a.decision, a.all_findings()[-1].rule
('deny', 'fs.delete-recursive-critical')
>>> analyse("$(which rm) -rf ~", cwd="/work/p", home="/home/me").decision
'ask'

:func:`analyse` never raises and always returns ``allow``, ``ask`` or ``deny``:
anything it cannot resolve statically is ``ask``.
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.gate.shell._model import (
    SEVERITY,
    Analysis,
    CommandReport,
    Context,
    Finding,
    worst,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.gate.shell._model import Decision as Decision

__all__ = ["SEVERITY", "Analysis", "CommandReport", "Finding", "analyse", "worst"]


def analyse(
    command: str,
    *,
    cwd: str,
    home: str | None = None,
    root: str | None = None,
    sensitive: tuple[str, ...] = (),
) -> Analysis:
    """Analyse ``command`` as run by bash in ``cwd`` (the workspace is ``root``, default cwd)."""
    # the parser and the walker load here, for Bash calls only: Write/Edit and MCP
    # judgement import this package for its path classes (_model) on every call
    from smllm.gate.shell._analyse import analyse_text  # noqa: PLC0415 - Bash calls only

    home_dir = home if home is not None else os.path.expanduser("~")
    tmp = os.environ.get("TMPDIR", "/tmp").rstrip("/") or "/tmp"  # noqa: S108 - the path bash expands, not a file opened
    ctx = Context(
        root=os.path.normpath(root or cwd),
        cwd=os.path.normpath(cwd),
        home=os.path.normpath(home_dir),
        tmpdir=tmp,
        extra_sensitive=sensitive,
    )
    try:
        result = analyse_text(command, ctx)
        memory = ctx.memory
        if not memory.scripts and not memory.effects:
            return result
        return Analysis(result.decision, result.commands, result.findings,
                        tuple(sorted(memory.scripts.items())), tuple(memory.effects),
                        tuple(sorted(memory.sources.items())))
    except RecursionError:
        f = Finding("shell.too-complex", "ask", "command too complex to analyse")
        return Analysis("ask", (), (f,))
    except Exception as exc:
        f = Finding(
            "shell.internal-error",
            "ask",
            f"the analyser failed ({type(exc).__name__}: {exc}); escalating",
        )
        return Analysis("ask", (), (f,))
