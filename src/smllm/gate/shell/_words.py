"""Reading one shell word: quotes, escapes, ``$'…'``, expansions and substitutions.

:class:`WordReader` is the half of the parser that reads words; it knows a value when
it can be known statically (see :mod:`smllm.gate.shell._parse`) and parses every command
or process substitution it meets as a nested script.
"""

from __future__ import annotations

from smllm.gate.shell._model import LazyRe
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._syntax import MAX_DEPTH, META, Env, Simple, Word, static_output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

#: the characters a word reads other than as themselves (a plain run stops at them)
_SPECIAL = META | frozenset("\\'\"$`~*?[{")
_NAME_RE = LazyRe(r"[A-Za-z_][A-Za-z0-9_]*")
#: variables bash sets to a number (unless the script assigns them)
_NUMERIC = frozenset({"RANDOM", "SRANDOM", "SECONDS", "BASHPID", "PPID", "UID", "EUID",
                      "LINENO", "EPOCHSECONDS", "EPOCHREALTIME", "SHLVL", "COLUMNS", "LINES"})
_ANSI = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


class _Part:
    """The word being read: its pieces of value, whether all of it is known, whether it
    is a glob, whether any of it was quoted, and whether the reading is at its start."""

    __slots__ = ("first", "glob", "known", "parts", "quoted")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.known = True
        self.glob = False
        self.quoted = False
        self.first = True

    def add(self, value: str | None) -> None:
        """A piece whose value may be unknown (an expansion, a substitution)."""
        self.known = self.known and value is not None
        self.parts.append(value or "")


