"""Package managers: the scripts they run, what they publish, where they install from.

* scripts: ``npm run X`` (``npm test``, ``yarn X``, ``pnpm X``, ``bun run X``, with their
  ``pre``/``post`` scripts and workspaces), the project's install scripts on a bare
  ``npm install``, ``pdm run``/``hatch run``/``rye run``/``pipenv run`` tasks, composer
  scripts: read from the project and analysed as shell; a script that must exist and
  cannot be read escalates;
* ``poetry run``, ``uv run``, ``npm exec``, ``npx``, ``pipx run``, ``bundle exec``…:
  the command they run is judged in their place;
* publishing what others depend on (``npm publish``, ``cargo publish``, ``twine
  upload``, ``gem push``, ``mvn deploy``, …) escalates, removing it (``npm unpublish``)
  is denied;
* installing from an arbitrary URL (a tarball, a git repository, another index or
  registry) escalates.
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.gate.shell import _tasks
from smllm.gate.shell._analyse import judge_argv, nested
from smllm.gate.shell._flags import Options, read, subcommand
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

_URL_PREFIXES = ("http://", "https://", "git+", "git://", "ssh://", "github:", "gitlab:",
                 "bitbucket:", "gist:", "ftp://", "hg+", "svn+", "bzr+")
_DEFAULT_INDEXES = ("https://pypi.org/simple", "https://registry.npmjs.org",
                    "https://registry.yarnpkg.com", "https://index.crates.io")


def _publish(reason: str) -> Result:
    return [Finding("publish.release", "ask", reason)], False


def _url_install(tool: str, spec: str) -> Finding:
    return Finding("install.url", "ask", f"{tool} installs from {spec}, not from the registry")


def _remote_spec(spec: str, npm_style: bool = False) -> bool:
    """A package spec naming a URL, a repository or a tarball rather than a name."""
    lowered = spec.lower()
    if lowered.startswith(_URL_PREFIXES) or " @ " in spec or "@http" in lowered or (
            "@git+" in lowered):
        return True
    if lowered.endswith((".tgz", ".tar.gz", ".whl", ".zip")) and not spec.startswith((".", "/")):
        return "://" in spec
    # user/repo: a GitHub repository
    return npm_style and "/" in spec and not spec.startswith(("@", ".", "/", "~")) and (
        ":" not in spec)


# ---------------------------------------------------------------- npm, yarn, pnpm, bun

_NPM_ARG = frozenset({"--prefix", "-w", "--workspace", "--registry", "--userconfig",
                      "--cache", "--loglevel", "--tag", "--otp", "--access", "-C", "--dir",
                      "--filter", "-F", "--cwd", "--script-shell"})
_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
_NPM_TEST = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop",
             "restart": "restart"}
_NPM_INSTALL = frozenset({"install", "i", "in", "ins", "inst", "insta", "instal", "isnt",
                          "isnta", "isntal", "isntall", "add", "ci", "clean-install",
                          "install-clean", "isntall-clean", "install-test", "it", "update",
                          "up", "upgrade"})
_LIFECYCLE = ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
              "postprepare")
_YARN_BUILTIN = frozenset({
    "add", "install", "remove", "upgrade", "up", "info", "init", "publish", "version", "why",
    "workspaces", "workspace", "global", "cache", "config", "link", "unlink", "pack", "list",
    "outdated", "audit", "bin", "dlx", "exec", "node", "create", "import", "licenses",
    "login", "logout", "owner", "policies", "tag", "team", "unplug", "patch", "plugin",
    "set", "constraints", "explain", "npm", "help", "dedupe", "rebuild", "stage", "search",
    "generate-lock-entry", "check", "autoclean", "upgrade-interactive", "test", "run",
})
_PNPM_BUILTIN = frozenset({
    "add", "install", "i", "update", "up", "upgrade", "remove", "rm", "uninstall", "un",
    "link", "ln", "unlink", "import", "rebuild", "rb", "prune", "fetch", "install-test",
    "it", "patch", "patch-commit", "audit", "list", "ls", "outdated", "why", "licenses",
    "publish", "pack", "exec", "dlx", "create", "init", "store", "env", "setup", "server",
    "bin", "root", "deploy", "config", "doctor", "test", "t", "start", "run", "recursive",
    "dedupe", "help", "cat-file", "cat-index", "find-hash", "self-update",
})


class _NpmCall:
    """One npm/yarn/pnpm/bun/npx command line, read: its subcommand, the words after it,
    the package folders it runs in, and the findings of its global options."""

    __slots__ = ("args", "at", "cmd", "ctx", "folders", "name", "out", "rest", "rest_words",
                 "sub")

    def __init__(self, name: str, args: list[Word], at: int, cmd: Simple, ctx: Context
                 ) -> None:
        values = [a.value or "" for a in args]
        self.name = name
        self.args = args
        self.at = at  # the index of the subcommand
        self.sub = values[at] if at < len(values) else ""
        self.rest = values[at + 1:]
        self.rest_words = args[at + 1:]
        self.cmd = cmd
        self.ctx = ctx
        self.out: list[Finding] = []
        self.folders: list[str] = []


def npm(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    if any(a.value is None for a in args[:1]):
        return [Finding("shell.dynamic-command", "ask", f"{name} with a run-time argument")
                ], False
    values = [a.value or "" for a in args]
    call = _NpmCall(name, args, subcommand(values, _NPM_ARG), cmd, ctx)
    folder, workspaces = _npm_globals(call, values[:call.at], values)
    workspaces = _npm_workspaces(call.rest, workspaces)
    call.folders = _folders(folder, workspaces, ctx)
    handler = next((h for matches, h in _NPM_SUBCOMMANDS if matches(call)), _npm_other)
    return handler(call)


def _npm_globals(call: _NpmCall, head: list[str], values: list[str]
                 ) -> tuple[str, list[str] | None]:
    """The folder and the workspaces the global options choose; a registry or a script
    shell they set is a finding."""
    folder = call.ctx.cwd or call.ctx.root
    workspaces: list[str] | None = None
    for j, v in enumerate(head):
        nxt = values[j + 1] if j + 1 < len(values) else ""
        if v in ("--prefix", "-C", "--dir", "--cwd"):
            folder = os.path.join(folder, nxt)
        elif v.startswith(("--prefix=", "--dir=", "--cwd=")):
            folder = os.path.join(folder, v.split("=", 1)[1])
        elif v in ("-w", "--workspace", "--filter", "-F"):
            workspaces = [*(workspaces or []), nxt]
        elif v in ("-ws", "--workspaces", "-r", "--recursive"):
            workspaces = [*(workspaces or []), "*"]
        elif v.startswith("--registry"):
            registry = v.split("=", 1)[1] if "=" in v else nxt
            if not registry.startswith(_DEFAULT_INDEXES):
                call.out.append(_url_install(call.name, f"the registry {registry}"))
        elif v.startswith("--script-shell"):
            call.out.append(Finding("exec.code-option", "ask", f"{call.name} --script-shell "
                                    "runs scripts with another program"))
    return folder, workspaces


def _npm_workspaces(rest: list[str], workspaces: list[str] | None) -> list[str] | None:
    """The workspaces that options after the subcommand add (they move the project)."""
    for j, v in enumerate(rest):
        if v in ("-w", "--workspace", "--filter") and j + 1 < len(rest):
            workspaces = [*(workspaces or []), rest[j + 1]]
        elif v.startswith(("--workspace=", "--filter=")):
            workspaces = [*(workspaces or []), v.split("=", 1)[1]]
        elif v in ("-ws", "--workspaces", "-r", "--recursive"):
            workspaces = [*(workspaces or []), "*"]
    return workspaces


def _npm_npx(c: _NpmCall) -> Result:
    found, _ = _npx(c.name, c.args if c.name == "npx" else c.rest_words, c.cmd, c.ctx)
    return c.out + found, False


def _npm_bare(c: _NpmCall) -> Result:
    if c.name == "yarn":  # a bare yarn installs
        return c.out + _lifecycle(c.name, c.folders, c.ctx), False
    return c.out, False


def _npm_publish(c: _NpmCall) -> Result:
    if "--dry-run" in c.rest:
        return c.out, False
    return _publish(f"{c.name} publish releases a package others install")


def _npm_unpublish(c: _NpmCall) -> Result:
    return [*c.out, Finding("data.destroy", "deny",
                            f"{c.name} unpublish removes a package others depend on")], False


def _npm_changes_release(c: _NpmCall) -> Result:
    return _publish(f"{c.name} {c.sub} changes a published package")


def _npm_install(c: _NpmCall) -> Result:
    specs = [v for v in c.rest if v and not v.startswith("-")]
    out = c.out + [_url_install(c.name, spec) for spec in specs
                   if _remote_spec(spec, npm_style=True)]
    if not specs or c.sub in ("ci", "clean-install", "install-test", "it"):
        out += _lifecycle(c.name, c.folders, c.ctx)
        if c.sub in ("install-test", "it"):
            out += _scripts(c.name, "test", c.folders, c.ctx)
    return out, False


def _npm_exec(c: _NpmCall) -> Result:
    inner = [w for w in c.rest_words if w.value != "--"]
    inner = [w for w in inner if not (w.value or "").startswith("-")] if inner else inner
    if not inner:
        return c.out, False
    found, _ = judge_argv(inner, c.cmd, c.ctx)
    return c.out + found, False


def _npm_run(c: _NpmCall) -> Result:
    script = next((v for v in c.rest if not v.startswith("-")), None)
    if script is None:
        return c.out, True  # lists the scripts
    if c.name == "bun" and not _has_script(script, c.folders, c.ctx):
        return c.out + _bun_file(c.rest_words, c.cmd, c.ctx), False
    return c.out + _scripts(c.name, script, c.folders, c.ctx, required=True), False


def _npm_test(c: _NpmCall) -> Result:
    return c.out + _scripts(c.name, _NPM_TEST[c.sub], c.folders, c.ctx), False


def _npm_script_or_binary(c: _NpmCall) -> Result:
    """``yarn X``/``pnpm X``/``bun X``: the script X, else a binary of the project (bun: a
    file)."""
    if _has_script(c.sub, c.folders, c.ctx):
        return c.out + _scripts(c.name, c.sub, c.folders, c.ctx), False
    if c.name == "bun":
        return c.out + _bun_file(c.args[c.at:], c.cmd, c.ctx), False
    found, _ = judge_argv(c.args[c.at:], c.cmd, c.ctx)  # yarn/pnpm run a binary of the project
    return c.out + found, False


def _npm_other(c: _NpmCall) -> Result:
    out, sub, rest = c.out, c.sub, c.rest
    if sub == "config" and rest[:1] == ["set"] and any("script-shell" in v for v in rest):
        out.append(Finding("exec.code-option", "ask", f"{c.name} config sets the script shell"))
    if sub in ("pkg",) and rest[:1] == ["set"] and any(v.startswith("scripts.") for v in rest):
        out.append(Finding("exec.code-option", "ask", f"{c.name} pkg set changes a script"))
    if c.name == "bun" and sub in ("-e", "--eval", "-p", "--print", "test", "build"):
        return out + _bun_file(c.args[c.at:], c.cmd, c.ctx), False
    return out, sub in ("ls", "list", "view", "info", "outdated", "audit", "why", "help",
                        "search", "root", "bin", "version", "--version", "-v") and not out


#: npm's subcommands (and yarn's, pnpm's, bun's), the first that matches decides
_NPM_SUBCOMMANDS: tuple[tuple[Callable[[_NpmCall], bool], Callable[[_NpmCall], Result]], ...] = (
    (lambda c: c.name == "npx" or (c.name in ("yarn", "pnpm") and c.sub == "dlx") or (
        c.name == "bun" and c.sub == "x"), _npm_npx),
    (lambda c: not c.sub, _npm_bare),
    (lambda c: c.sub == "publish" or (c.name == "yarn" and c.sub == "npm"
                                      and c.rest[:1] == ["publish"]), _npm_publish),
    (lambda c: c.sub == "unpublish", _npm_unpublish),
    (lambda c: c.sub in ("deprecate", "dist-tag", "owner") and c.rest[:1] != ["ls"],
     _npm_changes_release),
    (lambda c: c.sub in _NPM_INSTALL or (c.name == "bun" and c.sub in ("add", "install", "i")),
     _npm_install),
    (lambda c: (c.sub in ("exec", "x") and c.name != "yarn") or (
        c.name == "yarn" and c.sub == "exec"), _npm_exec),
    (lambda c: c.sub in _NPM_RUN or (c.name == "bun" and c.sub == "run"), _npm_run),
    (lambda c: c.sub in _NPM_TEST, _npm_test),
    (lambda c: c.name in ("yarn", "pnpm", "bun") and c.sub not in (
        _YARN_BUILTIN if c.name == "yarn" else _PNPM_BUILTIN), _npm_script_or_binary),
)


def _npx(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    out: list[Finding] = []
    i = 0
    packages: list[str] = []
    while i < len(args):
        v = args[i].value
        if v is None:
            return [Finding("shell.dynamic-command", "ask", f"{name} runs a run-time package")
                    ], False
        if v in ("-c", "--call") and i + 1 < len(args):
            return out + nested(args[i + 1].value or "", ctx, f"{name} -c"), False
        if v in ("-p", "--package") and i + 1 < len(args):
            packages.append(args[i + 1].value or "")
            i += 2
            continue
        if v.startswith("--package="):
            packages.append(v.split("=", 1)[1])
        elif v == "--":
            i += 1
            break
        elif not v.startswith("-"):
            break
        i += 1
    rest = args[i:]
    if rest and rest[0].value is not None:
        packages.append(rest[0].value)
    out += [_url_install(name, p) for p in packages if _remote_spec(p, npm_style=True)]
    if rest and not out:
        program = bin_name(rest[0].value or "")
        found, _ = judge_argv([Word(program, program), *rest[1:]], cmd, ctx)
        out += found
    return out, False


def bin_name(spec: str) -> str:
    """The program a package spec runs: ``@scope/tool@1.2`` -> ``tool``."""
    name = spec.rsplit("/", 1)[-1] if spec.startswith("@") else spec
    return name.split("@", 1)[0] or name


def _bun_file(args: list[Word], cmd: Simple, ctx: Context) -> list[Finding]:
    node = Word("node", "node")
    words = [w for w in args if w.value not in ("run", "test", "build")]
    if words and words[0].value in ("-e", "--eval", "-p", "--print"):
        words = [Word("-e", "-e"), *words[1:]]
    found, _ = judge_argv([node, *words], cmd, ctx)
    return found


def _folders(folder: str, workspaces: list[str] | None, ctx: Context) -> list[str]:
    """The package folders a command runs in: the project, or its workspaces that match."""
    if not workspaces:
        return [os.path.normpath(folder)]
    data = _tasks.package_json(folder, ctx) or {}
    patterns = data.get("workspaces", [])
    if isinstance(patterns, dict):
        patterns = patterns.get("packages", [])
    globs = [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else []
    pnpm = _tasks.read(os.path.join(folder, "pnpm-workspace.yaml"), ctx)
    for line in (pnpm or "").splitlines():
        item = line.strip()
        if item.startswith("- "):
            globs.append(item[2:].strip().strip("'\""))
    found: list[str] = []
    for g in globs:
        base = g.rstrip("/*").rstrip("/") if g.endswith("*") else g
        if g.endswith("*"):
            try:
                names = sorted(os.listdir(os.path.join(folder, base)))
            except OSError:
                names = []
            found += [os.path.join(folder, base, n) for n in names]
        else:
            found.append(os.path.join(folder, base))
    selected = []
    for f in found:
        meta = _tasks.package_json(f, ctx)
        pkg_name = meta.get("name") if meta else None
        if meta is not None and any(w in ("*", pkg_name, os.path.relpath(f, folder),
                                          os.path.basename(f)) for w in workspaces):
            selected.append(os.path.normpath(f))
    return selected or [os.path.normpath(folder)]


def _has_script(script: str, folders: list[str], ctx: Context) -> bool:
    for f in folders:
        scripts = _tasks.table(_tasks.package_json(f, ctx), "scripts")
        if script in scripts:
            return True
    return False


def _scripts(runner: str, script: str, folders: list[str], ctx: Context,
             required: bool = False) -> list[Finding]:
    out: list[Finding] = []
    for folder in folders:
        path = os.path.join(folder, "package.json")
        if not _tasks.exists(path, ctx):
            continue
        data = _tasks.package_json(folder, ctx)
        if data is None:
            return out + _tasks.unread(runner, path)
        scripts = _tasks.table(data, "scripts")
        if required and script not in scripts and len(folders) == 1:
            return out  # npm stops: missing script
        run_ctx = _tasks.at(ctx, folder)
        for key in (f"pre{script}", script, f"post{script}"):
            body = scripts.get(key)
            if isinstance(body, str):
                out += _tasks.run_lines(f"{runner} run {key}", [body], run_ctx)
    return out


def _lifecycle(runner: str, folders: list[str], ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    for folder in folders:
        scripts = _tasks.table(_tasks.package_json(folder, ctx), "scripts")
        run_ctx = _tasks.at(ctx, folder)
        for key in _LIFECYCLE:
            body = scripts.get(key)
            if isinstance(body, str):
                out += _tasks.run_lines(f"{runner} install ({key})", [body], run_ctx)
    return out


# ---------------------------------------------------------------- Python

_PIP_INDEX = frozenset({"-i", "--index-url", "--extra-index-url", "-f", "--find-links",
                        "--trusted-host"})


def pip(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    if sub not in ("install", "download", "wheel", "add"):
        return [], sub in ("list", "show", "freeze", "check", "help", "--version", "config",
                           "inspect", "index", "search", "debug")
    return _python_install(name, values[values.index(sub) + 1:]), False


def _python_install(tool: str, values: list[str]) -> list[Finding]:
    out: list[Finding] = []
    skip = False
    for j, v in enumerate(values):
        if skip:
            skip = False
            continue
        key, eq, value = v.partition("=")
        if key in _PIP_INDEX:
            target = value if eq else (values[j + 1] if j + 1 < len(values) else "")
            skip = not eq
            if not target.startswith(_DEFAULT_INDEXES):
                out.append(_url_install(tool, f"the index {target}"))
            continue
        if key in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable", "--with",
                   "--from", "--spec", "--python", "-p", "--target", "-t", "--prefix", "--root"):
            if key in ("-e", "--editable", "--with", "--from", "--spec") and not eq:
                spec = values[j + 1] if j + 1 < len(values) else ""
                if _remote_spec(spec):
                    out.append(_url_install(tool, spec))
            skip = not eq
            continue
        if not v.startswith("-") and _remote_spec(v):
            out.append(_url_install(tool, v))
    return out


def uv(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    with_arg = frozenset({"--directory", "--project", "--python", "-p", "--cache-dir",
                          "--config-file", "--color"})
    i = subcommand(values, with_arg)
    sub = values[i] if i < len(values) else ""
    rest = values[i + 1:]
    if name == "uvx" or (sub == "tool" and rest[:1] in (["run"], ["install"], ["upgrade"])):
        tool_args = args[i:] if name == "uvx" else args[i + 2:]
        return _runner_command(name, tool_args, cmd, ctx, options=_UV_RUN, install=True)
    if sub == "pip" and rest[:1] == ["install"]:
        return _python_install(name, rest[1:]), False
    if sub in ("add",):
        return _python_install(name, rest), False
    if sub == "publish":
        return _publish("uv publish uploads a package to an index")
    if sub == "run":
        return _runner_command(name, args[i + 1:], cmd, ctx, options=_UV_RUN)
    return [], sub in ("tree", "version", "help", "--version") or (sub == "pip" and rest[:1] in (
        ["list"], ["show"], ["freeze"]))


_UV_RUN_ARG = frozenset({"--with", "--with-editable", "--with-requirements", "--python", "-p",
                         "--project", "--directory", "--env-file", "--group", "--extra",
                         "--package", "--index", "--index-url", "--default-index",
                         "--extra-index-url", "--find-links", "-f", "--from", "--spec",
                         "--module", "-m", "--only-group", "--no-group", "--exclude-newer",
                         "--refresh-package", "--upgrade-package", "-P", "--reinstall-package",
                         "--config-setting", "-C", "--script", "-s"})
#: how the runners read their options (a lone ``-`` is read as one, as it always was)
_UV_RUN = Options(_UV_RUN_ARG, dash=True)
_PIPX_RUN = Options(("--spec", "--python", "--pip-args"), dash=True)
_NO_OPTIONS = Options(dash=True)


#: the options of a runner whose value names where packages come from
_SOURCES = ("--with", "--from", "--spec", "--index", "--index-url", "--extra-index-url",
            "--default-index", "-f", "--find-links", "--with-editable")


def _runner_command(name: str, args: list[Word], cmd: Simple, ctx: Context, *,
                    options: Options, install: bool = False) -> Result:
    """``uv run``, ``poetry run``, ``pipx run``…: the options, then the command."""
    out: list[Finding] = []
    values = [a.value for a in args]
    i = len(args)
    for arg in read(values, options):
        if arg.name in ("", "--"):
            i = arg.at if arg.name == "" else arg.end
            break
        v = values[arg.at] or ""
        key, eq, value = v.partition("=")
        if key in _SOURCES:
            target = value if eq else (args[arg.at + 1].value or "" if arg.at + 1 < len(args)
                                       else "")
            if _remote_spec(target) or (key not in ("--with", "--from", "--spec",
                                                    "--with-editable")
                                        and not target.startswith(_DEFAULT_INDEXES)):
                out.append(_url_install(name, target))
        if key in ("-m", "--module") and not eq:
            module = args[arg.at + 1] if arg.at + 1 < len(args) else None
            found, _ = judge_argv([Word("python", "python"), Word("-m", "-m"),
                                   *([module] if module else []), *args[arg.at + 2:]], cmd, ctx)
            return out + found, False
    rest = args[i:]
    if not rest:
        return out, False
    if install and rest[0].value and _remote_spec(rest[0].value):
        return [*out, _url_install(name, rest[0].value)], False
    found, _ = judge_argv(rest, cmd, ctx)
    return out + found, False


def python_project(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """poetry, pdm, hatch, rye, pipenv: ``run`` (a task of the project, or a command),
    ``publish``, ``add``/``install`` from a URL."""
    values = [a.value or "" for a in args]
    i = subcommand(values, frozenset({"-C", "--directory", "-P", "--project", "-p", "-e",
                                      "--env"}))
    sub = values[i] if i < len(values) else ""
    rest = args[i + 1:]
    if sub == "publish" or (name == "twine" and sub == "upload") or (
            name == "flit" and sub == "publish"):
        return ([], False) if "--dry-run" in values else _publish(
            f"{name} {sub} uploads a package to an index")
    if sub in ("add", "install") and name != "hatch":
        return _python_install(name, [v for v in values[i + 1:]]), False
    if sub == "run" and rest:
        found = _project_task(name, rest[0].value or "", ctx)
        if found is not None:
            return found, False
        return _runner_command(name, rest, cmd, ctx, options=_NO_OPTIONS)
    if name == "poetry" and sub == "poe" and rest:
        found = _tasks.pyproject_task("poe", rest[0].value or "", ("poe", "tasks"), ctx)
        return found or [], False
    return [], sub in ("show", "list", "check", "version", "env", "--version", "info")


def _project_task(name: str, task: str, ctx: Context) -> list[Finding] | None:
    """``pdm run X``, ``rye run X``, ``hatch run [ENV:]X``, ``pipenv run X``: the task X
    of the project's pyproject.toml or Pipfile (None: no such task, X is a command)."""
    keys = {"pdm": ("pdm", "scripts"), "rye": ("rye", "scripts"),
            "hatch": ("hatch", "envs", task.split(":", 1)[0] if ":" in task else "default",
                      "scripts")}.get(name)
    task_name = task.split(":", 1)[1] if name == "hatch" and ":" in task else task
    if keys is not None:
        found = _tasks.pyproject_task(name, task_name, keys, ctx)
        if found is not None:
            return found
    return _pipfile_script(task, ctx) if name == "pipenv" else None


