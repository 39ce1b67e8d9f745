"""The engine of the program table (:mod:`._tabledata`): one reading of a command line,
prefix rules, read-only prefixes, written paths.

:func:`judge` is the handler of every program the table names. It reads the argv once
(:func:`read_argv`: the operands past the options and their values, long options spelled
out), then: an option that only prints (``--help``) makes the command read-only; one that
changes nothing (``--dry-run``) makes no rule apply; the paths the program writes are
judged as writes; the first rule whose prefix fits gives one finding, whose decision is
the built-in rule's in ``data/policy_defaults.toml`` (:mod:`._decisions`: read there,
written nowhere else); with no rule, a hand-written ``rest`` may speak, and otherwise the
command is read-only when its operands start with a read-only prefix.
"""

from __future__ import annotations

import sys

from smllm.base import osfast as os
from smllm.gate.shell._analyse import judge_argv, stdin_text, write_target
from smllm.gate.shell._decisions import finding
from smllm.gate.shell._syntax import Word
from smllm.gate.shell._tabledata import PROGRAMS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from smllm.gate.shell._model import Context, Finding
    from smllm.gate.shell._syntax import Simple
    from smllm.gate.shell._tabledata import Position, Program, Rule

    Result = tuple[list[Finding], bool]
    #: a hand-written rest: (program, operands, every argument, command, context)
    Rest = Callable[[str, list[str], list[str], Simple, Context], Result | None]

#: the keys an entry and a rule may have (the engine reads these and no others)
PROGRAM_KEYS = frozenset({"names", "values", "longs", "safe_with", "inert", "inert_unless",
                          "writes", "chdir", "stdin_words", "rules", "read_only", "rest"})
RULE_KEYS = frozenset({"id", "prefix", "also", "anywhere", "with", "without", "programs",
                       "then", "reason", "match", "not_match"})
#: program name -> its entry
BY_NAME: dict[str, Program] = {name: p for p in PROGRAMS for name in p["names"]}
def _spelled_out(word: str, longs: tuple[str, ...]) -> str:
    """``--he`` -> ``--help`` when it starts exactly one of ``longs`` (``=value`` kept)."""
    if not longs or not word.startswith("--") or len(word) < 3:
        return word
    name, eq, value = word.partition("=")
    if name in longs:
        return word
    found = [option for option in longs if option.startswith(name)]
    return found[0] + eq + value if len(found) == 1 else word


def read_argv(values: list[str], takes_value: Iterable[str], longs: tuple[str, ...] = ()
              ) -> tuple[list[str], list[str]]:
    """(operands, every argument) of an argv without its program name.

    Options before the first operand and between operands are skipped with the value of
    those in ``takes_value`` (``--opt value``; ``--opt=value`` is one word); a ``--``
    before any operand is skipped; one after an operand is kept with everything after
    it. Long options of ``longs`` are spelled out in both lists."""
    takes = frozenset(takes_value)
    spelled = [_spelled_out(v, longs) for v in values] if longs else values
    operands: list[str] = []
    skip = False
    for i, v in enumerate(spelled):
        if skip:
            skip = False
            continue
        if v == "--":
            if operands:
                operands += spelled[i:]
                break
            continue
        if v.startswith("-"):
            skip = v in takes
            continue
        operands.append(v)
    return operands, spelled


def _pattern_fits(pattern: str, part: str) -> bool:
    if pattern.endswith("*"):
        return part.startswith(pattern[:-1])
    if pattern.startswith("*"):
        return part.endswith(pattern[1:])
    return part == pattern


def _fits(word: str, position: Position) -> bool:
    """Whether operand ``word`` fits one position of a prefix."""
    alternatives = (position,) if isinstance(position, str) else position
    lowered = word.lower()
    parts = lowered.split(",") if "," in lowered else (lowered,)
    for pattern in alternatives:
        if pattern.startswith("!"):
            if lowered != pattern[1:]:
                return True
        elif any(_pattern_fits(pattern, part) for part in parts):
            return True
    return False


def prefix_fits(prefix: tuple[Position, ...], operands: list[str]) -> bool:
    """Whether ``operands`` start with ``prefix``."""
    return len(operands) >= len(prefix) and all(
        _fits(w, p) for w, p in zip(operands, prefix, strict=False))


def _given(wanted: tuple[str, ...], values: list[str]) -> bool:
    """Whether one of ``wanted`` is among ``values``: an option exactly (``x*``: as a
    prefix), another word lowercased."""
    for want in wanted:
        if want.startswith("-"):
            if want.endswith("*"):
                if any(v.startswith(want[:-1]) for v in values):
                    return True
            elif want in values:
                return True
        elif any(v.lower() == want for v in values):
            return True
    return False


