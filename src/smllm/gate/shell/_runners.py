"""Task runners: the recipe a command runs is read from the project and analysed.

``make [TARGET…]`` runs the recipes of the targets and of their prerequisites (make's
variables and automatic variables expanded, ``$(shell …)`` kept as a substitution, an
unknown variable left unknown); ``just RECIPE`` likewise, shebang recipes through their
interpreter; ``task``, ``tox``, ``poe`` read their files' commands; ``invoke``,
``rake``, ``gulp``, ``grunt`` and ``nox`` run code files that are scanned as code. A
task file that exists but cannot be read, or a target that is not in a file that
includes others, escalates; dry runs and listings run nothing.
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.gate.shell import _tasks
from smllm.gate.shell._analyse import judge_argv
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word, is_assignment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

_MAKE_ARG = frozenset({"-C", "--directory", "-f", "--file", "--makefile", "-I",
                       "--include-dir", "-j", "--jobs", "-l", "--load-average", "-o",
                       "--old-file", "--assume-old", "-W", "--what-if", "--new-file",
                       "--assume-new", "-O", "--output-sync", "--eval"})
_MAKE_DRY = frozenset({"-n", "--dry-run", "--just-print", "--recon", "-q", "--question",
                       "-p", "--print-data-base", "-v", "--version", "-h", "--help"})


class _MakeLine:
    """make's command line, read: the folder (``-C``), the makefiles (``-f``), the goals,
    the variables set on it, and the findings of its options (``--eval``)."""

    __slots__ = ("files", "folder", "goals", "out", "overrides")

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.files: list[str] = []
        self.goals: list[str] = []
        self.overrides: dict[str, str] = {}
        self.out: list[Finding] = []


def make(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    line = _MakeLine(ctx.cwd or ctx.root)
    early = _read_make(name, args, line)
    if early is not None:
        return early
    out = line.out
    folder = os.path.normpath(line.folder)
    files = line.files
    if not files:
        found = next((os.path.join(folder, f) for f in ("GNUmakefile", "makefile", "Makefile")
                      if _tasks.exists(os.path.join(folder, f), ctx)), None)
        if found is None:
            return out, False  # make stops: no makefile
        files = [found]
    text = "\n".join(t for t in (_tasks.read(f, ctx) for f in files) if t is not None)
    if any(_tasks.read(f, ctx) is None for f in files):
        return out + _tasks.unread(name, ", ".join(files)), False
    mk = _tasks.parse_makefile(text)
    mk.variables.update(line.overrides)
    goals = line.goals or ([mk.default] if mk.default else [])
    run_ctx = _tasks.at(ctx, folder)
    seen: set[str] = set()
    for goal in goals:
        out += _make_target(name, mk, goal, run_ctx, seen, depth=0)
    return out, False


def _read_make(name: str, args: list[Word], line: _MakeLine) -> Result | None:
    """Read make's arguments into ``line``; the result when that decides (a dry run, a
    run-time argument), else None."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            return [Finding("shell.dynamic-command", "ask",
                            f"{name} with an argument only known at run time")], False
        if v in _MAKE_DRY:
            return [], True
        key = v.partition("=")[0] if v.startswith("--") else v
        if key in _MAKE_ARG or (v[:2] in ("-C", "-f", "-j", "-I", "-o", "-W", "-l")
                                and len(v) > 2 and not v.startswith("--")):
            i += _make_option(v, args[i + 1].value if i + 1 < len(args) else None, line)
            continue
        if is_assignment(v):
            k, val = v.split("=", 1)
            line.overrides[k.rstrip(":+?")] = val
        elif not v.startswith("-"):
            line.goals.append(v)
        i += 1
    return None


def _make_option(v: str, nxt: str | None, line: _MakeLine) -> int:
    """An option of make that takes a value (``-C DIR``, ``-fFILE``, ``--eval=TEXT``);
    the number of words it uses."""
    key, eq, value = v.partition("=") if v.startswith("--") else (v, "", "")
    attached = len(v) > 2 and not v.startswith("--")
    given = value if eq else (v[2:] if attached else nxt)
    if key in ("-C", "--directory") or v.startswith("-C"):
        line.folder = os.path.join(line.folder, given or "")
    elif key in ("-f", "--file", "--makefile") or v.startswith("-f"):
        line.files.append(os.path.join(line.folder, given or ""))
    elif key == "--eval":
        line.out.append(Finding("exec.code-option", "ask", "make --eval adds rules"))
    return 1 if eq or attached else 2


def _make_target(name: str, mk: _tasks.Makefile, target: str, ctx: Context, seen: set[str],
                 *, depth: int) -> list[Finding]:
    if target in seen or depth > 16:
        return []
    seen.add(target)
    rule = mk.rules.get(target)
    if rule is None:
        if mk.includes:
            return _tasks.unread(name, f"the target {target!r}, defined in an included file")
        return []  # a file target with no rule here: make's built-in rules, or an error
    prereqs, recipe = rule
    out: list[Finding] = []
    for p in prereqs:
        out += _make_target(name, mk, p, ctx, seen, depth=depth + 1)
    auto = {"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs),
            "+": " ".join(prereqs), "*": "", "?": " ".join(prereqs)}
    lines = [_tasks.make_expand(line, mk.variables, auto) for line in recipe]
    return out + _tasks.run_lines(f"{name} {target}", _tasks.recipe_lines(lines), ctx)


