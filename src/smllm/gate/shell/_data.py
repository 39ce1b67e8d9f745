"""Database clients: the statements they run, classed by :mod:`smllm.gate.sql`.

The SQL comes from the command line (``psql -c``, ``mysql -e``, ``sqlite3 DB 'SQL'``,
``mongosh --eval``, ``redis-cli CMD``), a file (``-f``, ``< dump.sql``) or stdin (a
heredoc, ``echo … |``). A statement that destroys data (``DROP``, ``TRUNCATE``,
``DELETE`` without ``WHERE``, ``FLUSHALL``, ``dropDatabase()``) is denied; one that runs
something on the host (``\\!``, ``.shell``, ``COPY … PROGRAM``) has that command analysed.
``dropdb``, ``dropuser``, ``mysqladmin drop`` and ``redis-cli`` (whose commands are
words, not SQL) are rows of the program table (:mod:`._tabledata`).
"""

from __future__ import annotations

from smllm.gate import sql
from smllm.gate.shell._analyse import nested, read_script, stdin_text, write_target
from smllm.gate.shell._decisions import finding
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:

    Result = tuple[list[Finding], bool]

#: per client: options whose value is SQL, options whose value is a file of SQL,
#: options whose value is a file it writes, and whether operands after the first are SQL
_CLIENTS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], bool]] = {
    "psql": (frozenset({"-c", "--command"}), frozenset({"-f", "--file"}),
             frozenset({"-o", "--output", "-L", "--log-file"}), False),
    "mysql": (frozenset({"-e", "--execute"}), frozenset(), frozenset({"--tee"}), False),
    "mariadb": (frozenset({"-e", "--execute"}), frozenset(), frozenset({"--tee"}), False),
    "sqlite3": (frozenset({"-cmd"}), frozenset({"-init"}), frozenset(), True),
    "duckdb": (frozenset({"-c", "-cmd", "-s"}), frozenset({"-f", "-init"}), frozenset(), True),
    "mongo": (frozenset({"--eval"}), frozenset(), frozenset(), True),
    "mongosh": (frozenset({"--eval"}), frozenset({"-f", "--file"}), frozenset(), True),
    "clickhouse-client": (frozenset({"-q", "--query"}), frozenset({"--queries-file"}),
                          frozenset(), False),
    "cockroach": (frozenset({"-e", "--execute"}), frozenset({"-f", "--file"}), frozenset(),
                  False),
    "sqlcmd": (frozenset({"-Q", "-q"}), frozenset({"-i"}), frozenset({"-o"}), False),
    "cqlsh": (frozenset({"-e", "--execute"}), frozenset({"-f", "--file"}), frozenset(), False),
}


def client(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    texts, out, operands = _read_options(name, args, ctx)
    if _CLIENTS[name][3]:
        texts += _positional_sql(name, operands, ctx)
    texts += _stdin_sql(cmd, ctx)
    return out + _judge(name, "\n;\n".join(texts), ctx), False


def _option_value(args: list[Word], i: int, keys: frozenset[str], short: frozenset[str]
                  ) -> tuple[str, Word | None, int] | None:
    """(option, its value, index after both) when ``args[i]`` is one of ``keys`` (with
    its value attached by ``=`` or next), or a short option of ``short`` with its value
    glued on (``-cSQL``); None for any other word."""
    v = args[i].value or ""
    key, eq, attached = v.partition("=")
    if key in keys:
        if eq:
            return key, Word(attached, attached), i + 1
        return key, args[i + 1] if i + 1 < len(args) else None, i + 2
    if len(v) > 2 and v[:2] in short and not v.startswith("--"):
        return v[:2], Word(v[2:], v[2:]), i + 1
    return None


def _read_options(name: str, args: list[Word], ctx: Context
                  ) -> tuple[list[str], list[Finding], list[Word]]:
    """(SQL given by options, findings of the files the client writes, operands)."""
    inline, files, outputs, _ = _CLIENTS[name]
    texts: list[str] = []
    out: list[Finding] = []
    operands: list[Word] = []
    i = 0
    while i < len(args):
        found = _option_value(args, i, inline | files | outputs, inline)
        if found is None:
            if not (args[i].value or "").startswith("-"):
                operands.append(args[i])
            i += 1
            continue
        key, value, i = found
        if value is None or value.value is None:
            continue
        if key in inline:
            texts.append(value.value)
        elif key in files:
            text = read_script(value, ctx)
            if text is not None:
                texts.append(text)
        else:
            out += write_target(value, ctx, truncate=True, what=f"{name} writes", by=name)
    return texts, out, operands


def _positional_sql(name: str, operands: list[Word], ctx: Context) -> list[str]:
    """The statements given as operands after the database (``sqlite3 DB 'SQL'``), and
    the scripts a mongo shell runs (``mongosh db script.js``)."""
    texts: list[str] = []
    mongo = name.startswith("mongo")
    for w in operands[1:]:
        if w.value is not None and w.value.endswith(".js") and mongo:
            texts.append(read_script(w, ctx) or "")
        elif w.value is not None:
            texts.append(w.value)
    if mongo and operands and (operands[0].value or "").endswith(".js"):
        texts.append(read_script(operands[0], ctx) or "")
    return texts


def _stdin_sql(cmd: Simple, ctx: Context) -> list[str]:
    text, _ = stdin_text(cmd)
    if text is not None:
        return [text]
    for r in cmd.redirects:
        if r.op == "<" and r.target is not None:
            file_text = read_script(r.target, ctx)
            return [file_text] if file_text is not None else []
    return []


def _judge(name: str, text: str, ctx: Context) -> list[Finding]:
    if not text.strip():
        return []
    verdict = sql.classify(text)
    if verdict.effect == "destroy":
        return [finding("data.destroy", f"{name}: {verdict.statement.strip()} destroys data")]
    if verdict.effect == "exec":
        stmt = verdict.statement.strip()
        out = [finding("exec.code-option", f"{name}: {stmt} runs a command on the host")]
        for prefix in ("\\!", ".shell", ".system", "!"):
            if stmt.startswith(prefix):
                out += nested(stmt[len(prefix):], ctx, f"{name} {prefix}")
                break
        else:
            start, end = stmt.find("'"), stmt.rfind("'")
            if 0 <= start < end:
                out += nested(stmt[start + 1:end], ctx, f"{name} PROGRAM")
        return out
    return []
