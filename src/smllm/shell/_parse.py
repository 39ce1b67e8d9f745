# ruff: noqa: PLR0911, PLR0912, PLR0915, C901, S108 - a shell grammar is a big case analysis; /tmp is data here
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

import re

from smllm.shell._model import LazyRe

MAX_DEPTH = 12
_META = frozenset(" \t\n;&|()<>")
_ASSIGN_RE = LazyRe(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_NAME_RE = LazyRe(r"[A-Za-z_][A-Za-z0-9_]*")
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
_OPERATORS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">&", ">>", ">|", "<", ">")
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


class Word:
    """One shell word: its source text and, when knowable, its value."""

    __slots__ = ("glob", "quoted", "raw", "value")

    def __init__(
        self, raw: str, value: str | None, glob: bool = False, quoted: bool = False
    ) -> None:
        self.raw = raw
        self.value = value
        self.glob = glob
        self.quoted = quoted

    def __repr__(self) -> str:
        return f"Word({self.raw!r}, {self.value!r})"


class Redirect:
    """``op`` (``>``, ``>>``, ``<<``, ``<<<``, …), its target word and any heredoc body."""

    __slots__ = ("body", "body_known", "op", "target")

    def __init__(
        self, op: str, target: Word | None, body: str | None = None, body_known: bool = True
    ) -> None:
        self.op = op
        self.target = target
        self.body = body
        self.body_known = body_known


class Simple:
    """A simple command: assignments, words, redirections and where its stdin comes from."""

    __slots__ = ("assigns", "background", "nested", "redirects", "stdin", "words")

    def __init__(self, nested: bool = False) -> None:
        self.words: list[Word] = []
        self.assigns: list[str] = []
        self.redirects: list[Redirect] = []
        self.stdin: Simple | None = None
        self.nested = nested
        self.background = False

    def empty(self) -> bool:
        return not (self.words or self.assigns or self.redirects)


class Script:
    """Every simple command of a command string, in order, and the syntax problems."""

    __slots__ = ("commands", "errors", "functions")

    def __init__(self, commands: list[Simple], errors: list[str], functions: list[str]) -> None:
        self.commands = commands
        self.errors = errors
        self.functions = functions


class _Env:
    __slots__ = ("assigned", "cwd", "home", "tmpdir")

    def __init__(self, cwd: str, home: str, tmpdir: str) -> None:
        self.cwd = cwd
        self.home = home
        self.tmpdir = tmpdir
        self.assigned: set[str] = set()


def parse(text: str, *, cwd: str = "/", home: str = "/root", tmpdir: str = "/tmp") -> Script:
    """Parse ``text``; never raises."""
    p = _Parser(text, 0, _Env(cwd, home, tmpdir))
    p.run()
    return Script(p.commands, p.errors, p.functions)


