"""The tool catalogue: what each host tool is (its kind) and which input keys name a path.

One home for facts the gate, the machines, the ledger, the index and the viewer all need:

>>> kind("Read"), kind("Bash"), kind("mcp__db__query"), kind("Frobnicate")
('read', 'shell', 'mcp', 'other')
>>> path_of("Edit", {"file_path": "src/app.py", "old_string": "a"})
'src/app.py'
>>> operation("NotebookEdit"), operation_kind("tool:notebook_edit")
('tool:notebook_edit', 'write')

Kinds: ``shell`` (runs a command), ``write`` (changes a file), ``read`` (reads files),
``web`` (fetches or searches the web), ``meta`` (the host's own bookkeeping: todos,
subagents, plans; changes nothing outside the session), ``mcp`` (an MCP server's tool:
judged by what it does), ``other`` (unknown: never assumed harmless).

A :class:`ToolCall` is one call of a catalogued tool, as every part of smllm sees it,
whichever host sent it: a harness adapter (:mod:`smllm.harness.claude` for Claude Code)
parses the host's hook payload into one once; the gate (:func:`smllm.gate.decide`), the
state machine's tool rules and the crash hold read it, and nothing outside ``hooks/`` and
the adapters sees the raw payload.

>>> c = ToolCall("Bash", {"command": "ls"}, cwd="/work/p", project="/work/p")
>>> c.kind, c.command
('shell', 'ls')

Hot path: no imports.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELL = "shell"
WRITE = "write"
READ = "read"
WEB = "web"
META = "meta"
MCP = "mcp"
OTHER = "other"

#: Claude Code's tools: name -> (kind, the input keys that name the path it acts on)
CATALOGUE: dict[str, tuple[str, tuple[str, ...]]] = {
    "Bash": (SHELL, ()),
    "Write": (WRITE, ("file_path",)),
    "Edit": (WRITE, ("file_path",)),
    "MultiEdit": (WRITE, ("file_path",)),
    "NotebookEdit": (WRITE, ("notebook_path",)),
    "Read": (READ, ("file_path",)),
    "NotebookRead": (READ, ("notebook_path",)),
    "Grep": (READ, ("path",)),
    "Glob": (READ, ("path",)),
    "LS": (READ, ("path",)),
    "WebFetch": (WEB, ()),
    "WebSearch": (WEB, ()),
    "TodoWrite": (META, ()),
    "TodoRead": (META, ()),
    "Task": (META, ()),
    "Agent": (META, ()),
    "ToolSearch": (META, ()),
    "Skill": (META, ()),
    "ExitPlanMode": (META, ()),
    "BashOutput": (META, ()),
    "TaskOutput": (META, ()),
    "ListMcpResources": (META, ()),
    "ReadMcpResource": (META, ()),
}
#: other hosts' names for the same kinds of tool, by journal operation (what a ledger of a
#: session another harness drove meets): Codex's apply_patch, Gemini's read_file, …
OTHER_HOSTS: dict[str, str] = {
    "tool:apply_patch": WRITE, "tool:write_file": WRITE, "tool:edit_file": WRITE,
    "tool:replace": WRITE, "tool:str_replace_based_edit_tool": WRITE,
    "tool:read_file": READ, "tool:list_files": READ, "tool:search_files": READ,
    "tool:view": READ, "tool:list_directory": READ, "tool:glob_search": READ,
}
#: another host's file changes judged as the catalogue's tools (:mod:`smllm.harness.codex`):
#: each action of a patch (Codex's apply_patch) as the tool that does the same to one file,
PATCH_ACTIONS: dict[str, str] = {"add": "Write", "update": "Edit", "delete": "Write",
                                 "move": "Write"}
#: and another host's tool as one of the catalogue's: name -> (tool, (its key, ours)...)
JUDGED_AS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "view_image": ("Read", (("path", "file_path"),)),
}
#: each host's own tools as the catalogue's, for the one payload -> ToolCall builder
#: (:func:`smllm.harness.tool_call`): host -> {its tool: (our tool, ((its key, ours), ...))}.
#: Copilot's ``bash`` runs a command (its ``mode``/``detach`` keep it a shell call);
#: ``read_bash``, ``list_bash``, ``stop_bash`` only look at or end a shell the agent
#: started; ``task`` starts a sub-agent, whose own calls are gated one by one. Any other
#: tool (``sql``, ``skill``, ``write_agent``, an MCP tool) keeps its name, kind ``other``.
#: Gemini CLI's ``run_shell_command`` runs a command (in its ``dir_path``: see
#: :mod:`smllm.harness.gemini`); its file tools name the path ``file_path`` as Claude Code's
#: do, its folder tools ``dir_path``. Any other tool (``update_topic``, ``invoke_agent``, …)
#: keeps its name, kind ``other``; an MCP tool is named by its server.
HOST_TOOLS: dict[str, dict[str, tuple[str, tuple[tuple[str, str], ...]]]] = {
    "copilot": {
        "bash": ("Bash", ()),
        "create": ("Write", (("path", "file_path"), ("file_text", "content"))),
        "edit": ("Edit", (("path", "file_path"), ("old_str", "old_string"),
                          ("new_str", "new_string"))),
        "view": ("Read", (("path", "file_path"),)),
        "grep": ("Grep", ()),
        "glob": ("Glob", ()),
        "read_bash": ("BashOutput", ()),
        "list_bash": ("BashOutput", ()),
        "stop_bash": ("BashOutput", ()),
        "task": ("Task", ()),
        "read_agent": ("TaskOutput", ()),
        "list_agents": ("TaskOutput", ()),
    },
    "gemini": {
        "run_shell_command": ("Bash", ()),
        "write_file": ("Write", ()),
        "replace": ("Edit", ()),
        "read_file": ("Read", ()),
        "list_directory": ("LS", (("dir_path", "path"),)),
        "glob": ("Glob", (("dir_path", "path"),)),
        "grep_search": ("Grep", (("dir_path", "path"),)),
        "web_fetch": ("WebFetch", ()),
        "google_web_search": ("WebSearch", ()),
    },
}
#: the kinds whose calls change nothing outside the session
READ_ONLY_KINDS = frozenset({READ, WEB, META})
#: every input key that names a path, in the order they are looked up
PATH_KEYS: tuple[str, ...] = tuple(dict.fromkeys(
    key for _, keys in CATALOGUE.values() for key in keys))
#: the input keys that say what a call acted on (shown and searched by the index, the team
#: store and the viewer)
TARGET_KEYS: tuple[str, ...] = ("command", *PATH_KEYS, "url", "pattern", "query")
#: argument names under which an MCP tool takes one path, and a list of paths
MCP_PATH_KEYS: tuple[str, ...] = (
    "path", "file_path", "filepath", "filePath", "filename", "file", "source", "destination",
    "dest", "target", "src", "dst", "directory", "dir", "folder", "old_path", "new_path",
    "oldPath", "newPath", "from", "to", "notebook_path", "cwd", "output", "output_path",
    "outputPath", "location",
)
MCP_PATH_LIST_KEYS: tuple[str, ...] = ("paths", "files", "file_paths", "sources")


def kind(tool_name: str) -> str:
    """The kind of ``tool_name`` (``other`` for a tool the catalogue does not know)."""
    if tool_name.startswith("mcp__"):
        return MCP
    entry = CATALOGUE.get(tool_name)
    return entry[0] if entry is not None else OTHER


def read_only(tool_name: str) -> bool:
    """Does every call of ``tool_name`` leave the world as it was?"""
    return kind(tool_name) in READ_ONLY_KINDS


def path_keys(tool_name: str) -> tuple[str, ...]:
    """The input keys of ``tool_name`` that name its path (none for shell, web, MCP)."""
    entry = CATALOGUE.get(tool_name)
    return entry[1] if entry is not None else ()


def path_of(tool_name: str, tool_input: dict[str, object]) -> str | None:
    """The path a call acts on: its tool's own key, else the first of :data:`PATH_KEYS`."""
    for key in path_keys(tool_name) or PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    return None


