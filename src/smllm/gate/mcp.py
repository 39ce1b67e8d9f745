"""MCP tools judged by what they do: execute, delete, write, query, fetch or read.

An MCP tool's name (``mcp__<server>__<tool>``) says what it does in words (``write_file``,
``deleteBranch``, ``execute_sql``, ``start_process``); its arguments say to what. Each is
checked like the built-in tool it resembles:

* a process-starting tool's command (``command``, ``cmd``, ``script``, ``args``) is
  analysed as a Bash command; one whose command cannot be read escalates;
* path arguments (``path``, ``file_path``, ``source``, ``destination``, ``paths``…)
  are judged like ``Write``'s (a protected path is denied, one outside the workspace
  escalates) for tools that write, delete or execute, and like ``Read``'s (a credential
  store escalates) for the others;
* SQL arguments (``sql``, ``query``, ``statement``) are classed by :mod:`smllm.gate.sql`:
  destroying data is denied, changing it escalates, reading passes;
* URL and query arguments carrying a secret-looking value are denied;
* a tool whose name says it deletes escalates, as before.

A tool whose name says nothing of these (``create_issue``, ``get_weather``) and whose
arguments hold no path, SQL or command is left to the policy, like any call. Every path
a tool writes or deletes is reported as a target with its resolved path.
"""

from __future__ import annotations

from smllm.base import catalogue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.gate.shell import Finding
    from smllm.gate.shell._model import Context

#: words of a tool's name, by what they make it do
VERBS: dict[str, frozenset[str]] = {
    "execute": frozenset({"exec", "execute", "run", "shell", "command", "commands", "terminal",
                          "spawn", "process", "eval", "bash", "sh", "powershell", "cmd",
                          "script", "launch", "subprocess", "repl", "interpret", "notebook"}),
    "delete": frozenset({"delete", "remove", "rm", "del", "unlink", "drop", "destroy", "purge",
                         "truncate", "wipe", "erase", "kill", "trash", "clear", "reset",
                         "rmdir", "prune", "uninstall", "force"}),
    "write": frozenset({"write", "create", "edit", "save", "put", "upload", "append", "move",
                        "rename", "copy", "mkdir", "patch", "update", "set", "insert",
                        "replace", "overwrite", "modify", "chmod", "chown", "symlink", "link",
                        "add", "apply", "commit", "push", "store", "import", "restore"}),
    "query": frozenset({"query", "sql", "select", "statement", "database", "db"}),
}
_COMMAND_KEYS = ("command", "cmd", "shell_command", "commandLine", "command_line", "script",
                 "bash", "input")
_ARGV_KEYS = ("args", "argv", "arguments")
_CODE_KEYS = ("code", "source_code", "snippet")
_PATH_KEYS = catalogue.MCP_PATH_KEYS
_PATH_LIST_KEYS = catalogue.MCP_PATH_LIST_KEYS
_SQL_KEYS = ("sql", "query", "statement", "statements", "sql_query", "sqlQuery")
_URL_KEYS = ("url", "uri", "href", "endpoint", "link")
_TEXT_KEYS = ("query", "q", "search", "prompt")  # checked too, unless the query is SQL
#: servers and tools that talk to a database: their "command" is a query, not shell
_DATABASE_WORDS = frozenset({"mongo", "mongodb", "postgres", "postgresql", "pg", "mysql",
                             "mariadb", "sqlite", "redis", "db", "database", "sql", "clickhouse",
                             "bigquery", "snowflake", "supabase", "neon", "duckdb", "cassandra",
                             "dynamodb", "firestore", "elasticsearch", "opensearch"})
_INTERPRETERS = {"python": "python3", "python3": "python3", "py": "python3",
                 "javascript": "node", "js": "node", "node": "node", "typescript": "node",
                 "ts": "node", "ruby": "ruby", "rb": "ruby", "perl": "perl", "php": "php",
                 "bash": "bash", "sh": "sh", "shell": "bash", "zsh": "zsh"}


def words(tool_name: str) -> set[str]:
    """The words of an MCP tool's own name (``mcp__srv__writeFile`` -> write, file)."""
    leaf = tool_name.rsplit("__", maxsplit=1)[-1]
    out: list[str] = []
    cur = ""
    for ch in leaf:
        if ch in "_-. /:":
            if cur:
                out.append(cur)
            cur = ""
        elif ch.isupper() and cur and not cur[-1].isupper():
            out.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        out.append(cur)
    return {w.lower() for w in out}


