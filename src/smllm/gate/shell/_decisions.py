"""The decision of each built-in rule, read from ``data/policy_defaults.toml``.

A finding of the program table (:mod:`._table`) and of the families that use
:func:`finding` names only its rule: its decision is the one the policy defaults give
that rule, written there and nowhere else (a policy file may still override it, as
for every built-in rule: :mod:`smllm.gate.policy.assess`).
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.gate.shell._model import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.gate.shell._model import Decision

#: where the built-in rules and their decisions are written
DEFAULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "data", "policy_defaults.toml")
_DECISIONS: dict[str, Decision] = {}


def read_decisions(path: str) -> dict[str, Decision]:
    """Built-in rule id -> decision, from the ``[[builtin]]`` tables of ``path``.

    A line reader, not a TOML parser: the hook cannot afford to import one, and the
    file holds only ``key = "string"`` lines (``tests/test_shell_rules.py`` checks that
    this reading agrees with the policy compiler's)."""
    out: dict[str, Decision] = {}
    entry: dict[str, str] = {}
    with open(path, encoding="utf-8") as fh:
        lines = [*fh, "[[builtin]]"]
    for line in lines:
        text = line.strip()
        if text == "[[builtin]]" or text.startswith("["):
            rid, decision = entry.get("id"), entry.get("decision")
            if rid is not None and decision in ("allow", "ask", "deny"):
                out[rid] = decision  # type: ignore[assignment]  # checked just above
            entry = {}
            continue
        key, eq, value = text.partition("=")
        value = value.strip()
        if eq and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            entry[key.strip()] = value[1:-1]
    return out


def decision_of(rule: str) -> Decision:
    """The decision ``data/policy_defaults.toml`` gives the built-in rule ``rule``."""
    if not _DECISIONS:
        _DECISIONS.update(read_decisions(DEFAULTS))
    decision = _DECISIONS.get(rule)
    if decision is None:
        msg = (f"the analyser names the rule {rule!r}, which {DEFAULTS} does not define: "
               "add a [[builtin]] entry with its decision")
        raise LookupError(msg)
    return decision


def finding(rule: str, reason: str, path: str | None = None) -> Finding:
    """A finding of the built-in rule ``rule``, with the decision the defaults give it."""
    return Finding(rule, decision_of(rule), reason, path)
