"""Reviewers of escalated calls, chained in the policy's order.

* ``user``: Claude Code's own permission prompt. smllm answers ``ask``; the person's
  answer is observed later (PermissionRequest, then the call running or not).
* ``llm_judge``: a Messages API call (:mod:`smllm.gate.reviewers.llm_judge`).
* ``command``: any program, JSON in and JSON out (:mod:`smllm.gate.reviewers.command`).

A machine reviewer answers one of :data:`CHOICES`; anything else (timeout, HTTP error,
garbage) is a failure, which never allows: the chain moves on, or the call is denied.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from smllm.journal.records import CHOICES

if TYPE_CHECKING:
    from smllm.journal.records import Choice

#: every reviewer a policy may name -> the module that asks it (None: Claude Code's prompt,
#: which :mod:`smllm.gate.review` delegates to with ``ask``). The policy compiler accepts
#: exactly these names.
REVIEWERS: dict[str, str | None] = {
    "user": None,
    "llm_judge": "smllm.gate.reviewers.llm_judge",
    "command": "smllm.gate.reviewers.command",
}


@dataclass(frozen=True)
class Request:
    """What a reviewer is shown about one escalated call."""

    tool_name: str
    tool_input: dict[str, Any]
    cwd: str
    session_id: str
    pending_action_id: str
    rule: str
    reason: str
    findings: tuple[str, ...] = ()
    #: each script file the command runs: (path, digest, the text the analysis read)
    scripts: tuple[tuple[str, str, str], ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "tool_input": self.tool_input,
            "cwd": self.cwd,
            "session_id": self.session_id,
            "pending_action_id": self.pending_action_id,
            "policy": {"rule": self.rule, "reason": self.reason, "findings": list(self.findings)},
            "choices": list(CHOICES),
        }


@dataclass(frozen=True)
class Result:
    """A reviewer's answer (``choice``) or its failure (``error``), and what it saw."""

    kind: str
    choice: Choice | None
    reason: str
    source: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def parse_verdict(text: str) -> tuple[Choice, str]:
    """Strictly parse ``{"verdict": CHOICE, "reason": "..."}`` (nothing else around it).

    >>> parse_verdict('{"verdict": "allow_once", "reason": "a cache file"}')
    ('allow_once', 'a cache file')
    >>> parse_verdict('Sure! {"verdict": "allow_once", "reason": "x"}')
    Traceback (most recent call last):
    ...
    ValueError: verdict is not one JSON object: 'Sure! {"verdict": "allow_once", "reason": "x"}'
    """
    body = text.strip()
    m = re.fullmatch(r"```(?:json)?\s*(\{.*\})\s*```", body, re.DOTALL)
    if m:
        body = m.group(1)
    try:
        obj = json.loads(body)
    except ValueError:
        raise ValueError(f"verdict is not one JSON object: {text[:200]!r}") from None
    if not isinstance(obj, dict) or set(obj) != {"verdict", "reason"}:
        raise ValueError(f"verdict must have exactly the keys verdict and reason: {text[:200]!r}")
    verdict, reason = obj["verdict"], obj["reason"]
    if verdict not in CHOICES:
        raise ValueError(f"unknown verdict {verdict!r} (expected one of {', '.join(CHOICES)})")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("the verdict gives no reason")
    return verdict, reason.strip()[:2000]


def review(kind: str, request: Request, config: dict[str, Any]) -> Result:
    """Ask the machine reviewer ``kind``; never raises."""
    try:
        name = REVIEWERS[kind]
        if name is None:
            raise ValueError(f"the {kind} reviewer is not a program smllm runs")
        module = importlib.import_module(name)
        result: Result = module.review(request, config)
        return result
    except Exception as exc:  # a failing reviewer never allows
        return Result(kind, None, "", {"kind": kind}, f"{type(exc).__name__}: {exc}")