def does(tool_name: str) -> set[str]:
    """What the tool's name says it does: some of execute, delete, write, query."""
    w = words(tool_name)
    return {verb for verb, names in VERBS.items() if w & names}


class Judgement:
    """What one MCP call was found to do: findings, and the paths it writes or deletes."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.targets: list[dict[str, str | None]] = []
        self.analysed_command = False


def judge(tool_name: str, tool_input: dict[str, Any], ctx: Context,
          analyse_command: Any) -> Judgement:
    """Judge one MCP call; ``analyse_command(text)`` analyses a shell command the way the
    gate analyses Bash, returning its findings and effects."""
    from smllm.gate.shell import Finding  # noqa: PLC0415 - the package is light; see assess

    out = Judgement()
    verbs = does(tool_name)
    strings = {k: v for k, v in tool_input.items() if isinstance(v, str)}
    server = tool_name.split("__")[1] if tool_name.count("__") >= 2 else ""
    database = bool((words(server) | words(tool_name)) & _DATABASE_WORDS)
    sql_keys = _SQL_KEYS + (_COMMAND_KEYS if database else ())
    if not database and ("execute" in verbs or any(k in tool_input for k in _CODE_KEYS)):
        _execute(tool_name, tool_input, strings, verbs, ctx, analyse_command, out)
    sql_text = next((strings[k] for k in sql_keys if k in strings), None)
    if database and sql_text is not None:
        verbs = verbs | {"query"}
    if sql_text is not None and ("query" in verbs or "execute" in verbs or _looks_sql(sql_text)):
        _sql(tool_name, sql_text, out)
    _paths(tool_name, tool_input, verbs, ctx, out)
    _urls(tool_name, tool_input, sql_text is None and "query" not in verbs, out)
    if "delete" in verbs and not any(f.decision == "deny" for f in out.findings) and not (
            out.analysed_command or sql_text is not None):
        out.findings.append(Finding("mcp.destructive", "ask",
                                    f"MCP tool {tool_name} looks destructive"))
    return out


def _execute(  # noqa: PLR0917 - private helper of judge(), called once
        tool_name: str, tool_input: dict[str, Any], strings: dict[str, str],
        verbs: set[str], ctx: Context, analyse_command: Any, out: Judgement) -> None:
    from smllm.gate.shell import Finding  # noqa: PLC0415 - the analyser: a finding only

    command = next((strings[k] for k in _COMMAND_KEYS if k in strings), None)
    argv = next((tool_input[k] for k in _ARGV_KEYS if isinstance(tool_input.get(k), list)),
                None)
    code = next((strings[k] for k in _CODE_KEYS if k in strings), None)
    if command is None and argv is not None and all(isinstance(a, str) for a in argv):
        import shlex  # noqa: PLC0415 - only for MCP tools given an argv

        command = shlex.join(argv)
        program = strings.get("program") or strings.get("executable")
        if program:
            command = shlex.join([program, *argv])
    elif command is not None and argv is not None and all(isinstance(a, str) for a in argv):
        import shlex  # noqa: PLC0415 - only for MCP tools given an argv

        command = shlex.join([command, *argv])
    if command is None and code is not None:
        import shlex  # noqa: PLC0415 - only for MCP tools running code

        language = (strings.get("language") or strings.get("lang") or "python").lower()
        interpreter = _INTERPRETERS.get(language, "")
        if interpreter in ("bash", "sh", "zsh"):
            command = code
        elif interpreter:
            flag = "-e" if interpreter in ("node", "ruby", "perl") else (
                "-r" if interpreter == "php" else "-c")
            command = shlex.join([interpreter, flag, code])
    if command is None:
        if "execute" in verbs and "query" not in verbs:
            out.findings.append(Finding("mcp.execute", "ask",
                                        f"MCP tool {tool_name} runs something smllm cannot "
                                        "read from its arguments"))
        return
    found, effects = analyse_command(command)
    out.analysed_command = True
    out.findings += [Finding(f.rule, f.decision, f"{tool_name}: {f.reason}", f.path)
                     for f in found]
    out.targets += effects


def _looks_sql(text: str) -> bool:
    head = text.lstrip().split(None, 1)[0].lower() if text.strip() else ""
    return head in ("select", "insert", "update", "delete", "drop", "truncate", "alter",
                    "create", "with", "grant", "revoke", "merge", "replace", "copy")


def _sql(tool_name: str, text: str, out: Judgement) -> None:
    from smllm.gate import sql  # noqa: PLC0415 - only for MCP query tools
    from smllm.gate.shell import Finding  # noqa: PLC0415 - the analyser: a finding only

    verdict = sql.classify(text)
    shown = verdict.statement.strip()[:60]
    if verdict.effect == "destroy":
        out.findings.append(Finding("data.destroy", "deny",
                                    f"MCP tool {tool_name}: {shown} destroys data"))
    elif verdict.effect == "exec":
        out.findings.append(Finding("exec.code-option", "ask",
                                    f"MCP tool {tool_name}: {shown} runs a command on the "
                                    "database host"))
    elif verdict.effect == "write":
        out.findings.append(Finding("mcp.query-write", "ask",
                                    f"MCP tool {tool_name}: {shown} changes data"))


def _paths(tool_name: str, tool_input: dict[str, Any], verbs: set[str], ctx: Context,
           out: Judgement) -> None:
    from smllm.gate.shell import Finding  # noqa: PLC0415 - the analyser: a finding only

    values: list[tuple[str, str]] = [(k, tool_input[k]) for k in _PATH_KEYS
                                     if isinstance(tool_input.get(k), str)]
    for k in _PATH_LIST_KEYS:
        items = tool_input.get(k)
        if isinstance(items, list):
            values += [(k, v) for v in items if isinstance(v, str)]
    changes = verbs & {"write", "delete", "execute"}
    for key, raw in values:
        if not raw or "://" in raw or "\n" in raw or len(raw) > 4096:
            continue
        text = ctx.home + raw[1:] if raw == "~" or raw.startswith("~/") else raw
        path = ctx.resolve(text)
        if path is None:
            continue
        real = ctx.follow(path)
        where = ctx.where_linked(path, real)
        if changes and key not in ("cwd",):
            kind = "delete" if "delete" in verbs else "write"
            if key in ("source", "src", "from", "old_path", "oldPath") and "write" in verbs:
                kind = "read" if words(tool_name) & {"copy"} else "move"
            if kind != "read":
                out.targets.append({"effect": kind, "path": real, "by": tool_name})
            if where in ("sensitive", "critical", "device") and kind != "read":
                out.findings.append(Finding("file.sensitive", "deny",
                                            f"MCP tool {tool_name} {kind}s the protected path "
                                            f"{raw}", real))
                continue
            if where == "outside" and kind != "read":
                out.findings.append(Finding("file.outside-workspace", "ask",
                                            f"MCP tool {tool_name} {kind}s {raw}, outside the "
                                            "workspace", real))
                continue
        if ctx.secret_kind(real) == "store":
            out.findings.append(Finding("exfil.read-credentials", "ask",
                                        f"MCP tool {tool_name} reads the credential store {raw}",
                                        real))


def _urls(tool_name: str, tool_input: dict[str, Any], with_text: bool, out: Judgement) -> None:
    keys = _URL_KEYS + _TEXT_KEYS if with_text else _URL_KEYS
    texts = [tool_input[k] for k in keys if isinstance(tool_input.get(k), str)]
    headers = tool_input.get("headers")
    if isinstance(headers, dict):
        texts += [f"{k}: {v}" for k, v in headers.items() if isinstance(v, str)]
    for finding in request_secrets(f"MCP tool {tool_name}", texts):
        out.findings.append(finding)


def request_secrets(what: str, texts: list[str]) -> list[Finding]:
    """A finding when a request (a URL, a query, headers) carries a secret-looking value."""
    from smllm.base import secrets  # noqa: PLC0415 - only for calls that reach the web
    from smllm.gate.shell import Finding  # noqa: PLC0415 - the analyser: a finding only

    for text in texts:
        kinds = secrets.find(text)
        if kinds:
            return [Finding("exfil.secret-in-request", "deny",
                            f"{what} sends a value that looks like a secret ({kinds[0]})")]
    return []
