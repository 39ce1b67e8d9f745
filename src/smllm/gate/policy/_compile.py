"""The slow path: read the policy files, validate them, compile them to plain JSON data.

Each file's TOML is validated into a typed :class:`~smllm.gate.policy._policy_file.PolicyFile`
(pydantic); the checks that span keys (a reviewer listed twice, a built-in rule id, a
rule that matches nothing, the command reviewer without ``argv``) follow here. Every
error names ``file:line`` and says how to fix it. The compiled form is a dict that
:mod:`smllm.gate.policy` caches and the gate reads with the standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from smllm.base import tomlread
from smllm.base.errors import PolicyError

if TYPE_CHECKING:
    from smllm.base.shapes import CompiledPolicy
    from smllm.gate.policy import _policy_file

DEFAULTS = Path(__file__).resolve().parents[2] / "data" / "policy_defaults.toml"


def _toml(path: Path) -> tuple[dict[str, Any], list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(
            f"cannot read the policy: {exc}",
            "fix the file's permissions or encoding (UTF-8)",
            where=str(path),
        ) from None
    try:
        return tomlread.loads(text), text.splitlines()
    except tomlread.TOMLDecodeError as exc:
        what, line = tomlread.error_at(exc)
        raise PolicyError(
            f"invalid TOML: {what}", "see https://toml.io for the syntax",
            where=f"{path}:{line or 1}") from None


class _Lines:
    """Line numbers of keys and ``[[rule]]`` tables in one file's text."""

    def __init__(self, path: Path, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.headers = [
            i + 1 for i, ln in enumerate(lines) if re.match(r"\s*\[\[\s*rule\s*\]\]", ln)
        ]

    def top(self, key: str) -> str:
        for i, ln in enumerate(self.lines):
            if re.match(r"\s*\[", ln):
                break
            if re.match(rf"\s*{re.escape(key)}\s*=", ln):
                return f"{self.path}:{i + 1}"
        for i, ln in enumerate(self.lines):
            if re.match(rf"\s*\[\s*{re.escape(key)}\s*\]", ln):
                return f"{self.path}:{i + 1}"
        return f"{self.path}:1"

    def table_key(self, table: str, key: str) -> str:
        start = next(
            (
                i
                for i, ln in enumerate(self.lines)
                if re.match(rf"\s*\[\s*{re.escape(table)}\s*\]", ln)
            ),
            None,
        )
        if start is None:
            return self.top(table)
        for i in range(start + 1, len(self.lines)):
            if re.match(r"\s*\[", self.lines[i]):
                break
            if re.match(rf"\s*{re.escape(key)}\s*=", self.lines[i]):
                return f"{self.path}:{i + 1}"
        return f"{self.path}:{start + 1}"

    def rule(self, index: int, key: str | None = None) -> str:
        if index >= len(self.headers):
            return f"{self.path}:1"
        start = self.headers[index]
        if key is not None:
            end = self.headers[index + 1] if index + 1 < len(self.headers) else len(self.lines)
            for i in range(start, min(end, len(self.lines))):
                if re.match(rf"\s*{re.escape(key)}\s*=", self.lines[i]):
                    return f"{self.path}:{i + 1}"
        return f"{self.path}:{start}"


def load_defaults() -> dict[str, dict[str, str]]:
    """Built-in rule id -> {decision, about, source}."""
    doc, lines = _toml(DEFAULTS)
    heads = [i + 1 for i, ln in enumerate(lines) if ln.strip() == "[[builtin]]"]
    out: dict[str, dict[str, str]] = {}
    for i, entry in enumerate(doc.get("builtin", [])):
        out[entry["id"]] = {
            "decision": entry["decision"],
            "about": entry["about"],
            "source": f"smllm/data/policy_defaults.toml:{heads[i]}",
        }
    return out


def _sections(pf: _policy_file.PolicyFile, out: dict[str, Any]) -> None:
    for key in ("llm_judge", "command", "sandbox"):
        section = getattr(pf, key)
        if section is not None:
            out[key] = {**(out.get(key) or {}), **section.model_dump(exclude_none=True)}


def _rules(
    pf: _policy_file.PolicyFile,
    lines: _Lines,
    builtin: dict[str, dict[str, str]],
    out: dict[str, Any],
) -> None:
    seen: set[str] = set()
    for index, rule in enumerate(pf.rule):
        rid = rule.id
        if rid in seen:
            raise PolicyError(
                f"duplicate rule id {rid!r}",
                "give each rule its own id",
                where=lines.rule(index, "id"),
            )
        seen.add(rid)
        matchers = {k: v for k in ("tool", "command", "path") if (v := getattr(rule, k))}
        source = lines.rule(index)
        if rid in builtin:
            if matchers:
                raise PolicyError(
                    f"rule id {rid!r} is a built-in rule",
                    "to change its decision keep only id and decision; "
                    "give a rule of your own another id",
                    where=lines.rule(index, "id"),
                )
            out["overrides"][rid] = {"decision": rule.decision, "source": source}
            continue
        if not matchers:
            raise PolicyError(
                f"rule {rid!r} matches nothing",
                "add tool, command or path; or use a built-in rule id to "
                "change that rule's decision",
                where=source,
            )
        out["rules"].append(
            {
                "id": rid,
                "decision": rule.decision,
                "source": source,
                "reason": rule.reason or "",
                **matchers,
            }
        )


def compile_files(files: list[Path]) -> CompiledPolicy:
    """Compile the policy files (lowest precedence first) with the built-in defaults."""
    builtin = load_defaults()
    out: dict[str, Any] = {
        "version": 1,
        "error": None,
        "mode": "on-request",
        "authority": "guard",
        "approve": "never",
        "reviewers": ["user"],
        "llm_judge": {},
        "command": {},
        "overrides": {},
        "rules": [],
        "sensitive": [],
        "sandbox": {},
        "builtin": builtin,
        "sources": {"mode": "default", "authority": "default", "approve": "default",
                    "reviewers": "default"},
    }
    for path in files:
        doc, text = _toml(path)
        lines = _Lines(path, text)
        pf = _validate(doc, lines)
        _scalars(pf, lines, out)
        _sections(pf, out)
        _rules(pf, lines, builtin, out)
    if "command" in out["reviewers"] and not out["command"].get("argv"):
        raise PolicyError(
            "the command reviewer is configured without [command] argv",
            'add [command] with argv = ["program", "arg"]',
            where=out["sources"]["reviewers"],
        )
    out["rules"].reverse()  # the most specific level (project, read last) first
    return cast("CompiledPolicy", out)  # its shape: validated field by field above


def _validate(doc: dict[str, Any], lines: _Lines) -> _policy_file.PolicyFile:
    try:
        from smllm.gate.policy import _policy_file  # noqa: PLC0415 - pydantic, only for a file
    except ImportError as exc:  # the plugin's python3 before its environment is built
        raise PolicyError(
            f"cannot validate the policy: {exc}",
            "install smllm's dependencies (pydantic); the plugin builds its environment in "
            "the background, so try again in a minute", where=str(lines.path)) from None
    return _policy_file.validate(doc, _policy_file.Lines(lines.top, lines.table_key, lines.rule))


def _scalars(pf: _policy_file.PolicyFile, lines: _Lines, out: dict[str, Any]) -> None:
    if pf.mode is not None:
        out["mode"] = pf.mode
        out["sources"]["mode"] = lines.top("mode")
    if pf.authority is not None:
        out["authority"] = pf.authority
        out["sources"]["authority"] = lines.top("authority")
    if pf.approve is not None:
        out["approve"] = pf.approve
        out["sources"]["approve"] = lines.top("approve")
    if pf.reviewers is not None:
        where = lines.top("reviewers")
        if len(set(pf.reviewers)) != len(pf.reviewers):
            raise PolicyError("a reviewer is listed twice", "list each reviewer once", where=where)
        out["reviewers"] = list(pf.reviewers)
        out["sources"]["reviewers"] = where
    if pf.sensitive is not None:
        out["sensitive"] = [*out["sensitive"], *pf.sensitive]