def _pipfile_script(task: str, ctx: Context) -> list[Finding] | None:
    path = _tasks.find_up(ctx.cwd, ("Pipfile",), ctx.root, ctx)
    if path is None:
        return None
    scripts = _tasks.table(_tasks.toml(path, ctx), "scripts")
    body = scripts.get(task)
    if not isinstance(body, str):
        return None
    return _tasks.run_lines(f"pipenv run {task}", [body], _tasks.at(ctx, os.path.dirname(path)))


def pipx(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    j = values.index(sub) + 1 if sub else len(values)
    if sub in ("install", "inject", "upgrade"):
        return [_url_install(name, v) for v in values[j:] if not v.startswith("-")
                and _remote_spec(v)], False
    if sub == "run":
        return _runner_command(name, args[j:], cmd, ctx, options=_PIPX_RUN, install=True)
    return [], sub in ("list", "environment", "--version")


# ---------------------------------------------------------------- other ecosystems

def cargo(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith(("-", "+"))), "")
    rest = values[values.index(sub) + 1:] if sub else []
    if sub == "publish":
        return ([], False) if "--dry-run" in rest else _publish(
            "cargo publish releases a crate others depend on")
    if sub == "yank":
        return _publish("cargo yank withdraws a published version")
    if sub == "install":
        out = [_url_install(name, rest[j + 1]) for j, v in enumerate(rest)
               if v in ("--git", "--index", "--registry") and j + 1 < len(rest)]
        out += [_url_install(name, v.split("=", 1)[1]) for v in rest
                if v.startswith(("--git=", "--index="))]
        return out, False
    return [], sub in ("check", "tree", "metadata", "search", "version", "--version", "help")


