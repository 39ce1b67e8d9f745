"""A policy file as a typed model (pydantic), validated when the policy is compiled.

The slow path only: :mod:`smllm.gate.policy._compile` validates each file's TOML with
:class:`PolicyFile` and compiles the typed result into the plain JSON the hooks read
from the cache (the hot path never imports pydantic). A validation error becomes one
:class:`~smllm.base.errors.PolicyError` in smllm's words, at the ``file:line`` of the
key at fault (:func:`validate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from smllm.base.errors import PolicyError
from smllm.gate import reviewers

#: the choices and the keys a policy file may hold (the compiler reads the file through
#: this model, so they are written here once)
MODES = ("on-request", "untrusted", "deny-unmatched", "yolo")
AUTHORITIES = ("guard", "gate")
#: ``approve``: what smllm approves itself under ``authority = "guard"`` (docs/policy.md)
APPROVALS = ("never", "known-safe")
REVIEWERS = tuple(reviewers.REVIEWERS)
DECISIONS = ("allow", "ask", "deny")
TOP_KEYS = ("mode", "authority", "reviewers", "llm_judge", "command", "rule", "sensitive",
            "sandbox", "approve")
#: ``[sandbox]``: what ``smllm install`` writes into Claude Code's sandbox (setup/sandbox.py)
SANDBOX_KEYS = ("read_credentials", "allowed_domains")
RULE_KEYS = ("id", "tool", "command", "path", "decision", "reason")
JUDGE_KEYS = ("model", "timeout", "max_tokens", "base_url")
COMMAND_KEYS = ("argv", "timeout")

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$"

NonEmpty = Annotated[str, Field(min_length=1)]
Positive = Annotated[float, Field(gt=0)]
PositiveInt = Annotated[int, Field(gt=0)]


class _Closed(BaseModel):
    """Exact TOML types (no "20" for 20) and no key the policy does not know."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class JudgeSection(_Closed):
    """``[llm_judge]``: the Messages API reviewer."""

    model: NonEmpty | None = None
    timeout: Positive | None = None
    max_tokens: PositiveInt | None = None
    base_url: NonEmpty | None = None


class CommandSection(_Closed):
    """``[command]``: the external reviewer program (JSON in, JSON verdict out)."""

    argv: Annotated[list[str], Field(min_length=1)] | None = None
    timeout: Positive | None = None


class RuleEntry(_Closed):
    """One ``[[rule]]``: what it matches (tool, command, path) and its decision."""

    id: Annotated[str, Field(pattern=ID_PATTERN)]
    tool: NonEmpty | None = None
    command: NonEmpty | None = None
    path: NonEmpty | None = None
    decision: Literal["allow", "ask", "deny"]
    reason: str | None = None


class SandboxSection(_Closed):
    """``[sandbox]``: what ``smllm install`` writes into Claude Code's sandbox."""

    read_credentials: bool | None = None
    allowed_domains: list[NonEmpty] | None = None


class PolicyFile(_Closed):
    """One ``policy.toml`` (user or project level)."""

    mode: Literal["on-request", "untrusted", "deny-unmatched", "yolo"] | None = None
    authority: Literal["guard", "gate"] | None = None
    approve: Literal["never", "known-safe"] | None = None
    reviewers: list[Literal["user", "llm_judge", "command"]] | None = None
    llm_judge: JudgeSection | None = None
    command: CommandSection | None = None
    rule: list[RuleEntry] = []
    sensitive: list[NonEmpty] | None = None
    sandbox: SandboxSection | None = None


Where = Callable[..., str]


class Lines:
    """Where a key is, as ``file:line``: what :func:`validate` needs of the file's text."""

    def __init__(self, top: Where, table_key: Where, rule: Where) -> None:
        self.top, self.table_key, self.rule = top, table_key, rule


def validate(doc: dict[str, Any], lines: Lines) -> PolicyFile:
    """The typed policy, or a ``PolicyError`` for its first mistake, in smllm's words."""
    try:
        return PolicyFile.model_validate(doc)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        raise _error(error, doc, lines) from None