def inert(program: Program, values: list[str]) -> bool:
    """Whether an option makes the command change nothing (``--dry-run``)."""
    return _given(program.get("inert", ()), values) and not _given(
        program.get("inert_unless", ()), values)


def rule_for(program: Program, name: str, operands: list[str], values: list[str]
             ) -> Rule | None:
    """The first rule of ``program`` that fits the command, or None (also when an option
    makes the command inert)."""
    if inert(program, values):
        return None
    for rule in program["rules"]:
        if _rule_fits(rule, name, operands, values):
            return rule
    return None


def _rule_fits(rule: Rule, name: str, operands: list[str], values: list[str]) -> bool:
    if "programs" in rule and name not in rule["programs"]:
        return False
    if not any(prefix_fits(p, operands) for p in (rule["prefix"], *rule.get("also", ()))):
        return False
    if "anywhere" in rule and not any(_fits(w, rule["anywhere"]) for w in operands):
        return False
    return ("with" not in rule or _given(rule["with"], values)) and not _given(
        rule.get("without", ()), values)


def read_only(program: Program, operands: list[str]) -> bool:
    """Whether the operands start with one of the program's read-only prefixes."""
    for prefix in program.get("read_only", ()):
        if prefix_fits((prefix,) if isinstance(prefix, str) else prefix, operands):
            return True
    return False


def _reason(rule: Rule, name: str, operands: list[str]) -> str:
    words = [*operands[:10], *[""] * (10 - min(len(operands), 10))]
    return " ".join(rule["reason"].format(*words, name=name).split())


def _writes(program: Program, name: str, args: list[Word], ctx: Context) -> list[Finding]:
    """The paths the program writes (``-out=plan``, ``--output-dir out``), as writes."""
    options = program.get("writes", ())
    if not options:
        return []
    chdir = program.get("chdir")
    folder = ""
    out: list[Finding] = []
    targets: list[tuple[str, Word]] = []
    for i, a in enumerate(args):
        key, eq, attached = (a.value or "").partition("=")
        value = (Word(attached, attached) if eq else args[i + 1] if i + 1 < len(args)
                 else None)
        if key == chdir and value is not None and value.value is not None:
            folder = value.value
        elif key in options and value is not None:
            targets.append((key, value))
    for key, value in targets:
        target = value
        if folder and value.value is not None and not value.value.startswith(("/", "~")):
            joined = os.path.join(folder, value.value)
            target = Word(joined, joined)
        out += write_target(target, ctx, truncate=False, what=f"{name} {key} writes", by=name)
    return out


def _rest(where: str) -> Rest:
    module_name, _, function = where.rpartition(".")
    full = f"smllm.gate.shell.{module_name}"
    if full not in sys.modules:
        __import__(full)  # by name, on first use, as the table of programs loads families
    found: Rest = getattr(sys.modules[full], function)
    return found


def read(name: str, raw: list[str]) -> tuple[Program, list[str], list[str], bool]:
    """(entry, operands, every argument, whether an option makes it only print) of the
    command ``name`` with the arguments ``raw``."""
    program = BY_NAME[name]
    taking = program.get("values", ())
    own = taking.get(name, ()) if isinstance(taking, dict) else taking
    values_taken = (*own, *program.get("writes", ()))
    operands, values = read_argv(raw, values_taken, program.get("longs", ()))
    return program, operands, values, _given(program.get("safe_with", ()), values)


def judge(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """The handler of every program of the table."""
    raw = [a.value if a.value is not None else a.raw for a in args]
    program, operands, values, prints = read(name, raw)
    if prints:
        return [], True
    if program.get("stdin_words"):
        text, _ = stdin_text(cmd)
        if text:
            operands += text.lower().split()
    out = _writes(program, name, args, ctx)
    rule = rule_for(program, name, operands, values)
    if rule is not None:
        out.append(finding(rule["id"], _reason(rule, name, operands)))
        if rule.get("then") == "dashdash" and "--" in raw:
            inner = args[raw.index("--") + 1:]
            if inner:
                out += judge_argv(inner, cmd, ctx)[0]
        return out, False
    if "rest" in program:
        found = _rest(program["rest"])(name, operands, values, cmd, ctx)
        if found is not None:
            return out + found[0], found[1] and not out
    wrote = any(v.partition("=")[0] in program.get("writes", ()) for v in values)
    return out, not (out or wrote or inert(program, values)) and read_only(program, operands)
