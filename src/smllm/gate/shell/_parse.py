"""A shell parser for analysis: bash syntax in, simple commands out.

It is not an interpreter. It reads a command string the way bash would split it
(quotes, escapes, ``$'…'``, line continuations, substitutions, redirections, heredocs,
pipelines, lists, groups, loops, functions) and returns every *simple command* it
contains, including those inside command and process substitutions, with each word's
value when it can be known without running anything (``None`` otherwise).

Known values: literal text after quote removal, ``~``, ``$HOME``, ``$PWD``,
``$TMPDIR`` (unless the script assigns it) and ``$(echo STATIC)``. Everything else
(other variables, ``$(cmd)``, arithmetic) is unknown, and the analyser treats the
unknown conservatively. The parser never raises and always terminates: malformed
input is recorded in :attr:`Script.errors`.
"""

from __future__ import annotations

from smllm.gate.shell._syntax import Env, Redirect, Script, Simple, Word
from smllm.gate.shell._words import WordReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Redirect", "Script", "Simple", "Word", "parse"]

_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")


def _name_end(s: str, i: int) -> int:
    """The end of a shell name (``[A-Za-z_][A-Za-z0-9_]*``) starting at ``i``, or ``i``."""
    if i >= len(s) or s[i] not in _NAME_START:
        return i
    j = i + 1
    while j < len(s) and s[j] in _NAME_CHARS:
        j += 1
    return j


def is_assignment(raw: str) -> bool:
    r"""``NAME=…``, ``NAME+=…`` or ``NAME[sub]=…`` (the regular expression
    ``[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=``, hand-written: it runs on every command)."""
    j = _name_end(raw, 0)
    if j == 0:
        return False
    if raw.startswith("[", j):
        close = raw.find("]", j + 1)
        if close < 0:
            return False
        j = close + 1
    if raw.startswith("+", j):
        j += 1
    return raw.startswith("=", j)


def _fd_prefix_end(s: str, i: int) -> int | None:
    r"""The end of a redirect's fd prefix at ``i`` (``\d+`` or ``{name}``), or None."""
    j = i
    while j < len(s) and s[j].isdigit() and s[j].isascii():
        j += 1
    if j > i:
        return j
    if s.startswith("{", i):
        k = _name_end(s, i + 1)
        if k > i + 1 and s.startswith("}", k):
            return k + 1
    return None
_RESERVED = frozenset(
    {
        "!",
        "{",
        "}",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "esac",
        "if",
        "while",
        "until",
        "time",
        "coproc",
    }
)
#: reserved words that open a command rather than finish one: an operator right after them
#: has no command before it (``if && x``)
_OPENERS = frozenset({"!", "{", "[[", "if", "then", "else", "elif", "do", "while", "until",
                      "time", "coproc", "for", "select", "case", "function"})
_OPERATORS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">")
#: the characters an operator, a redirection starts with: at any other, none is tried
_OPERATOR_START = frozenset(op[0] for op in _OPERATORS)
_REDIRECT_START = frozenset(op[0] for op in _REDIRECTS)


def parse(text: str, *, cwd: str = "/", home: str = "/root", tmpdir: str = "/tmp") -> Script:  # noqa: S108 - bash's default $TMPDIR
    """Parse ``text``; never raises."""
    p = _Parser(text, 0, Env(cwd, home, tmpdir))
    p.run()
    return Script(p.commands, p.errors, p.functions)