_JUST_ARG = frozenset({"-f", "--justfile", "-d", "--working-directory", "--set",
                       "--shell", "--shell-arg", "--dotenv-filename", "--dotenv-path",
                       "--chooser", "--color", "--command-color", "--list-heading",
                       "--list-prefix", "--timestamp-format"})
_JUST_DRY = frozenset({"-l", "--list", "-n", "--dry-run", "--summary", "-s", "--show",
                       "--evaluate", "--dump", "--variables", "--help", "-h", "--version",
                       "-V", "--fmt", "--init", "--edit", "--choose", "--completions"})


class _JustLine:
    """just's command line, read: the folder, the justfile, the recipes and their
    arguments, and the variables set on it."""

    __slots__ = ("folder", "overrides", "path", "words")

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.path: str | None = None
        self.words: list[str] = []
        self.overrides: dict[str, str] = {}


def just(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    line = _JustLine(ctx.cwd or ctx.root)
    early = _read_just(name, args, line)
    if early is not None:
        return early
    path = line.path
    if path is None:
        path = _tasks.find_up(line.folder, ("justfile", "Justfile", ".justfile"), ctx.root, ctx)
    if path is None:
        return [], False  # just stops: no justfile
    text = _tasks.read(path, ctx)
    if text is None:
        return _tasks.unread(name, path), False
    jf = _tasks.parse_justfile(text)
    jf.variables.update(line.overrides)
    words = line.words or ([jf.first] if jf.first else [])
    run_ctx = _tasks.at(ctx, os.path.dirname(path))
    out: list[Finding] = []
    seen: set[str] = set()
    while words:
        recipe = words.pop(0)
        if recipe not in jf.recipes:
            return out + _tasks.unread(name, f"the recipe {recipe!r}"), False
        params = jf.recipes[recipe][2]
        given = dict(zip(params, words, strict=False))
        words = words[len(given):]
        out += _just_recipe(name, jf, recipe, given, run_ctx, seen=seen)
    return out, False


def _read_just(name: str, args: list[Word], line: _JustLine) -> Result | None:
    """Read just's arguments into ``line``; the result when that decides (a dry run, a
    run-time argument), else None."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            return [Finding("shell.dynamic-command", "ask",
                            f"{name} with an argument only known at run time")], False
        if v in _JUST_DRY:
            return [], True
        if v in _JUST_ARG:
            i += _just_option(v, args, i, line)
            continue
        if "=" in v and v.split("=", 1)[0].isidentifier():
            k, val = v.split("=", 1)
            line.overrides[k] = val
        elif not v.startswith("-"):
            line.words.append(v)
        i += 1
    return None


def _just_option(v: str, args: list[Word], i: int, line: _JustLine) -> int:
    """An option of just that takes a value; the number of words it uses."""
    nxt = args[i + 1].value if i + 1 < len(args) else None
    if v in ("-f", "--justfile") and nxt:
        line.path = os.path.join(line.folder, nxt)
    elif v in ("-d", "--working-directory") and nxt:
        line.folder = os.path.join(line.folder, nxt)
    elif v == "--set" and nxt and i + 2 < len(args):
        line.overrides[nxt] = args[i + 2].value or ""
        return 3
    return 2


def _just_recipe(name: str, jf: _tasks.Justfile, recipe: str, given: dict[str, str],
                 ctx: Context, *, seen: set[str]) -> list[Finding]:
    if recipe in seen or recipe not in jf.recipes:
        return []
    seen.add(recipe)
    deps, body, _ = jf.recipes[recipe]
    out: list[Finding] = []
    for dep in deps:
        out += _just_recipe(name, jf, dep, {}, ctx, seen=seen)
    values = {**jf.variables, **given}
    lines = [_tasks.just_expand(line, values) for line in body]
    label = f"{name} {recipe}"
    if lines and lines[0].startswith("#!"):
        return out + _tasks.run_code(label, lines[0][2:].split(), "\n".join(lines[1:]), ctx)
    return out + _tasks.run_lines(label, [line.lstrip("@-") for line in lines], ctx)


def task(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """go-task: the ``cmds`` of a task in ``Taskfile.yml`` (a plain reading of its YAML)."""
    values = [a.value for a in args]
    if any(v in ("-l", "--list", "-a", "--list-all", "-n", "--dry", "--summary", "--help",
                 "--version") for v in values):
        return [], True
    names = [v for v in values if v and not v.startswith("-") and "=" not in v] or ["default"]
    path = _tasks.find_up(ctx.cwd, ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml"),
                          ctx.root, ctx)
    if path is None:
        return [], False
    text = _tasks.read(path, ctx)
    if text is None:
        return _tasks.unread(name, path), False
    out: list[Finding] = []
    for t in names:
        cmds = _taskfile_cmds(text, t)
        if cmds is None:
            return out + _tasks.unread(name, f"the task {t!r} of {path}"), False
        out += _tasks.run_lines(f"{name} {t}", cmds, _tasks.at(ctx, os.path.dirname(path)))
    return out, False


def _taskfile_cmds(text: str, name: str) -> list[str] | None:
    """The commands of the task ``name`` of a Taskfile (None: no such task)."""
    block = _task_block(text.splitlines(), name)
    return None if block is None else _block_cmds(block)


def _task_block(lines: list[str], name: str) -> list[str] | None:
    """The lines (stripped, without blanks and comments) of the task ``name`` under
    ``tasks:``."""
    in_tasks = False
    task_indent = -1
    block: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        if stripped == "tasks:":
            in_tasks = True
            continue
        if not in_tasks or not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if block is not None:
            if indent <= task_indent:
                break
            block.append(stripped)
        elif stripped.rstrip(":") == name and stripped.endswith(":"):
            block, task_indent = [], indent
    return block


def _block_cmds(block: list[str]) -> list[str]:
    """``cmd: X`` and the items of ``cmds:`` (``- X``, ``- cmd: X``; not ``- task: T``)."""
    found: list[str] = []
    in_cmds = False
    for stripped in block:
        if stripped in ("cmds:", "cmd:"):
            in_cmds = True
            continue
        if stripped.startswith("cmd:"):
            found.append(stripped[4:].strip().strip("'\""))
        elif in_cmds and stripped.startswith("- "):
            item = stripped[2:].strip()
            if item.startswith("task:"):
                continue
            found.append(item.removeprefix("cmd:").strip().strip("'\"") if item.startswith(
                "cmd:") else item.strip("'\""))
        elif in_cmds and stripped.endswith(":"):
            in_cmds = False
    return found


def tox(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """tox: the ``commands`` of every ``[testenv…]`` section of ``tox.ini``."""
    if any(a.value in ("-l", "--listenvs", "-a", "--listenvs-all", "--help", "--version",
                       "--showconfig") for a in args):
        return [], True
    path = os.path.join(ctx.cwd or ctx.root, "tox.ini")
    if not _tasks.exists(path, ctx):
        return [], False
    text = _tasks.read(path, ctx)
    if text is None:
        return _tasks.unread(name, path), False
    commands: list[str] = []
    collecting = False
    for line in text.splitlines():
        if line.startswith("["):
            collecting = False
            continue
        stripped = line.strip()
        if "=" in stripped and not line[:1].isspace():
            key, _, value = stripped.partition("=")
            collecting = key.strip() in ("commands", "commands_pre", "commands_post")
            if collecting and value.strip():
                commands.append(value.strip())
        elif collecting and stripped and line[:1].isspace():
            commands.append(stripped.lstrip("-"))
    commands = [c.replace("{posargs}", "").replace("{toxinidir}", ".") for c in commands]
    return _tasks.run_lines(name, commands, _tasks.at(ctx, os.path.dirname(path))), False


#: runners whose tasks are code: the file is scanned by its language's interpreter
_CODE_RUNNERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "invoke": ("python3", ("tasks.py",)),
    "inv": ("python3", ("tasks.py",)),
    "nox": ("python3", ("noxfile.py",)),
    "rake": ("ruby", ("Rakefile", "rakefile", "Rakefile.rb")),
    "gulp": ("node", ("gulpfile.js", "gulpfile.mjs", "gulpfile.cjs")),
    "grunt": ("node", ("Gruntfile.js", "gruntfile.js")),
}


def code_runner(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    if any(a.value in ("-l", "--list", "-T", "--tasks", "--help", "-h", "--version")
           for a in args):
        return [], True
    language, names = _CODE_RUNNERS[name]
    path = _tasks.find_up(ctx.cwd, names, ctx.root, ctx)
    if path is None:
        return [], False
    found, _ = judge_argv([Word(language, language), Word(path, path)], cmd, ctx)
    return [Finding(f.rule, f.decision, f"{name}: {f.reason}", f.path) for f in found], False


def poe(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """poethepoet: ``[tool.poe.tasks]`` of ``pyproject.toml``."""
    values = [a.value for a in args if a.value is not None and not a.value.startswith("-")]
    if not values:
        return [], True
    found = _tasks.pyproject_task(name, values[0], ("poe", "tasks"), ctx)
    return found if found is not None else _tasks.unread(name, f"the task {values[0]!r}"), False


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "make": make,
    "gmake": make,
    "just": just,
    "task": task,
    "go-task": task,
    "tox": tox,
    "poe": poe,
    **dict.fromkeys(_CODE_RUNNERS, code_runner),
}