def gem(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    rest = values[values.index(sub) + 1:] if sub else []
    if sub in ("push", "yank", "owner"):
        return _publish(f"gem {sub} changes a published gem")
    if sub == "install":
        return [_url_install(name, rest[j + 1]) for j, v in enumerate(rest)
                if v in ("--source", "-s", "--clear-sources") and j + 1 < len(rest)
                and not rest[j + 1].startswith("https://rubygems.org")], False
    return [], sub in ("list", "search", "info", "env", "--version", "help", "contents")


def build_tool(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """mvn, gradle: deploying or publishing artifacts."""
    values = [a.value or "" for a in args]
    if any(v in ("deploy", "release:perform", "deploy:deploy-file") or v.startswith(
            ("publish", ":publish")) or ":publish" in v for v in values):
        return _publish(f"{name} publishes artifacts to a repository")
    return [], False


def dotnet(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    if values[:2] == ["nuget", "push"]:
        return _publish("dotnet nuget push publishes a package")
    if values[:2] == ["nuget", "delete"]:
        return [Finding("data.destroy", "deny", "dotnet nuget delete removes a published "
                        "package")], False
    return [], False


def composer(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    rest = values[values.index(sub) + 1:] if sub else []
    path = os.path.join(ctx.cwd or ctx.root, "composer.json")
    scripts = _tasks.table(_tasks.json_file(path, ctx), "scripts")
    script = rest[0] if sub in ("run-script", "run") and rest else sub
    if script in scripts:
        return _composer_script(script, scripts, ctx, 0), False
    return [], sub in ("show", "info", "list", "validate", "outdated", "licenses", "--version")


def _composer_script(script: str, scripts: dict[str, object], ctx: Context, depth: int
                     ) -> list[Finding]:
    body = scripts.get(script)
    lines = [body] if isinstance(body, str) else body if isinstance(body, list) else []
    out: list[Finding] = []
    for line in lines:
        if not isinstance(line, str) or depth > 8:
            continue
        if line.startswith("@") and line[1:].split()[0] in scripts:
            out += _composer_script(line[1:].split()[0], scripts, ctx, depth + 1)
        elif line.startswith("@php "):
            out += _tasks.run_lines(f"composer {script}", ["php " + line[5:]], ctx)
        elif not line.startswith("@") and "::" not in line:
            out += _tasks.run_lines(f"composer {script}", [line], ctx)
    return out


def system_packages(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    """brew, apt, dnf, snap, ...: a package file or URL instead of a package name."""
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    rest = [v for v in values[values.index(sub) + 1:] if not v.startswith("-")] if sub else []
    if sub in ("install", "reinstall", "localinstall") and name != "dpkg":
        remote = [v for v in rest if _remote_spec(v) or v.endswith((".deb", ".rpm", ".snap",
                                                                     ".pkg.tar.zst", ".apk"))]
        if "--dangerous" in values or "--devmode" in values:
            remote.append("a package without a signature check")
        return [_url_install(name, v) for v in remote], False
    if name == "brew" and sub == "tap" and len(rest) >= 2:
        return [_url_install(name, rest[1])], False
    if name == "dpkg" and any(v in ("-i", "--install") for v in values):
        return [_url_install(name, " ".join(rest) or "a package file")], False
    return [], sub in ("list", "search", "info", "show", "policy", "--version")


def go(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    sub = next((v for v in values if not v.startswith("-")), "")
    rest = [v for v in values[values.index(sub) + 1:] if not v.startswith("-")] if sub else []
    if sub == "run" and rest and "@" in rest[0] and "." in rest[0].split("/", 1)[0]:
        return [_url_install(name, rest[0])], False
    return [], sub in ("version", "env", "list", "doc", "vet", "help")


def editor_publish(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value or "" for a in args]
    if values[:1] in (["publish"], ["unpublish"]):
        return _publish(f"{name} {values[0]} changes a published extension")
    return [], False


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    "npm": npm,
    "npx": npm,
    "yarn": npm,
    "pnpm": npm,
    "bun": npm,
    "pip": pip,  # pip3, pip3.12, ... by pattern
    "uv": uv,
    "uvx": uv,
    "pipx": pipx,
    "poetry": python_project,
    "pdm": python_project,
    "hatch": python_project,
    "rye": python_project,
    "pipenv": python_project,
    "twine": python_project,
    "flit": python_project,
    "cargo": cargo,
    "gem": gem,
    "mvn": build_tool,
    "mvnw": build_tool,
    "gradle": build_tool,
    "gradlew": build_tool,
    "dotnet": dotnet,
    "composer": composer,
    "brew": system_packages,
    "apt": system_packages,
    "apt-get": system_packages,
    "dnf": system_packages,
    "yum": system_packages,
    "zypper": system_packages,
    "snap": system_packages,
    "dpkg": system_packages,
    "go": go,
    "vsce": editor_publish,
    "ovsx": editor_publish,
}