class _Parser(WordReader):
    def __init__(self, text: str, depth: int, env: Env, nested: bool = False) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)
        self.depth = depth
        self.env = env
        self.nested = nested
        self.commands: list[Simple] = []
        self.errors: list[str] = []
        self.functions: list[str] = []
        self.heredocs: list[tuple[str, bool, bool, Redirect]] = []
        self.cur = Simple(nested=nested)
        self.pipe_from: Simple | None = None
        self.mode = ""  # "", "for-in", "case-subject", "case-pattern", "dbracket"
        self.mode_count = 0
        self.started = False  # a word or redirection has been read (a command, or ``]]``)

    def _subparser(self, text: str, depth: int, nested: bool = False) -> _Parser:
        return _Parser(text, depth, self.env, nested)

    # ----------------------------------------------------------------- structure

    def run(self) -> None:
        while self.i < self.n:
            self._skip_blanks()
            if self.i >= self.n:
                break
            c = self.s[self.i]
            if c == "#" and self._token_start():
                while self.i < self.n and self.s[self.i] != "\n":
                    self.i += 1
                continue
            if c == "\n":
                self.i += 1
                self._finish(";")
                self._read_heredocs()
                continue
            if self._try_redirect():
                continue
            op = self._match(_OPERATORS) if c in _OPERATOR_START else None
            if op:
                self.i += len(op)
                self._operator(op)
                continue
            self._word()
        self._finish(";")
        if self.heredocs:
            self._read_heredocs()
        if self.mode in {"case-pattern", "case-subject"}:
            self.errors.append("unterminated case statement")

    def _token_start(self) -> bool:
        return self.i == 0 or self.s[self.i - 1] in " \t\n;&|()"

    def _skip_blanks(self) -> None:
        while self.i < self.n:
            c = self.s[self.i]
            if c in " \t\r":
                self.i += 1
            elif c == "\\" and self.s.startswith("\\\n", self.i):
                self.i += 2
            else:
                break

    def _match(self, options: tuple[str, ...]) -> str | None:
        for op in options:
            if self.s.startswith(op, self.i):
                return op
        return None

    def _operator(self, op: str) -> None:
        if op == "(":
            if len(self.cur.words) == 1 and not self.cur.redirects and self._peek_close():
                self.functions.append(self.cur.words[0].value or self.cur.words[0].raw)
                self.cur = Simple(nested=self.nested)
                return
            if not self.cur.empty() and self.mode != "case-pattern":
                self.errors.append(f"unexpected '(' at offset {self.i - 1}")
            self._finish(";")
            return
        if op == ")":
            if self.mode == "case-pattern":
                self.mode = ""
                self.cur = Simple(nested=self.nested)
                return
            self._finish(";")
            return
        if op in (";;", ";&", ";;&"):
            self._finish(";")
            self.mode = "case-pattern"
            return
        if self.cur.empty() and op in ("|", "|&", "&&", "||", "&") and not self.started:
            self.errors.append(f"syntax error: {op!r} with no command before it")
        if op == "&":
            self.cur.background = True
        self._finish(op)

    def _peek_close(self) -> bool:
        j = self.i
        while j < self.n and self.s[j] in " \t":
            j += 1
        if j < self.n and self.s[j] == ")":
            self.i = j + 1
            return True
        return False

    def _finish(self, op: str) -> None:
        cur = self.cur
        if not cur.empty():
            cur.stdin = self.pipe_from
            self.commands.append(cur)
            self.pipe_from = cur if op in ("|", "|&") else None
        elif op not in ("|", "|&"):
            self.pipe_from = None
        self.cur = Simple(nested=self.nested)
        if self.mode in ("for-in", "dbracket") and op in (";", "&", "&&", "||"):
            self.mode = "" if self.mode == "for-in" else self.mode

    # ----------------------------------------------------------------- words

    def _word(self) -> None:
        start = self.i
        command_position = not self.cur.words
        word = self._read_word()
        if self.i == start:  # defensive: always advance
            self.i += 1
            return
        if word.value not in _OPENERS:
            self.started = True
        in_mode = _MODE_WORDS.get(self.mode)
        if in_mode is not None and in_mode(self, word):
            return
        if (
            command_position
            and not self.cur.assigns
            and word.value is not None
            and self._reserved(word.value)
        ):
            return
        if command_position and is_assignment(word.raw):
            name = word.raw.split("=", 1)[0].split("[", 1)[0].rstrip("+")
            self.env.assigned.add(name)
            value = word.value.split("=", 1)[1] if word.value is not None else None
            if word.raw.endswith("=") and self.s.startswith("(", self.i):
                self._array()
                value = None
            self.cur.assigns.append((name, value))
            return
        self.cur.words.append(word)

    def _array(self) -> None:
        """The words of ``name=(…)``: data, though their substitutions run."""
        self.i += 1
        while self.i < self.n:
            self._skip_blanks()
            c = self.s[self.i] if self.i < self.n else ""
            if c in ("\n", ""):
                self.i += 1
            elif c == ")":
                self.i += 1
                return
            elif c == "#" and self._token_start():
                end = self.s.find("\n", self.i)
                self.i = self.n if end < 0 else end
            else:
                start = self.i
                self._read_word()
                if self.i == start:  # an operator: bash refuses the whole line
                    self.errors.append(f"unexpected {c!r} in an array at offset {start}")
                    self.i += 1
        self.errors.append("unterminated array assignment")

    # a word read in a mode of the grammar: True when the mode takes it (it is no
    # command word); see _MODE_WORDS

    def _case_subject(self, word: Word) -> bool:
        self.mode_count += 1
        if word.value == "in" and self.mode_count > 1:
            self.mode = "case-pattern"
        return True

    def _case_pattern(self, word: Word) -> bool:
        if word.value == "esac":
            self.mode = ""
        return True

    def _for_in(self, word: Word) -> bool:
        return True

    def _dbracket(self, word: Word) -> bool:
        if word.value == "]]":
            self.mode = ""
        return True

    def _for_name(self, word: Word) -> bool:
        self.mode = "for-after"
        return True

    def _for_after(self, word: Word) -> bool:
        self.mode = "for-in" if word.value == "in" else ""
        return bool(self.mode)

    def _function_name(self, word: Word) -> bool:
        self.mode = ""
        self.functions.append(word.value or word.raw)
        self._peek_parens()
        return True

    def _reserved(self, value: str) -> bool:
        if value in _RESERVED:
            return True
        if value in ("for", "select"):
            self.mode = "for-name"
            return True
        if value == "case":
            self.mode, self.mode_count = "case-subject", 0
            return True
        if value == "[[":
            self.mode = "dbracket"
            return True
        if value == "function":
            self.mode = "function-name"
            return True
        return False

    def _peek_parens(self) -> None:
        j = self.i
        while j < self.n and self.s[j] in " \t":
            j += 1
        if self.s.startswith("()", j):
            self.i = j + 2

    def _try_redirect(self) -> bool:
        if self.mode == "dbracket":  # ``[[ a < b ]]`` compares strings
            return False
        s = self.s
        i = self.i
        end = _fd_prefix_end(s, i)
        m = end is not None
        j = end if end is not None else i
        if (m and self._token_start() is False) or j >= len(s) or s[j] not in _REDIRECT_START:
            return False
        op = None
        for cand in _REDIRECTS:
            if s.startswith(cand, j):
                op = cand
                break
        if op is None or (not m and op in ("<", ">") and s.startswith("(", j + 1)):
            return False
        if op in ("&>", "&>>") and m:
            return False
        self.i = j + len(op)
        self.started = True
        self._skip_blanks()
        if (self.i >= self.n or s[self.i] in "\n;&|()") and not (
            op in ("<&", ">&") and s.startswith("-", self.i)
        ):
            self.errors.append(f"redirection {op!r} has no target")
            self.cur.redirects.append(Redirect(op, None))
            return True
        if op in ("<<", "<<-"):
            target = self._read_word()
            redirect = Redirect(op, target, "", True)
            self.heredocs.append(
                (target.value or target.raw, op == "<<-", target.quoted, redirect)
            )
        else:
            target = self._read_word()
            redirect = Redirect(op, target)
            if op == "<<<":
                redirect.body = target.value
                redirect.body_known = target.value is not None
        self.cur.redirects.append(redirect)
        return True

    def _read_heredocs(self) -> None:
        pending, self.heredocs = self.heredocs, []
        for delim, strip, quoted, redirect in pending:
            lines: list[str] = []
            closed = False
            while self.i < self.n:
                end = self.s.find("\n", self.i)
                end = self.n if end < 0 else end
                line = self.s[self.i : end]
                self.i = min(end + 1, self.n)
                check = line.lstrip("\t") if strip else line
                if check == delim:
                    closed = True
                    break
                lines.append(check)
            body = "\n".join(lines) + ("\n" if lines else "")
            if not closed:
                self.errors.append(f"heredoc delimited by {delim!r} is not closed")
            if quoted:
                redirect.body = body
            else:
                sub = _Parser(body, self.depth, self.env, nested=True)
                value = sub._dquoted("")
                self.commands.extend(sub.commands)
                self.errors.extend(sub.errors)
                redirect.body = value if value is not None else body
                redirect.body_known = value is not None


#: the parser's modes that read a word their own way (``case X in``, ``for N in``,
#: ``[[ … ]]``, ``function NAME``)
_MODE_WORDS: dict[str, Callable[[_Parser, Word], bool]] = {
    "case-subject": _Parser._case_subject,
    "case-pattern": _Parser._case_pattern,
    "for-in": _Parser._for_in,
    "dbracket": _Parser._dbracket,
    "for-name": _Parser._for_name,
    "for-after": _Parser._for_after,
    "function-name": _Parser._function_name,
}
