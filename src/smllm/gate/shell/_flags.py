"""Reading options as the programs themselves read them.

Shared by the family modules:

* :func:`skip_options`: a launcher's own options skipped to find the program it runs;
* :func:`long_option`: ``--har`` read as ``--hard`` (GNU ``getopt_long`` and git's
  parse-options accept any unambiguous prefix of a long option);
* :func:`flags`: every flag of an argv, long options expanded, short clusters split;
* :func:`subcommand`: the verb after a program's global options (``kubectl -n prod
  delete``: ``delete``), skipping the options that take a value.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from smllm.gate.shell._parse import Word


def skip_options(args: list[Word], with_arg: frozenset[str], positional: int) -> list[Word]:
    """The words after a launcher's options and its first ``positional`` operands."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            break
        if v == "--":
            i += 1
            break
        if v.startswith("-") and len(v) > 1:
            if v in with_arg:
                i += 2
                continue
            i += 1
            continue
        break
    rest = args[i:]
    return rest[positional:]


def long_option(word: str, known: Iterable[str]) -> str:
    """``word`` with its long option spelled out when it is an unambiguous prefix of one
    of ``known`` (``--forc`` -> ``--force``); an exact name wins over prefixes; the
    ``=value`` part is kept. Anything else comes back unchanged."""
    if not word.startswith("--") or len(word) < 3:
        return word
    name, eq, value = word.partition("=")
    matches = []
    for option in known:
        if option == name:
            return word
        if option.startswith(name):
            matches.append(option)
    if len(matches) == 1:
        return matches[0] + eq + value
    return word


def flags(values: Iterable[str], known: Iterable[str] = ()) -> set[str]:
    """Every flag before ``--``: long options expanded against ``known`` and without
    their ``=value``, short clusters split (``-fdx`` -> ``-f -d -x``)."""
    known = tuple(known)
    out: set[str] = set()
    for v in values:
        if v == "--":
            break
        if v.startswith("--"):
            out.add(long_option(v, known).split("=", 1)[0])
        elif v.startswith("-") and len(v) > 1:
            out.update(f"-{ch}" for ch in v[1:])
    return out


def subcommand(values: list[str], with_arg: frozenset[str]) -> int:
    """The index of the first operand after global options (``len(values)`` if none):
    ``--opt value``, ``--opt=value``, ``-o value`` and ``-ovalue`` are skipped."""
    i = 0
    while i < len(values):
        v = values[i]
        if v == "--":
            return i + 1
        if not v.startswith("-") or v == "-":
            return i
        if v in with_arg:
            i += 2
            continue
        i += 1
    return i
