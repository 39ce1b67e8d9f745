"""The slow path: read the policy files, validate them, compile them to plain JSON data.

Every error names ``file:line`` and says how to fix it. The compiled form is a dict
that :mod:`smllm.gate.policy` caches and the gate reads with the standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from smllm.base.errors import PolicyError

MODES = ("on-request", "untrusted", "deny-unmatched", "yolo")
AUTHORITIES = ("guard", "gate")
REVIEWERS = ("user", "llm_judge", "command")
DECISIONS = ("allow", "ask", "deny")
TOP_KEYS = ("mode", "authority", "reviewers", "llm_judge", "command", "rule", "sensitive")
RULE_KEYS = ("id", "tool", "command", "path", "decision", "reason")
JUDGE_KEYS = ("model", "timeout", "max_tokens", "base_url")
COMMAND_KEYS = ("argv", "timeout")
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,79}")
DEFAULTS = Path(__file__).resolve().parents[2] / "data" / "policy_defaults.toml"


def _toml(path: Path) -> tuple[dict[str, Any], list[str]]:
    from smllm.base import tomlread  # noqa: PLC0415

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
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column \d+\)", msg)
        line = m.group(1) if m else "1"
        what = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise PolicyError(
            f"invalid TOML: {what}", "see https://toml.io for the syntax", where=f"{path}:{line}"
        ) from None


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


def _choice(value: Any, choices: tuple[str, ...], what: str, where: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise PolicyError(
            f"unknown {what} {value!r}", f"use one of: {', '.join(choices)}", where=where
        )
    return value


def _unknown(keys: Any, allowed: tuple[str, ...], where: Any, what: str) -> None:
    """Refuse a key not in ``allowed``; ``where(key)`` is the ``file:line`` of that key."""
    for key in keys:
        if key not in allowed:
            raise PolicyError(
                f"unknown key {key!r} in {what}",
                f"use one of: {', '.join(allowed)}",
                where=where(key),
            )


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


def _positive(value: Any, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise PolicyError(
            f"{what} must be a positive number, not {value!r}", "e.g. timeout = 20", where=where
        )
    return float(value)


def _section(
    doc: dict[str, Any], key: str, allowed: tuple[str, ...], lines: _Lines, out: dict[str, Any]
) -> None:
    table = doc.get(key)
    if table is None:
        return
    if not isinstance(table, dict):
        raise PolicyError(f"{key} must be a table", f"write it as [{key}]", where=lines.top(key))
    _unknown(table, allowed, lambda k: lines.table_key(key, k), f"[{key}]")
    merged = dict(out.get(key) or {})
    for k, v in table.items():
        where = lines.table_key(key, k)
        if k == "timeout":
            merged[k] = _positive(v, where, f"{key}.timeout")
        elif k == "max_tokens":
            merged[k] = int(_positive(v, where, f"{key}.max_tokens"))
        elif k == "argv":
            if not (isinstance(v, list) and v and all(isinstance(a, str) for a in v)):
                raise PolicyError(
                    "command.argv must be a non-empty list of strings",
                    'e.g. argv = ["python3", "review.py"]',
                    where=where,
                )
            merged[k] = v
        else:
            if not isinstance(v, str) or not v:
                raise PolicyError(f"{key}.{k} must be a non-empty string", None, where=where)
            merged[k] = v
    out[key] = merged


def _rules(
    doc: dict[str, Any],
    lines: _Lines,
    builtin: dict[str, dict[str, str]],
    out: dict[str, Any],
    seen: set[str],
) -> None:
    rules = doc.get("rule", [])
    if not isinstance(rules, list):
        raise PolicyError(
            "rule must be an array of tables",
            "write each rule as [[rule]]",
            where=lines.top("rule"),
        )
    for index, rule in enumerate(rules):
        where = lines.rule(index)
        if not isinstance(rule, dict):
            raise PolicyError("a rule must be a table", "write each rule as [[rule]]", where=where)
        _unknown(rule, RULE_KEYS, lambda k, i=index: lines.rule(i, k), "[[rule]]")
        rid = rule.get("id")
        if not isinstance(rid, str) or not _ID_RE.fullmatch(rid):
            raise PolicyError(
                f"rule id {rid!r} is missing or invalid",
                "give every rule an id of letters, digits, '.', '_', ':' or '-'",
                where=lines.rule(index, "id"),
            )
        if rid in seen:
            raise PolicyError(
                f"duplicate rule id {rid!r}",
                "give each rule its own id",
                where=lines.rule(index, "id"),
            )
        seen.add(rid)
        decision = _choice(
            rule.get("decision"), DECISIONS, "decision", lines.rule(index, "decision")
        )
        matchers = {k: rule[k] for k in ("tool", "command", "path") if k in rule}
        for k, v in matchers.items():
            if not isinstance(v, str) or not v:
                raise PolicyError(
                    f"rule {rid!r}: {k} must be a non-empty string",
                    None,
                    where=lines.rule(index, k),
                )
        source = lines.rule(index)
        if rid in builtin:
            if matchers:
                raise PolicyError(
                    f"rule id {rid!r} is a built-in rule",
                    "to change its decision keep only id and decision; "
                    "give a rule of your own another id",
                    where=lines.rule(index, "id"),
                )
            out["overrides"][rid] = {"decision": decision, "source": source}
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
                "decision": decision,
                "source": source,
                "reason": str(rule.get("reason") or ""),
                **matchers,
            }
        )


def compile_files(files: list[Path]) -> dict[str, Any]:
    """Compile the policy files (lowest precedence first) with the built-in defaults."""
    builtin = load_defaults()
    out: dict[str, Any] = {
        "version": 1,
        "error": None,
        "mode": "on-request",
        "authority": "guard",
        "reviewers": ["user"],
        "llm_judge": {},
        "command": {},
        "overrides": {},
        "rules": [],
        "sensitive": [],
        "builtin": builtin,
        "sources": {"mode": "default", "authority": "default", "reviewers": "default"},
    }
    for path in files:
        doc, text = _toml(path)
        lines = _Lines(path, text)
        _unknown(doc, TOP_KEYS, lines.top, "the policy")
        _scalars(doc, lines, out)
        _section(doc, "llm_judge", JUDGE_KEYS, lines, out)
        _section(doc, "command", COMMAND_KEYS, lines, out)
        _rules(doc, lines, builtin, out, set())
    if "command" in out["reviewers"] and not out["command"].get("argv"):
        raise PolicyError(
            "the command reviewer is configured without [command] argv",
            'add [command] with argv = ["program", "arg"]',
            where=out["sources"]["reviewers"],
        )
    out["rules"].reverse()  # the most specific level (project, read last) first
    return out


def _scalars(doc: dict[str, Any], lines: _Lines, out: dict[str, Any]) -> None:
    if "mode" in doc:
        out["mode"] = _choice(doc["mode"], MODES, "mode", lines.top("mode"))
        out["sources"]["mode"] = lines.top("mode")
    if "authority" in doc:
        out["authority"] = _choice(
            doc["authority"], AUTHORITIES, "authority", lines.top("authority")
        )
        out["sources"]["authority"] = lines.top("authority")
    if "reviewers" in doc:
        where = lines.top("reviewers")
        revs = doc["reviewers"]
        if not isinstance(revs, list):
            raise PolicyError(
                "reviewers must be a list", 'e.g. reviewers = ["llm_judge", "user"]', where=where
            )
        for r in revs:
            _choice(r, REVIEWERS, "reviewer", where)
        if len(set(revs)) != len(revs):
            raise PolicyError("a reviewer is listed twice", "list each reviewer once", where=where)
        out["reviewers"] = list(revs)
        out["sources"]["reviewers"] = where
    if "sensitive" in doc:
        where = lines.top("sensitive")
        paths = doc["sensitive"]
        if not (isinstance(paths, list) and all(isinstance(p, str) and p for p in paths)):
            raise PolicyError(
                "sensitive must be a list of paths",
                'e.g. sensitive = ["secrets/", "/srv/data"]',
                where=where,
            )
        out["sensitive"] = [*out["sensitive"], *paths]
