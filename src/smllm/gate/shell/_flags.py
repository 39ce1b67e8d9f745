"""Reading options as the programs themselves read them.

Shared by the family modules:

* :func:`read`: the one argv reader. Given a program's :class:`Options` (the options
  that take a value, how it reads short clusters and long abbreviations, whether options
  may follow operands), it yields each option with its value and each operand, as
  ``getopt`` would (``--`` ends the options); :func:`item` reads the one item at an
  index, for a program that acts on each option as it meets it (``env``);
* :func:`operands`, :func:`skip_options`: where the operands start (a launcher's own
  options skipped to find the program it runs);
* :func:`long_option`: ``--har`` read as ``--hard`` (GNU ``getopt_long`` and git's
  parse-options accept any unambiguous prefix of a long option);
* :func:`flags`: every flag of an argv, long options expanded, short clusters split;
* :func:`subcommand`: the verb after a program's global options (``kubectl -n prod
  delete``: ``delete``), skipping the options that take a value.
"""

from __future__ import annotations

from smllm.gate.shell._syntax import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence


class Options:
    """How one program reads its command line: the option spec :func:`read` follows.

    ``value``: the options that take a value (``-o FILE``, ``-oFILE``, ``--out FILE``,
    ``--out=FILE``); ``clusters``: a short cluster is read letter by letter, the first
    letter that takes a value taking the rest of the word or the next one (``-qc CMD``:
    ``-c CMD``); ``longs``: the long options (beyond ``value``) known by name, so that an
    unambiguous prefix reads as the option (``--chd`` as ``--chdir``, GNU
    ``getopt_long``); ``permute``: options may follow operands (GNU order) instead of the
    first operand ending them (POSIX order, every launcher); ``dash``: a lone ``-`` is an
    option (``env -``) instead of an operand (stdin).
    """

    __slots__ = ("clusters", "dash", "known", "permute", "value")

    def __init__(
        self, value: Iterable[str] = (), *, clusters: bool = False, longs: Iterable[str] = (),
        permute: bool = False, dash: bool = False,
    ) -> None:
        self.value = frozenset(value)
        self.clusters = clusters
        longs = tuple(longs)
        #: long options an abbreviation may stand for (none: abbreviations are not read)
        self.known: tuple[str, ...] = ()
        if longs:
            self.known = (*sorted(o for o in self.value if o.startswith("--")), *longs)
        self.permute = permute
        self.dash = dash


class Arg:
    """One item of an argv, as :func:`read` reads it.

    ``name``: the option (``-C``, ``--chdir``: spelled out when abbreviated; the letter
    that takes the value in a cluster), ``"--"`` for the end of the options, or ``""``
    for an operand; ``at``: the index of its word; ``end``: the index just past it and
    its value; ``value``: the index of the word holding its value (``-1`` when the value
    is attached or missing); ``attached``: the value written in the option's own word
    (``--out=FILE``, ``-oFILE``), or None.
    """

    __slots__ = ("at", "attached", "end", "name", "value")

    def __init__(self, name: str, at: int, end: int, value: int = -1,
                 attached: str | None = None) -> None:
        self.name = name
        self.at = at
        self.end = end
        self.value = value
        self.attached = attached

    def word(self, args: list[Word]) -> Word | None:
        """The option's value as a word (None when it has none)."""
        if self.attached is not None:
            return Word(self.attached, self.attached)
        return args[self.value] if self.value >= 0 else None


def read(values: Sequence[str | None], spec: Options, start: int = 0) -> Iterator[Arg]:
    """Each option (with its value) and operand of ``values[start:]``, in order, read as
    ``spec`` says. A word only known at run time (None) is an operand. In POSIX order
    the first operand ends the reading (it is the last item yielded); after ``--`` every
    word is an operand (in POSIX order: the first one only, the rest follow it)."""
    i = start
    n = len(values)
    while i < n:
        arg = item(values, spec, i)
        yield arg
        if arg.name == "--":
            yield from (Arg("", j, j + 1) for j in range(i + 1, n if spec.permute else
                                                         min(i + 2, n)))
            return
        if arg.name == "" and not spec.permute:
            return
        i = arg.end


def item(values: Sequence[str | None], spec: Options, i: int) -> Arg:
    """The one item that starts at ``values[i]``: ``--``, an operand, or an option with
    its value (for a reader that acts on each option as it meets it, like ``env``)."""
    v = values[i]
    if v == "--":
        return Arg("--", i, i + 1)
    if v is None or not v.startswith("-") or (v == "-" and not spec.dash):
        return Arg("", i, i + 1)
    return _option(v, i, len(values), spec)


def _option(v: str, i: int, n: int, spec: Options) -> Arg:
    nxt = i + 1 if i + 1 < n else -1
    if v.startswith("--"):
        return _long(v, i, nxt, spec)
    if v in spec.value:
        return Arg(v, i, i + 2, nxt)
    if spec.clusters:
        return _cluster(v, i, nxt, spec)
    head = v[:2]
    if len(v) > 2 and head in spec.value:
        return Arg(head, i, i + 1, attached=v[2:])
    return Arg(v, i, i + 1)


def _long(v: str, i: int, nxt: int, spec: Options) -> Arg:
    name, eq, attached = v.partition("=")
    if spec.known:
        name = long_option(name, spec.known)
    if eq:
        return Arg(name, i, i + 1, attached=attached)
    return Arg(name, i, i + 2, nxt) if name in spec.value else Arg(name, i, i + 1)


def _cluster(v: str, i: int, nxt: int, spec: Options) -> Arg:
    """``-abc``: letters without a value until one that takes the rest of the word (``=``
    dropped) or, at the end, the next word."""
    for k in range(1, len(v)):
        letter = f"-{v[k]}"
        if letter in spec.value:
            if k + 1 < len(v):
                return Arg(letter, i, i + 1, attached=v[k + 1:].removeprefix("="))
            return Arg(letter, i, i + 2, nxt)
    return Arg(v, i, i + 1)


def operands(values: Sequence[str | None], spec: Options) -> int:
    """The index of the first operand (after ``--`` when it ends the options);
    ``len(values)`` when there is none."""
    end = 0
    for arg in read(values, spec):
        if arg.name == "":
            return arg.at
        end = arg.end
    return min(end, len(values))


def skip_options(args: list[Word], with_arg: frozenset[str], positional: int) -> list[Word]:
    """The words after a launcher's options and its first ``positional`` operands."""
    rest = args[operands([a.value for a in args], Options(with_arg)):]
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


def subcommand(values: Sequence[str | None], with_arg: frozenset[str]) -> int:
    """The index of the first operand after global options (``len(values)`` if none):
    ``--opt value``, ``--opt=value``, ``-o value`` and ``-ovalue`` are skipped."""
    return operands(values, Options(with_arg))