class _Parser:
    def __init__(self, text: str, depth: int, env: _Env, nested: bool = False) -> None:
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
            op = self._match(_OPERATORS)
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
        if self.cur.empty() and op in ("|", "|&", "&&", "||", "&") and not self.commands:
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
        if self.mode == "case-subject":
            self.mode_count += 1
            if word.value == "in" and self.mode_count > 1:
                self.mode = "case-pattern"
            return
        if self.mode == "case-pattern":
            if word.value == "esac":
                self.mode = ""
            return
        if self.mode == "for-in":
            return
        if self.mode == "dbracket":
            if word.value == "]]":
                self.mode = ""
            return
        if self.mode == "for-name":
            self.mode = "for-after"
            return
        if self.mode == "for-after":
            self.mode = "for-in" if word.value == "in" else ""
            if self.mode:
                return
        if self.mode == "function-name":
            self.mode = ""
            self.functions.append(word.value or word.raw)
            self._peek_parens()
            return
        if (
            command_position
            and not self.cur.assigns
            and word.value is not None
            and self._reserved(word.value)
        ):
            return
        if command_position and _ASSIGN_RE.match(word.raw):
            name = word.raw.split("=", 1)[0].split("[", 1)[0].rstrip("+")
            self.env.assigned.add(name)
            self.cur.assigns.append(name)
            return
        self.cur.words.append(word)

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

    def _read_word(self) -> Word:
        start = self.i
        parts: list[str] = []
        known = True
        glob = False
        quoted = False
        s = self.s
        first = True
        while self.i < self.n:
            c = s[self.i]
            if c in "<>" and s.startswith("(", self.i + 1):
                self._substitution(self.i + 2, ")")
                known = False
                first = False
                continue
            if c in _META:
                break
            if c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                quoted = True
                if self.i + 1 < self.n:
                    parts.append(s[self.i + 1])
                self.i += 2
                first = False
                continue
            if c == "'":
                quoted = True
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.errors.append("unterminated single quote")
                    end = self.n
                parts.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                quoted = True
                self.i += 1
                val = self._dquoted('"')
                known = known and val is not None
                parts.append(val or "")
            elif c == "$":
                val, was_quote = self._dollar()
                quoted = quoted or was_quote
                known = known and val is not None
                parts.append(val or "")
            elif c == "`":
                val = self._backtick()
                known = known and val is not None
                parts.append(val or "")
            elif c == "~" and first:
                parts.append(self._tilde())
            else:
                if (
                    c in "*?"
                    or (c == "[" and "]" in s[self.i + 1 : self._word_end()])
                    or (c == "{" and "," in s[self.i : s.find("}", self.i) + 1 or self.i])
                ):
                    glob = True
                parts.append(c)
                self.i += 1
            first = False
        raw = s[start : self.i]
        return Word(raw, "".join(parts) if known else None, glob, quoted)

    def _word_end(self) -> int:
        j = self.i
        while j < self.n and self.s[j] not in _META:
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
        if s.startswith("$((", i):
            self._arithmetic(i + 3)
            return None, False
        if s.startswith("$(", i):
            return self._substitution(i + 2, ")"), False
        if s.startswith("${", i):
            end = self._balanced(i + 2, "{", "}")
            inner = s[i + 2 : end - 1]
            self.i = end
            return self._param_braced(inner), False
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
            return None, False
        self.i = i + 1
        return "$", False

    def _param(self, name: str) -> str | None:
        if name in self.env.assigned:
            return None
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
            self._nested_script(rest)
        return None

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
                sub = _Parser(inner, self.depth, self.env)
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
        sub = _Parser(inner, self.depth + 1, self.env, nested=True)
        sub.run()
        self.commands.extend(sub.commands)
        self.errors.extend(sub.errors)
        self.functions.extend(sub.functions)
        return _static_output(sub.commands, self.env)

    # ----------------------------------------------------------------- redirections

    def _try_redirect(self) -> bool:
        s = self.s
        i = self.i
        m = re.compile(r"\d+|\{[A-Za-z_][A-Za-z0-9_]*\}").match(s, i)
        j = m.end() if m else i
        if m and self._token_start() is False:
            return False
        op = None
        for cand in _REDIRECTS:
            if s.startswith(cand, j):
                op = cand
                break
        if op is None or (m is None and op in ("<", ">") and s.startswith("(", j + 1)):
            return False
        if op in ("&>", "&>>") and m:
            return False
        self.i = j + len(op)
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


def _static_output(commands: list[Simple], env: _Env) -> str | None:
    """What ``$(…)`` prints when it is one static ``echo``/``printf``/``pwd``."""
    if len(commands) != 1:
        return None
    cmd = commands[0]
    if cmd.redirects or cmd.assigns or not cmd.words:
        return None
    values = [w.value for w in cmd.words]
    if any(v is None for v in values) or any(w.glob for w in cmd.words):
        return None
    argv = [v for v in values if v is not None]
    if argv == ["pwd"]:
        return env.cwd
    if argv[0] == "echo":
        args = argv[1:]
        while args and args[0] in ("-n", "-e", "-E"):
            args = args[1:]
        return " ".join(args)
    if argv[0] == "printf" and len(argv) == 2 and "%" not in argv[1] and "\\" not in argv[1]:
        return argv[1]
    return None
