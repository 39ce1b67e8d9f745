"""What a database statement does: read, write, destroy or run something on the host.

Shared by the shell analyser (``psql -c``, ``mysql -e``, ``sqlite3 db 'SQL'``, heredocs)
and by the judgement of MCP query tools. The text is split into statements (quotes,
comments and dollar-quoting respected); each is classed by its verbs, so ``WITH x AS
(…) DELETE FROM t`` is a delete and ``DELETE FROM t WHERE id = 1`` is a write while
``DELETE FROM t`` (every row) destroys. A few document-store and key-value forms
(``db.dropDatabase()``, ``deleteMany({})``, ``FLUSHALL``) are read the same way.

>>> classify("SELECT * FROM users WHERE id = 1").effect
'read'
>>> classify("BEGIN; DELETE FROM users; COMMIT").effect
'destroy'
>>> classify("update accounts set plan = 'pro' where id = 7").effect
'write'
"""

from __future__ import annotations

import re

EFFECTS = ("read", "write", "exec", "destroy")  # in order of severity

_READ = frozenset({"select", "show", "explain", "describe", "desc", "values", "use", "set",
                   "begin", "commit", "rollback", "start", "end", "savepoint", "release",
                   "table", "fetch", "declare", "close", "listen", "unlisten", "prepare",
                   "deallocate", "reset", "discard", "checkpoint", "help"})
_WRITE = frozenset({"insert", "update", "delete", "merge", "upsert", "replace", "create",
                    "alter", "grant", "revoke", "copy", "vacuum", "analyze", "reindex",
                    "call", "exec", "execute", "load", "rename", "comment", "refresh",
                    "cluster", "lock", "notify", "import", "optimize", "pragma", "attach",
                    "detach", "do", "security", "reassign"})
_DESTROY_OBJECTS = frozenset({"table", "database", "schema", "index", "view", "collection",
                              "user", "role", "sequence", "function", "procedure", "trigger",
                              "materialized", "keyspace", "owned", "extension", "type",
                              "domain", "tablespace", "if"})
_DOC_DESTROY = re.compile(
    r"\bdropDatabase\s*\(|\.drop\s*\(\s*\)|\bdeleteMany\s*\(\s*\{\s*\}\s*\)|"
    r"\bremove\s*\(\s*\{\s*\}\s*\)|\bflushall\b|\bflushdb\b|\bdropIndexes\s*\(",
    re.IGNORECASE,
)
_DOC_WRITE = re.compile(
    r"\.(insert(One|Many)?|update(One|Many)?|replaceOne|delete(One|Many)|remove|"
    r"createIndex|bulkWrite|findOneAndUpdate|findOneAndDelete|renameCollection)\s*\(",
    re.IGNORECASE,
)
_EXEC = re.compile(
    r"\bfrom\s+program\b|\bto\s+program\b|\bxp_cmdshell\b|\bsys_exec\b|\bsys_eval\b|"
    r"\binto\s+(out|dump)file\b|\bload_file\s*\(|\blo_export\b|\bpg_read_server_files\b|"
    r"^\s*\\!|^\s*\.(shell|system)\b|^\s*!|\bcopy\b[^;]*\bto\s+'/",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Verdict:
    """The most severe ``effect`` of a text and the statement that has it."""

    __slots__ = ("effect", "statement")

    def __init__(self, effect: str, statement: str) -> None:
        self.effect = effect
        self.statement = statement

    def __repr__(self) -> str:
        return f"Verdict({self.effect!r}, {self.statement!r})"


def statements(text: str) -> list[str]:
    """``text`` split on ``;`` outside quotes, comments and ``$tag$`` strings, comments
    removed (``--``, ``#`` at a line start, ``/* */``)."""
    out: list[str] = []
    cur: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"`":
            end = i + 1
            while end < n and text[end] != c:
                end += 2 if text[end] == "\\" else 1
            cur.append(text[i:end + 1])
            i = end + 1
            continue
        if c == "$":
            m = re.match(r"\$[A-Za-z_0-9]*\$", text[i:])
            if m:
                close = text.find(m.group(0), i + len(m.group(0)))
                close = n if close < 0 else close + len(m.group(0))
                cur.append(text[i:close])
                i = close
                continue
        if text.startswith("--", i) or (c == "#" and (i == 0 or text[i - 1] == "\n")):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if c == ";":
            out.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return [s for s in out if s]


_META_WRITE = ("\\o", "\\w", "\\copy", "\\i", "\\ir", ".output", ".once", ".save",
               ".backup", ".restore", ".import", ".read", ".open", ".excel")


def _classify_one(stmt: str) -> str:
    if _EXEC.search(stmt):
        return "exec"
    if stmt.startswith(("\\", ".")):  # psql meta-commands, sqlite dot-commands
        head = stmt.split(None, 1)[0].lower()
        return "write" if head.startswith(_META_WRITE) else "read"
    if _DOC_DESTROY.search(stmt):
        return "destroy"
    words = [w.lower() for w in _WORD.findall(stmt)]
    if not words:
        return "read"
    return _by_verb(_verb(words), words, stmt)


def _verb(words: list[str]) -> str:
    """The statement's verb; for a CTE (``WITH …``), the one after the definitions."""
    if words[0] != "with":
        return words[0]
    verbs = [w for w in words if w in ("insert", "update", "delete", "merge", "select")]
    return next((v for v in verbs if v != "select"), "select")


def _destroys(first: str, words: list[str]) -> bool:
    """DROP/TRUNCATE (of an object that holds data), ALTER … DROP, DELETE or UPDATE
    without WHERE, FLUSHALL/FLUSHDB."""
    if (first in ("drop", "truncate") or (first == "alter" and "drop" in words)) and (
            first != "drop" or len(words) < 2 or words[1] in _DESTROY_OBJECTS):
        return True
    return (first in ("delete", "update") and "where" not in words) or first in (
        "flushall", "flushdb")


def _by_verb(first: str, words: list[str], stmt: str) -> str:
    if _destroys(first, words):
        return "destroy"
    if first in ("explain",) and "analyze" in words and any(
            w in words for w in ("insert", "update", "delete")):
        return "write"
    if first in _READ:
        return "read"
    if first in _WRITE or _DOC_WRITE.search(stmt):
        return "write"
    if re.search(r"\.(find|aggregate|count|countDocuments|distinct|getCollectionNames)\s*\(",
                 stmt):
        return "read"
    return "write"  # an unknown verb is not known to be harmless


def classify(text: str) -> Verdict:
    """The most severe effect among the statements of ``text``."""
    worst = Verdict("read", "")
    for stmt in statements(text):
        effect = _classify_one(stmt)
        if EFFECTS.index(effect) > EFFECTS.index(worst.effect):
            worst = Verdict(effect, stmt[:80])
    return worst