def _choices(what: str, value: Any, choices: tuple[str, ...], where: str) -> PolicyError:
    return PolicyError(f"unknown {what} {value!r}", f"use one of: {', '.join(choices)}",
                       where=where)


def _error(error: Any, doc: dict[str, Any], lines: Lines) -> PolicyError:
    loc = tuple(error["loc"])
    head, key = loc[0], loc[-1]
    if error["type"] == "extra_forbidden":
        if len(loc) == 1:
            return PolicyError(f"unknown key {key!r} in the policy",
                               f"use one of: {', '.join(TOP_KEYS)}", where=lines.top(key))
        if head == "rule":
            return PolicyError(f"unknown key {key!r} in [[rule]]",
                               f"use one of: {', '.join(RULE_KEYS)}",
                               where=lines.rule(loc[1], key))
        allowed = {"llm_judge": JUDGE_KEYS, "sandbox": SANDBOX_KEYS}.get(head, COMMAND_KEYS)
        return PolicyError(f"unknown key {key!r} in [{head}]", f"use one of: {', '.join(allowed)}",
                           where=lines.table_key(head, key))
    if head == "rule":
        return _rule_error(error, loc, doc, lines)
    if head in ("llm_judge", "command"):
        return _section_error(error, loc, doc, lines)
    return _top_error(loc, doc, lines)


def _top_error(loc: tuple[Any, ...], doc: dict[str, Any], lines: Lines) -> PolicyError:
    head = loc[0]
    where = lines.top(head)
    value = doc.get(head)
    if head == "sandbox":
        return PolicyError(f"[sandbox] {loc[-1]} has the wrong type",
                           'read_credentials = true or false; allowed_domains = ["host", ...]',
                           where=where)
    choices = {"mode": MODES, "authority": AUTHORITIES, "approve": APPROVALS}.get(head)
    if choices is not None:
        return _choices(head, value, choices, where)
    if head == "reviewers":
        if len(loc) == 1:
            return PolicyError("reviewers must be a list",
                               'e.g. reviewers = ["llm_judge", "user"]', where=where)
        listed = value if isinstance(value, list) else []
        return _choices("reviewer", listed[loc[1]], REVIEWERS, where)
    return PolicyError("sensitive must be a list of paths",
                       'e.g. sensitive = ["secrets/", "/srv/data"]', where=where)


def _section_error(error: Any, loc: tuple[Any, ...], doc: dict[str, Any],
                   lines: Lines) -> PolicyError:
    head = loc[0]
    if len(loc) == 1:
        return PolicyError(f"{head} must be a table", f"write it as [{head}]",
                           where=lines.top(head))
    key = loc[1]
    where = lines.table_key(head, key)
    value = doc[head].get(key)
    if key in ("timeout", "max_tokens"):
        return PolicyError(f"{head}.{key} must be a positive number, not {value!r}",
                           "e.g. timeout = 20", where=where)
    if key == "argv":
        return PolicyError("command.argv must be a non-empty list of strings",
                           'e.g. argv = ["python3", "review.py"]', where=where)
    return PolicyError(f"{head}.{key} must be a non-empty string", None, where=where)


def _rule_error(error: Any, loc: tuple[Any, ...], doc: dict[str, Any],
                lines: Lines) -> PolicyError:
    if len(loc) == 1:
        return PolicyError("rule must be an array of tables", "write each rule as [[rule]]",
                           where=lines.top("rule"))
    index = loc[1]
    if len(loc) == 2:
        return PolicyError("a rule must be a table", "write each rule as [[rule]]",
                           where=lines.rule(index))
    rule, key = doc["rule"][index], loc[2]
    rid = rule.get("id")
    if key == "id":
        return PolicyError(f"rule id {rid!r} is missing or invalid",
                           "give every rule an id of letters, digits, '.', '_', ':' or '-'",
                           where=lines.rule(index, "id"))
    if key == "decision":
        return _choices("decision", rule.get("decision"), DECISIONS,
                        lines.rule(index, "decision"))
    what = "a string" if key == "reason" else "a non-empty string"
    return PolicyError(f"rule {rid!r}: {key} must be {what}", None, where=lines.rule(index, key))
