"""Task files read as their runners read them: Makefile, justfile, package.json,
pyproject.toml (pdm, hatch, poe, rye), Pipfile, tox.ini, Taskfile.yml.

The runners' handlers (:mod:`._runners`, :mod:`._packages`) find the recipe a command
runs here and have its lines analysed as shell (:func:`run_lines`), or, for a recipe in
another language, through that language's interpreter (:func:`run_code`). A task file
that a command names but smllm cannot read, or a recipe it cannot find where one must
be, escalates (:func:`unread`). A file this command string writes first is read from
what it writes.
"""

from __future__ import annotations

from smllm.base import jsonfast
from smllm.base import osfast as os
from smllm.gate.shell._analyse import judge_argv, nested
from smllm.gate.shell._model import VIRTUAL, Context, Finding
from smllm.gate.shell._parse import Simple, Word

_LIMIT = 256 * 1024


def read(path: str, ctx: Context) -> str | None:
    """The text of ``path`` (None: missing or unreadable), the command's own writes first."""
    written = ctx.memory.written
    if path in written:
        return written[path]
    try:
        with open(path, "rb") as fh:
            data = fh.read(_LIMIT + 1)
    except OSError:
        return None
    if len(data) > _LIMIT:
        return None
    text = data.decode("utf-8", "replace")
    ctx.memory.script(path, data, text)
    return text


def exists(path: str, ctx: Context) -> bool:
    return path in ctx.memory.written or os.path.exists(path)


def unread(runner: str, what: str) -> list[Finding]:
    return [Finding("shell.unread-script", "ask", f"{runner} runs {what}, which smllm cannot "
                    "read")]


def at(ctx: Context, folder: str | None) -> Context:
    """A context whose cwd is ``folder`` (where a recipe runs), sharing ``ctx``'s memory."""
    if folder is None or folder == ctx.cwd:
        return ctx
    new = ctx.child()
    new.depth = ctx.depth
    new.cwd = folder
    return new


def run_lines(label: str, lines: list[str], ctx: Context) -> list[Finding]:
    """Each line run by a fresh shell (a recipe line of make, a script of npm)."""
    out: list[Finding] = []
    for line in lines:
        if line.strip():
            out += nested(line, ctx, label)
    return out


def run_code(label: str, interpreter: list[str], text: str, ctx: Context) -> list[Finding]:
    """``text`` run by ``interpreter`` (a shebang recipe): judged as that interpreter
    running a file holding ``text``."""
    name = os.path.basename(interpreter[0]) if interpreter else "sh"
    if name == "env" and len(interpreter) > 1:
        interpreter = [w for w in interpreter[1:] if not w.startswith("-")] or ["sh"]
        name = os.path.basename(interpreter[0])
    virtual = f"{VIRTUAL}/{len(ctx.memory.written)}"
    ctx.memory.written[virtual] = text
    argv = [Word(w, w) for w in (name, *interpreter[1:], virtual)]
    found, _ = judge_argv(argv, Simple(), ctx)
    return [Finding(f.rule, f.decision, f"{label}: {f.reason}", f.path) for f in found]


# ---------------------------------------------------------------- Makefile

class Makefile:
    """Rules (target -> prerequisites, recipe lines), variables, the default goal."""

    def __init__(self) -> None:
        self.rules: dict[str, tuple[list[str], list[str]]] = {}
        self.variables: dict[str, str] = {}
        self.default: str | None = None
        self.includes = False


def parse_makefile(text: str) -> Makefile:
    mk = Makefile()
    lines = text.replace("\\\n", " ").splitlines()
    current: list[str] | None = None
    in_define = False
    for raw in lines:
        if in_define:
            in_define = not raw.strip().startswith("endef")
        elif raw.startswith("\t"):
            if current is not None:
                current.append(raw[1:])
        else:
            in_define, current = _makefile_line(mk, raw, current)
    return mk


#: make's directives: ``define`` opens a block read to ``endef``, an include hides rules,
#: a conditional or another directive is skipped (the recipe being read goes on)
_MAKE_DIRECTIVES = {
    "define": "define", "include": "include", "-include": "include", "sinclude": "include",
    **dict.fromkeys(("ifeq", "ifneq", "ifdef", "ifndef", "else", "endif", "vpath", "unexport"),
                    "skip"),
}


def _makefile_line(mk: Makefile, raw: str, current: list[str] | None
                   ) -> tuple[bool, list[str] | None]:
    """Read one line that is not a recipe line into ``mk``: whether a ``define`` block
    starts, and the recipe that following tab lines belong to."""
    line = raw.split("#", 1)[0].rstrip() if "#" in raw and "$" not in raw else raw.rstrip()
    stripped = line.strip()
    if not stripped:
        return False, current
    directive = _MAKE_DIRECTIVES.get(stripped.split(None, 1)[0])
    if directive is not None:
        mk.includes = mk.includes or directive == "include"
        return directive == "define", current if directive == "skip" else None
    body = stripped
    for prefix in ("override ", "export "):
        if body.startswith(prefix):
            body = body[len(prefix):]
    assign = _assignment(body)
    if assign is not None:
        _assign(mk, *assign)
        return False, None
    return False, _rule(mk, body) if ":" in body else None