class WordReader:
    """Word-level reading over ``self.s`` from ``self.i`` (mixed into the parser)."""

    s: str
    i: int
    n: int
    depth: int
    env: Env
    errors: list[str]
    commands: list[Simple]
    functions: list[str]

    if TYPE_CHECKING:
        # ``_parse._Parser``, which mixes this reader in, defines both (a reader typed
        # here, so that this module need not import the parser that imports it): a
        # parser over ``text`` sharing this one's environment (a substitution is parsed
        # as a nested script), and running it over its whole text
        def _subparser(self, text: str, depth: int, nested: bool = False) -> WordReader: ...

        def run(self) -> None: ...

    def _read_word(self) -> Word:
        start = self.i
        part = _Part()
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c in "<>" and s.startswith("(", self.i + 1):
                self._substitution(self.i + 2, ")")  # <(…), >(…): a process substitution
                part.known = False
            elif c in META:
                break
            elif c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue  # a line continuation: the word goes on, still at its start
                self._escaped(part)
            elif c in _QUOTES_AND_EXPANSIONS:
                _QUOTES_AND_EXPANSIONS[c](self, part)
            elif c == "~" and part.first:
                part.parts.append(self._tilde())
            else:
                self._plain(c, part)
            part.first = False
        raw = s[start : self.i]
        return Word(raw, "".join(part.parts) if part.known else None, part.glob, part.quoted)

    # the pieces of a word (see _read_word): each reads from self.i into the word's part

    def _escaped(self, part: _Part) -> None:
        part.quoted = True
        if self.i + 1 < self.n:
            part.parts.append(self.s[self.i + 1])
        self.i += 2

    def _single_quoted(self, part: _Part) -> None:
        part.quoted = True
        end = self.s.find("'", self.i + 1)
        if end < 0:
            self.errors.append("unterminated single quote")
            end = self.n
        part.parts.append(self.s[self.i + 1 : end])
        self.i = end + 1

    def _double_quoted(self, part: _Part) -> None:
        part.quoted = True
        self.i += 1
        part.add(self._dquoted('"'))

    def _dollar_part(self, part: _Part) -> None:
        val, was_quote = self._dollar()
        part.quoted = part.quoted or was_quote
        part.add(val)

    def _backtick_part(self, part: _Part) -> None:
        part.add(self._backtick())

    def _plain(self, c: str, part: _Part) -> None:
        """An ordinary character, and the ordinary ones that follow it (read at once)."""
        s = self.s
        if (
            c in "*?"
            or (c == "[" and "]" in s[self.i + 1 : self._word_end()])
            or (c == "{" and "," in s[self.i : s.find("}", self.i) + 1 or self.i])
        ):
            part.glob = True
        j = self.i + 1
        while j < self.n and s[j] not in _SPECIAL:
            j += 1
        part.parts.append(s[self.i : j])
        self.i = j

    def _word_end(self) -> int:
        j = self.i
        while j < self.n and self.s[j] not in META:
            j += 1
        return j

    def _tilde(self) -> str:
        m = re.compile(r"~([A-Za-z0-9._+-]*)").match(self.s, self.i)
        assert m is not None
        self.i = m.end()
        name = m.group(1)
        if name == "":
            return self.env.home
        if name == "+":
            return self.env.cwd
        return f"/home/{name}"

    def _dquoted(self, end: str) -> str | None:
        """Contents of a double-quoted string (after the opening quote)."""
        parts: list[str] = []
        known = True
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c == end:
                self.i += 1
                return "".join(parts) if known else None
            if c == "\\" and self.i + 1 < self.n:
                nxt = s[self.i + 1]
                if nxt == "\n":
                    pass
                elif nxt in '$`"\\':
                    parts.append(nxt)
                else:
                    parts.append("\\" + nxt)
                self.i += 2
            elif c == "$":
                val, _ = self._dollar(in_dquote=True)
                known = known and val is not None
                parts.append(val or "")
            elif c == "`":
                val = self._backtick()
                known = known and val is not None
                parts.append(val or "")
            else:
                parts.append(c)
                self.i += 1
        if end:
            self.errors.append("unterminated double quote")
        return "".join(parts) if known else None

    def _dollar(self, in_dquote: bool = False) -> tuple[str | None, bool]:
        s = self.s
        i = self.i
        if s.startswith(("$(", "${"), i):
            return self._expansion(i), False
        if not in_dquote and s.startswith("$'", i):
            return self._ansi_c(i + 2), True
        if not in_dquote and s.startswith('$"', i):
            self.i = i + 2
            return self._dquoted('"'), True
        m = _NAME_RE.match(s, i + 1)
        if m:
            self.i = m.end()
            return self._param(m.group(0)), False
        if i + 1 < self.n and s[i + 1] in "0123456789@*#?$!-":
            self.i = i + 2
            # $$, $!, $?, $#: a number (a process id, a status, a count), never a path
            return ("0" if s[i + 1] in "$!?#" else None), False
        self.i = i + 1
        return "$", False

    def _expansion(self, i: int) -> str | None:
        """``$((…))``, ``$(…)`` and ``${…}`` at ``i``."""
        s = self.s
        if s.startswith("$((", i):
            self._arithmetic(i + 3)
            return None
        if s.startswith("$(", i):
            return self._substitution(i + 2, ")")
        end = self._balanced(i + 2, "{", "}")
        inner = s[i + 2 : end - 1]
        self.i = end
        return self._param_braced(inner)

    def _param(self, name: str) -> str | None:
        if name in self.env.assigned:
            return None
        if name in _NUMERIC:
            return "0"  # a number: whatever its value, it holds no path
        if name == "HOME":
            return self.env.home
        if name == "PWD":
            return self.env.cwd
        if name == "TMPDIR":
            return self.env.tmpdir
        return None

    def _param_braced(self, inner: str) -> str | None:
        m = _NAME_RE.match(inner)
        if not m:
            return None
        rest = inner[m.end() :]
        if rest == "":
            return self._param(m.group(0))
        if m.group(0) == "TMPDIR" and rest in (":-/tmp", "-/tmp", ":-/tmp/", "-/tmp/"):
            return self._param("TMPDIR")
        if "$(" in rest or "`" in rest:
            self._nested_operand(rest)
        return None

    def _nested_operand(self, text: str) -> None:
        """The substitutions in the operand of ``${name…}``: a word, not a script, read as
        inside double quotes, where bash runs ``$(…)`` even between single quotes
        (``"${x:-'$(id)'}"``); unquoted, those quotes would protect it: reading more is
        the cautious side."""
        if self.depth >= MAX_DEPTH:
            self.errors.append("substitutions nested too deeply to analyse")
            return
        sub = self._subparser(text, self.depth + 1, nested=True)
        sub._dquoted("")
        self.commands.extend(sub.commands)
        self.errors.extend(sub.errors)
        self.functions.extend(sub.functions)

    def _ansi_c(self, i: int) -> str:
        out: list[str] = []
        s = self.s
        while i < self.n and s[i] != "'":
            c = s[i]
            if c != "\\" or i + 1 >= self.n:
                out.append(c)
                i += 1
                continue
            nxt = s[i + 1]
            if nxt in _ANSI:
                out.append(_ANSI[nxt])
                i += 2
            elif nxt in "xuU":
                size = {"x": 2, "u": 4, "U": 8}[nxt]
                m = re.compile(f"[0-9a-fA-F]{{1,{size}}}").match(s, i + 2)
                if m:
                    out.append(chr(min(int(m.group(0), 16), 0x10FFFF)))
                    i = m.end()
                else:
                    out.append("\\" + nxt)
                    i += 2
            elif nxt in "01234567":
                m = re.compile("[0-7]{1,3}").match(s, i + 1)
                assert m is not None
                out.append(chr(int(m.group(0), 8)))
                i = m.end()
            elif nxt == "c" and i + 2 < self.n:
                out.append(chr(ord(s[i + 2]) & 0x1F))
                i += 3
            else:
                out.append("\\" + nxt)
                i += 2
        if i >= self.n:
            self.errors.append("unterminated $'...' string")
        self.i = i + 1
        return "".join(out)

    def _balanced(self, i: int, open_: str, close: str) -> int:
        """Index just past the ``close`` matching an already consumed ``open_``."""
        depth = 1
        s = self.s
        while i < self.n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'" and open_ != "{":
                end = s.find("'", i + 1)
                i = self.n if end < 0 else end + 1
                continue
            if c == '"':
                i = self._skip_dquote(i + 1)
                continue
            if c == "`":
                end = s.find("`", i + 1)
                i = self.n if end < 0 else end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self.errors.append(f"unterminated {open_!r}")
        return self.n

    def _skip_dquote(self, i: int) -> int:
        s = self.s
        while i < self.n:
            c = s[i]
            if c == "\\":
                i += 2
            elif c == '"':
                return i + 1
            elif s.startswith("$(", i):
                i = self._balanced(i + 2, "(", ")")
            else:
                i += 1
        return self.n

    def _substitution(self, start: int, close: str) -> str | None:
        end = self._balanced(start, "(", close)
        inner = (
            self.s[start : end - 1]
            if end <= self.n and self.s[end - 1 : end] == ")"
            else self.s[start:end]
        )
        self.i = end
        return self._nested_script(inner)

    def _arithmetic(self, start: int) -> None:
        end = self._balanced(start, "(", ")")
        if self.s.startswith(")", end):
            end += 1
        inner = self.s[start:end]
        self.i = end
        for m in re.finditer(r"\$\(|`", inner):
            if m.group(0) == "`":
                close = inner.find("`", m.end())
                if close > 0:
                    self._nested_script(inner[m.end() : close])
            else:
                sub = self._subparser(inner, self.depth)
                sub.i = m.end()
                sub._substitution(m.end(), ")")
                self.commands.extend(sub.commands)
                self.errors.extend(sub.errors)

    def _backtick(self) -> str | None:
        s = self.s
        i = self.i + 1
        out: list[str] = []
        while i < self.n and s[i] != "`":
            if s[i] == "\\" and i + 1 < self.n and s[i + 1] in "`$\\":
                out.append(s[i + 1])
                i += 2
                continue
            out.append(s[i])
            i += 1
        if i >= self.n:
            self.errors.append("unterminated backquote")
        self.i = i + 1
        return self._nested_script("".join(out))

    def _nested_script(self, inner: str) -> str | None:
        if self.depth >= MAX_DEPTH:
            self.errors.append("substitutions nested too deeply to analyse")
            return None
        sub = self._subparser(inner, self.depth + 1, nested=True)
        sub.run()
        self.commands.extend(sub.commands)
        self.errors.extend(sub.errors)
        self.functions.extend(sub.functions)
        return static_output(sub.commands, self.env)


#: how _read_word reads a quote or an expansion that starts with this character
_QUOTES_AND_EXPANSIONS: dict[str, Callable[[WordReader, _Part], None]] = {
    "'": WordReader._single_quoted,
    '"': WordReader._double_quoted,
    "$": WordReader._dollar_part,
    "`": WordReader._backtick_part,
}