def operation(tool_name: str) -> str:
    """The journal's name for a tool's operation: ``Bash`` -> ``tool:bash``,
    ``NotebookEdit`` -> ``tool:notebook_edit``, an MCP tool as it is."""
    if tool_name.startswith("mcp__"):
        return f"tool:{tool_name}"
    out = []
    for i, ch in enumerate(tool_name):
        if ch.isupper() and i and not tool_name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "tool:" + "".join(out)


#: journal operation -> kind, for every catalogued tool and the other hosts' names (built
#: on first use: the readers of journals ask, a hook does not)
_BY_OPERATION: dict[str, str] = {}


def operation_kind(op: str) -> str:
    """The kind of a journaled operation (``tool:notebook_edit`` -> ``write``)."""
    if op.startswith("tool:mcp__"):
        return MCP
    if not _BY_OPERATION:
        _BY_OPERATION.update({operation(name): entry[0] for name, entry in CATALOGUE.items()})
        _BY_OPERATION.update(OTHER_HOSTS)
    return _BY_OPERATION.get(op, OTHER)


class ToolCall:
    """A tool call: what the agent asked to run, where, and under which session."""

    __slots__ = ("agent_id", "cwd", "harness", "input", "kind", "permission_mode", "project",
                 "session_id", "tool", "tool_use_id")

    def __init__(
        self,
        tool: str,
        tool_input: dict[str, Any],
        *,
        cwd: str,
        project: str,
        session_id: str | None = None,
        tool_use_id: str | None = None,
        permission_mode: str | None = None,
        agent_id: str | None = None,
        harness: str = "claude",
    ) -> None:
        self.tool = tool
        self.kind = kind(tool)
        self.input = tool_input
        self.cwd = cwd
        self.project = project
        self.session_id = session_id
        self.tool_use_id = tool_use_id
        self.permission_mode = permission_mode
        self.agent_id = agent_id
        self.harness = harness

    @property
    def command(self) -> str | None:
        """The shell command of a shell call (None for other calls, or a malformed one)."""
        value = self.input.get("command") if self.kind == SHELL else None
        return value if isinstance(value, str) else None

    @property
    def operation(self) -> str:
        """The journal's name for what the call does (``tool:bash``)."""
        return operation(self.tool)

    def __repr__(self) -> str:
        return f"ToolCall({self.tool!r}, cwd={self.cwd!r}, project={self.project!r})"