def _assign(mk: Makefile, name: str, op: str, value: str) -> None:
    if op == "+=" and name in mk.variables:
        mk.variables[name] += " " + value
    elif op != "?=" or name not in mk.variables:
        mk.variables[name] = value
    if name == ".DEFAULT_GOAL":
        mk.default = value.strip()


def _rule(mk: Makefile, body: str) -> list[str] | None:
    """``TARGETS: PREREQUISITES [; RECIPE]``: the rules added (pattern rules left out),
    and the recipe of the first target, which the tab lines that follow extend."""
    head, _, rest = body.partition(":")
    rest = rest.lstrip(":")
    prereqs, _, inline = rest.partition(";")
    recipe: list[str] = [inline.strip()] if inline.strip() else []
    targets = head.split()
    for t in targets:
        if "%" in t:
            continue
        old = mk.rules.get(t, ([], []))
        mk.rules[t] = (old[0] + prereqs.split(), old[1] + recipe)
        if mk.default is None and not t.startswith("."):
            mk.default = t
    first = targets[0] if targets and "%" not in targets[0] else None
    return mk.rules[first][1] if first in mk.rules else None


def _assignment(line: str) -> tuple[str, str, str] | None:
    for op in ("::=", ":=", "?=", "+=", "!=", "="):
        idx = line.find(op)
        if idx > 0:
            name = line[:idx].strip()
            if name and " " not in name and ":" not in name:
                return name, op, line[idx + len(op):].strip()
            return None
    return None


_MAKE_DEFAULTS = {"MAKE": "make", "CC": "cc", "CXX": "g++", "RM": "rm -f", "AR": "ar",
                  "CPP": "cc -E", "LD": "ld", "INSTALL": "install", "SHELL": "/bin/sh",
                  "MAKEFLAGS": "", "CURDIR": ".", "MKDIR": "mkdir", "FC": "f77", "AS": "as",
                  "ECHO": "echo"}


def make_expand(text: str, variables: dict[str, str], auto: dict[str, str],
                depth: int = 0) -> str:
    """``$(VAR)``, ``${VAR}``, ``$@``… expanded as make does; ``$(shell cmd)`` becomes a
    shell substitution; a variable make does not define here becomes ``${VAR}``, which
    the shell analysis treats as unknown; other functions become unknown too."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "$" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
            continue
        if nxt in "({":
            close = ")" if nxt == "(" else "}"
            level, j = 1, i + 2
            while j < n and level:
                if text[j] == nxt:
                    level += 1
                elif text[j] == close:
                    level -= 1
                j += 1
            inner = text[i + 2:j - 1]
            out.append(_make_ref(inner, variables, auto, depth))
            i = j
            continue
        out.append(auto.get(nxt, "${__make_auto}"))
        i += 2
    return "".join(out)


def _make_ref(inner: str, variables: dict[str, str], auto: dict[str, str], depth: int) -> str:
    if depth > 8:
        return "${__make_deep}"
    if inner.startswith("shell "):
        return "$(" + make_expand(inner[6:], variables, auto, depth + 1) + ")"
    if " " in inner or "," in inner:
        return "${__make_function}"
    if inner in variables:
        return make_expand(variables[inner], variables, auto, depth + 1)
    fixed = auto[inner] if inner in auto else _MAKE_DEFAULTS.get(inner)
    if fixed is not None:
        return fixed
    return "${" + "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in inner) + "}"


def recipe_lines(lines: list[str]) -> list[str]:
    """Recipe lines without make's ``@``, ``-`` and ``+`` prefixes."""
    return [line.lstrip().lstrip("@-+").lstrip() for line in lines]


# ---------------------------------------------------------------- justfile

class Justfile:
    def __init__(self) -> None:
        self.recipes: dict[str, tuple[list[str], list[str], list[str]]] = {}  # deps, body, params
        self.variables: dict[str, str] = {}
        self.first: str | None = None


def parse_justfile(text: str) -> Justfile:
    jf = Justfile()
    current: list[str] | None = None
    for raw in text.splitlines():
        if raw.startswith((" ", "\t")) and raw.strip():
            if current is not None:
                current.append(raw.strip())
            continue
        line = raw.strip()
        if not line or line.startswith(("#", "[", "set ", "import ", "mod ", "alias ")):
            if line.startswith("alias ") and ":=" in line:
                name, target = line[6:].split(":=", 1)
                if target.strip() in jf.recipes:
                    jf.recipes[name.strip()] = jf.recipes[target.strip()]
            current = None if not line.startswith(("#", "[")) else current
            continue
        if ":=" in line and line.split(":=", 1)[0].replace("export", "").strip().isidentifier():
            name, value = line.split(":=", 1)
            jf.variables[name.replace("export", "").strip()] = value.strip().strip("'\"")
            current = None
            continue
        if ":" in line:
            head, _, deps = line.partition(":")
            words = head.split()
            if not words:
                continue
            name = words[0].lstrip("@")
            params = [p.split("=", 1)[0].lstrip("*+$") for p in words[1:]]
            current = []
            dep_names = [d.strip("()").split()[0] for d in deps.replace("&&", " ").split()
                         if d.strip("()")]
            jf.recipes[name] = (dep_names, current, params)
            if jf.first is None:
                jf.first = name
    return jf


def just_expand(line: str, values: dict[str, str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(line):
        if line.startswith("{{{{", i):
            out.append("{{")
            i += 4
            continue
        if line.startswith("{{", i):
            end = line.find("}}", i + 2)
            if end < 0:
                out.append(line[i:])
                break
            expr = line[i + 2:end].strip()
            out.append(values.get(expr, "${" + ("".join(ch if ch.isalnum() else "_"
                                                        for ch in expr) or "x") + "}"))
            i = end + 2
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- JSON and TOML files

def package_json(folder: str, ctx: Context) -> dict[str, object] | None:
    return json_file(os.path.join(folder, "package.json"), ctx)


def json_file(path: str, ctx: Context) -> dict[str, object] | None:
    text = read(path, ctx)
    if text is None:
        return None
    try:
        data = jsonfast.loads(text.encode())
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def toml(path: str, ctx: Context) -> dict[str, object] | None:
    text = read(path, ctx)
    if text is None:
        return None
    from smllm.base import tomlread  # noqa: PLC0415 - the TOML parser is slow to import

    try:
        data = tomlread.loads(text)
    except ValueError:
        return None
    return data


def table(data: dict[str, object] | None, *keys: str) -> dict[str, object]:
    """``data[k1][k2]…`` as a dict (empty when any level is missing)."""
    cur: object = data or {}
    for k in keys:
        cur = cur.get(k, {}) if isinstance(cur, dict) else {}
    return cur if isinstance(cur, dict) else {}


def find_up(start: str | None, names: tuple[str, ...], root: str, ctx: Context) -> str | None:
    """The first of ``names`` in ``start`` or a parent folder up to ``root``."""
    folder = start or root
    for _ in range(32):
        for name in names:
            candidate = os.path.join(folder, name)
            if exists(candidate, ctx):
                return candidate
        if folder in (root, "/") or not folder.startswith(root.rstrip("/") + "/"):
            return None
        folder = os.path.dirname(folder)
    return None


# ---------------------------------------------------------------- task tables

def pyproject_task(runner: str, task_name: str, path_keys: tuple[str, ...], ctx: Context
                   ) -> list[Finding] | None:
    """The findings of the task ``task_name`` under ``[tool.<path_keys>]`` of the nearest
    pyproject.toml (None: no such task). A task is a command line, a list of them, or a
    table with ``cmd``/``shell``/``sequence``/``composite``/``call``/``script``."""
    path = find_up(ctx.cwd, ("pyproject.toml",), ctx.root, ctx)
    if path is None:
        return None
    data = toml(path, ctx)
    if data is None:
        return unread(runner, path)
    tasks = table(data, "tool", *path_keys)
    if task_name not in tasks:
        return None
    return run_task_value(runner, task_name, tasks[task_name], tasks,
                          at(ctx, os.path.dirname(path)), depth=0)


def run_task_value(runner: str, task_name: str, value: object, tasks: dict[str, object],
                   ctx: Context, *, depth: int) -> list[Finding]:
    label = f"{runner} {task_name}"
    if depth > 8:
        return []
    if isinstance(value, str):
        return run_lines(label, [value], ctx)
    if isinstance(value, list):
        out: list[Finding] = []
        for item in value:
            if isinstance(item, str) and item in tasks:
                out += run_task_value(runner, item, tasks[item], tasks, ctx, depth=depth + 1)
            else:
                out += run_task_value(runner, task_name, item, tasks, ctx, depth=depth + 1)
        return out
    if isinstance(value, dict):
        found = _task_table(runner, task_name, value, tasks, ctx, depth=depth)
        if found is not None:
            return found
    return unread(runner, f"the task {task_name!r}")


def _task_table(runner: str, task_name: str, value: dict[str, object],
                tasks: dict[str, object], ctx: Context, *, depth: int) -> list[Finding] | None:
    """A task written as a table: ``cmd``/``shell`` (a command line), ``sequence``/
    ``composite`` (tasks), ``ref`` (another task), ``call``/``script`` (a Python function of
    the project); None for any other table."""
    label = f"{runner} {task_name}"
    for key in ("cmd", "shell"):
        if isinstance(value.get(key), str):
            return run_lines(label, [str(value[key])], ctx)
    for key in ("sequence", "composite"):
        if isinstance(value.get(key), list):
            return run_task_value(runner, task_name, value[key], tasks, ctx, depth=depth + 1)
    if isinstance(value.get("ref"), str):
        ref = str(value["ref"]).split()[0]
        return run_task_value(runner, ref, tasks.get(ref, ""), tasks, ctx, depth=depth + 1)
    if any(isinstance(value.get(key), str) for key in ("call", "script")):
        return []  # a Python function of the project, like any entry point
    return None
