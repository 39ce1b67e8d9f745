"""``smllm install`` / ``uninstall``: smllm's hooks in a Claude Code settings file.

What install owns: one matcher group per event of product.md §4, whose single hook runs
one short command, ``<folder>/smllm-hook EVENT``. ``smllm-hook`` is a small executable
install writes beside the interpreter (:func:`hook_script`): a ``#!<python> -IS`` line, the
fail-closed guard (:data:`HOOK_GUARD`), the import paths ``-S`` leaves out and
``from smllm.hooks import cli; cli()`` -- no shell, no runpy, no console-script wrapper.
That command *is* the mark: :func:`smllm.setup.settings.smllm_event_of` recognises it (and
the longer ``python -c '...' EVENT`` and ``python -m smllm hook EVENT`` forms of earlier
versions), and uninstall removes exactly the hook objects that carry it (and a group, event
or ``hooks`` key only when removing ours left it empty). Everything else in the file is
kept, in order.

Beside the hooks, install registers in project scope the MCP server in the project's
``.mcp.json`` (a second file, planned and recorded like the first), and turns on Claude
Code's sandbox (:mod:`smllm.setup.sandbox`). It writes no permission rules
(:mod:`smllm.setup.firing` says why) and removes those an earlier version added.

Byte-for-byte round trip: before the first change, install saves the file's original
text in a private record under ``paths.state_dir()/installs/``. Uninstall restores that
text verbatim when what is left after removing our entries equals it as data (nobody
changed anything else meanwhile); otherwise it writes the structural result in the
file's own layout.

Concurrency: install and uninstall hold a lock on the settings folder (the ``filelock``
package: an OS lock, released if the process dies, and portable to Windows) from reading
the files to writing them, so two runs never interleave their read-modify-write.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import hashlib
import json
import os
import shlex
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import smllm
from smllm.base import paths, protected
from smllm.base.errors import InstallError, UsageError
from smllm.hooks import GATING, INSTALLED
from smllm.setup import firing, sandbox, settings

if TYPE_CHECKING:
    from collections.abc import Iterator

#: the events smllm registers -> timeout in seconds (from the table in smllm.hooks)
EVENTS: dict[str, int] = {name: timeout for name, (timeout, _) in INSTALLED.items()}
#: events whose matcher is a tool name: registered for every tool (``*``)
TOOL_EVENTS = frozenset(name for name, (_, matcher) in INSTALLED.items() if matcher)

Action = Literal["install", "uninstall"]


#: how long install/uninstall waits for another one working on the same settings folder
LOCK_TIMEOUT = 60.0


@dataclass(frozen=True)
class Target:
    scope: settings.Scope
    path: Path

    @property
    def project(self) -> Path:
        """The project folder (for ``project``/``local``: the parent of ``.claude``)."""
        return self.path.parent.parent


@dataclass(frozen=True)
class Plan:
    """What install/uninstall would do to one file."""

    action: Action
    target: Target
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is to be removed
    summary: str
    record: dict[str, Any] | None = None  # the install record to save (install) or drop
    companion: Plan | None = None  # the project's .mcp.json, planned with the settings file
    executable: tuple[Path, str] | None = None  # the hook executable to (re)write

    @property
    def changed(self) -> bool:
        return (self.before != self.after or self.executable is not None
                or bool(self.companion and self.companion.changed))

    @property
    def plans(self) -> list[Plan]:
        """This file's plan and its companion's, in the order they are applied."""
        return [self, *([self.companion] if self.companion is not None else [])]


def project_root(project: str | None, user: bool) -> Path | None:
    """The project folder ``--project DIR`` names (the cwd without it), None for
    ``--user``; an error for both, or for a folder that does not exist. Every host's
    install reads its flags with this."""
    if user:
        if project is not None:
            raise UsageError("--user and --project name different files", "give one of them")
        return None
    root = Path(project).expanduser().absolute() if project else Path.cwd()
    if not root.is_dir():
        raise InstallError(f"project folder {root} does not exist", "create it or fix the path")
    return root


def resolve_target(project: str | None, user: bool, local: bool) -> Target:
    """The settings file named by ``--project DIR | --user`` and ``--local``."""
    if user and local and project is None:
        raise UsageError("--local applies to a project",
                         "use --project DIR --local, or --user alone")
    root = project_root(project, user)
    if root is None:
        return Target("user", settings.settings_path("user"))
    scope: settings.Scope = "local" if local else "project"
    return Target(scope, settings.settings_path(scope, root))


# ------------------------------------------------------------------ the hooks we own


def import_paths() -> list[str]:
    """Where this interpreter finds smllm and its dependencies (for hooks run with ``-S``)."""


    found = [str(Path(smllm.__file__).resolve().parent.parent), *site.getsitepackages()]
    return list(dict.fromkeys(p for p in found if os.path.isdir(p)))


def _imports_the_same(python: str, flags: list[str], code_prefix: str, here: str) -> bool:
    probe = (f"{code_prefix}import smllm, smllm.hooks, yaml, pydantic, platformdirs; "
             "print(smllm.__file__)")
    try:
        out = subprocess.run([python, *flags, "-c", probe], capture_output=True, text=True,
                             timeout=30, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and str(Path(out.stdout.strip()).resolve()) == here


def interpreter() -> tuple[str, list[str]]:
    """This interpreter's absolute path and its flags for hooks.

    ``-I -S`` when smllm and its dependencies import that way with :func:`import_paths`
    put on ``sys.path`` (skipping ``site`` saves a few milliseconds on every tool call),
    else ``-I`` if smllm imports isolated, else none.
    """
    python = sys.executable
    if not python or not os.path.isabs(python):
        raise InstallError("cannot tell which Python runs smllm (sys.executable is empty)",
                           "run `smllm install` with the interpreter smllm is installed in")
    python = canonical_python(python)
    here = str(Path(smllm.__file__).resolve())
    if _imports_the_same(python, ["-I", "-S"], _path_prefix(), here):
        return python, ["-I", "-S"]
    return python, (["-I"] if _imports_the_same(python, ["-I"], "", here) else [])


def canonical_python(python: str) -> str:
    """One name for the interpreter at ``python``: an environment's ``python``,
    ``python3`` and ``python3.11`` are one program, and ``smllm install`` run as ``smllm``
    (whose ``#!`` names ``python3``) or as ``python -m smllm`` writes the same hooks and the
    same hook executable (the first of ``python``, ``python3`` in its folder that is the
    same file, else ``python`` as given)."""
    folder = os.path.dirname(python)
    for name in ("python", "python3"):
        candidate = os.path.join(folder, name)
        try:
            if os.path.samefile(candidate, python):
                return candidate
        except OSError:
            continue
    return python


def _path_prefix() -> str:
    return f"import sys; sys.path[:0] = {json.dumps(import_paths())}; "


#: set first by every installed hook: if smllm itself cannot be imported (a broken or
#: removed install, a shadowed module), the hook still ends with a decision: exit 2, which
#: Claude Code treats as a block, for the gating event; a quiet exit 0 for the others;
#: never exit 1 with a traceback, which Claude Code ignores
HOOK_GUARD = ('import sys; sys.excepthook = lambda t, e, b: (sys.stderr.write('
              '"smllm hook could not start (" + t.__name__ + "): the call is denied\\n"), '
              '__import__("os")._exit(2 if sys.argv[1:2] == ["PreToolUse"] else 0)); ')
#: the hook entry point, without runpy
HOOK_ENTRY = "from smllm.hooks import cli; cli()"
#: the name of the executable each installed hook runs (``<its folder>/smllm-hook EVENT``)
HOOK_EXE = protected.HOOK_EXE
#: the longest ``#!`` line Linux reads whole (BINPRM_BUF_SIZE is 256 bytes, newline included)
SHEBANG_MAX = 255


def inline_command(event: str, python: str, flags: list[str]) -> str:
    """The long form earlier versions installed: the whole start-up in ``python -c``."""
    setup = _path_prefix().removeprefix("import sys; ") if "-S" in flags else ""
    code = HOOK_GUARD + setup + HOOK_ENTRY
    return " ".join([shlex.quote(python), *flags, "-c", shlex.quote(code), event])


def hook_executable(python: str) -> Path:
    """Where install writes the hook executable of ``python``: beside it, in its
    environment's ``bin`` folder, when that folder is writable; else in smllm's state
    folder, under a name derived from the interpreter."""
    folder = Path(python).parent
    if os.access(folder, os.W_OK):
        return folder / HOOK_EXE
    key = hashlib.sha256(python.encode()).hexdigest()[:12]
    return paths.state_dir() / "bin" / key / HOOK_EXE


def _shebang(python: str, flags: list[str]) -> str | None:
    """``#!python -IS``: the interpreter and its flags as one word (what the kernel passes
    on), or None where a ``#!`` line cannot carry them (a space, or too long)."""
    flag = "-" + "".join(f.lstrip("-") for f in flags) if flags else ""
    line = f"#!{python} {flag}".rstrip()
    if any(c.isspace() for c in python) or len(line.encode()) + 1 > SHEBANG_MAX:
        return None
    return line


def hook_script(python: str, flags: list[str]) -> str | None:
    """The text of the hook executable: today's fail-closed start-up (:data:`HOOK_GUARD`,
    the ``sys.path`` of ``-S``, :data:`HOOK_ENTRY`) under a ``#!`` line that runs
    ``python`` with ``flags`` directly (no shell, no runpy, no console-script wrapper);
    None where no ``#!`` line can (then the hooks keep the inline form)."""
    shebang = _shebang(python, flags)
    if shebang is None:
        return None
    setup = [_path_prefix().removeprefix("import sys; ").rstrip("; ")] if "-S" in flags else []
    return "\n".join([
        shebang,
        f"# smllm's hook entry point, written by `smllm install` (smllm {smllm.VERSION}).",
        "# Claude Code runs `smllm-hook EVENT` for each event in the settings; a gating event",
        "# (PreToolUse) still denies, exit 2 with the reason, if smllm cannot even start.",
        HOOK_GUARD.rstrip("; "), *setup, HOOK_ENTRY, ""])


def home_pin() -> str:
    """smllm's home as the installed hook command pins it (``--home``): the folder
    ``SMLLM_HOME`` names while install runs, else ``platform`` (the platform's folders).
    The hooks then keep their journals there whatever ``SMLLM_HOME`` their environment
    says (:func:`smllm.hooks.pin_home`)."""
    from smllm.hooks import PLATFORM_HOME  # noqa: PLC0415 - with the command it pins

    home = os.environ.get("SMLLM_HOME")
    return os.path.abspath(os.path.expanduser(home)) if home else PLATFORM_HOME


def hook_command(event: str, python: str, flags: list[str], harness: str = "") -> str:
    """The command install writes for ``event``: ``<folder>/smllm-hook EVENT [HARNESS]
    --home HOME`` (:func:`home_pin`), or the inline form where the executable cannot name
    ``python`` (:func:`hook_script`). ``harness``: ``--harness NAME`` for another host."""
    head = inline_command(event, python, flags) if _shebang(python, flags) is None \
        else f"{shlex.quote(str(hook_executable(python)))} {event}".rstrip()
    return " ".join(p for p in (head, harness, "--home", shlex.quote(home_pin())) if p)


def python_hook(executable: Path) -> Path:
    """The Python hook beside the native client ``executable`` (:mod:`smllm.worker`)."""
    return executable.with_name(protected.PYTHON_HOOK)


def native_client() -> bool:
    """Whether install builds the native hook client (:mod:`smllm.worker.native`): on
    Linux, where a C compiler is found. Elsewhere ``smllm-hook`` is the Python hook."""
    from smllm.worker import native  # noqa: PLC0415 - install only

    return sys.platform.startswith("linux") and native.compiler() is not None


def is_native(path: Path | str) -> bool:
    """Whether the hook executable at ``path`` is the native client (an ELF), not a script."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _client_mode(path: Path) -> str:
    """``build`` (a compiler is found: the native client is built when not current),
    ``keep`` (no compiler, but a native client is there: it stays, and only the Python hook
    behind it is written; an install run where ``PATH`` lacks the compiler does not swap
    the client for the script) or ``none`` (``smllm-hook`` is the Python hook)."""
    if native_client():
        return "build"
    return "keep" if is_native(path) else "none"


def _same_text(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text and os.access(path, os.X_OK)
    except (OSError, UnicodeDecodeError):
        return False


def executable_plan(python: str, flags: list[str]) -> tuple[Path, str] | None:
    """The hook executable to write (its path and the Python hook's text), or None when it
    is there as it should be (or the hooks use the inline form). Where install builds the
    native client (:func:`native_client`), ``smllm-hook`` is that client and the text goes
    to :func:`python_hook` beside it; else ``smllm-hook`` is the Python hook itself."""
    text = hook_script(python, flags)
    if text is None:
        return None
    path = hook_executable(python)
    mode = _client_mode(path)
    if mode == "build":
        from smllm.worker import native  # noqa: PLC0415 - install only

        script = python_hook(path)
        same = _same_text(script, text) and native.is_current(path, str(script))
    elif mode == "keep":
        same = _same_text(python_hook(path), text)
    else:
        same = _same_text(path, text)
    return None if same else (path, text)


def write_executable(path: Path, text: str) -> None:
    """Write the hook executable atomically, mode 0755: the Python hook and, where a C
    compiler is found, the native client in front of it (:func:`executable_plan`). A
    client that fails to build leaves the Python hook as ``smllm-hook``."""
    state = paths.state_dir()
    if state in path.parents:
        paths.ensure_private_tree(path.parent, state)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _client_mode(path)
    if mode != "none":
        settings.write_atomic(python_hook(path), text, mode=0o755)
    if mode == "keep":
        return
    if mode == "build":
        from smllm.worker import native  # noqa: PLC0415 - install only

        try:
            native.build(path, str(python_hook(path)))
        except InstallError as exc:
            sys.stderr.write(f"smllm: {exc.render()}: the hooks run the Python hook\n")
        else:
            return
    settings.write_atomic(path, text, mode=0o755)


#: what Claude Code does with a call whose gating hook fails (killed by a signal, timed
#: out, ended with a status other than 0 or 2): the pinned CLI (2.1.332) lets the call run
#: unless the hook says ``"onFailure": "block"`` (docs/security.md)
ON_FAILURE = "block"


def desired(python: str, flags: list[str]) -> dict[str, dict[str, Any]]:
    """The matcher group install adds for each event."""
    out: dict[str, dict[str, Any]] = {}
    for event, (timeout, matcher) in INSTALLED.items():
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        hook: dict[str, Any] = {"type": "command", "command": hook_command(event, python, flags),
                                "timeout": timeout}
        if event in GATING:  # a gating hook killed by a signal or timed out blocks its call
            hook["onFailure"] = ON_FAILURE
        group["hooks"] = [hook]
        out[event] = group
    return out


def owned(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Our hook objects in ``data``, by event."""
    found: dict[str, list[dict[str, Any]]] = {}
    hooks = data.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for group in groups:
            for hook in group.get("hooks", []):
                if settings.smllm_event_of(hook) is not None:
                    found.setdefault(event, []).append(hook)
    return found


def strip(data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """``data`` without our hooks, and how many were removed."""
    out = copy.deepcopy(data)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out, 0
    removed = 0
    for event in list(hooks):
        groups = []
        for group in hooks[event]:
            kept = [h for h in group.get("hooks", []) if settings.smllm_event_of(h) is None]
            removed += len(group.get("hooks", [])) - len(kept)
            if kept or not group.get("hooks"):
                groups.append({**group, "hooks": kept} if kept != group.get("hooks") else group)
        if groups or not hooks[event]:
            hooks[event] = groups
        else:
            del hooks[event]
    if not hooks and data.get("hooks"):
        del out["hooks"]
    return out, removed


def with_ours(data: dict[str, Any], python: str, flags: list[str]) -> dict[str, Any]:
    out, _ = strip(data)
    hooks = out.setdefault("hooks", {})
    for event, group in desired(python, flags).items():
        hooks.setdefault(event, []).append(group)
    return out


# ------------------------------------------------------------------ the lock


@contextlib.contextmanager
def locked(target: Target, *, dry_run: bool = False) -> Iterator[None]:
    """Hold the install lock of ``target``'s settings folder (and so of .mcp.json); a dry
    run writes nothing, so it takes no lock (and creates no lock file)."""
    if dry_run:
        yield
        return
    import filelock  # noqa: PLC0415 - install/uninstall only

    folder = str(target.path.parent.absolute())
    key = hashlib.sha256(folder.encode()).hexdigest()[:32]
    # in smllm's locks folder, which no sandboxed process can open (and so hold)
    lock = filelock.FileLock(paths.lock_path(f"install-{key}.lock"), timeout=LOCK_TIMEOUT)
    try:
        with lock:
            yield
    except filelock.Timeout:
        raise InstallError(f"another smllm install or uninstall is changing {folder}",
                           "wait for it to finish, then run this again") from None


# ------------------------------------------------------------------ records


def _record_path(path: Path) -> Path:
    key = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:32]
    return paths.state_dir() / "installs" / f"{key}.json"


def load_record(path: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads(_record_path(path).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("path") == str(path.absolute()) else None


def _save_record(path: Path, record: dict[str, Any]) -> None:
    rp = _record_path(path)
    paths.ensure_private_tree(rp.parent, paths.state_dir())
    settings.write_atomic(rp, json.dumps(record, ensure_ascii=False) + "\n", mode=0o600)


def _drop_record(path: Path) -> None:
    _record_path(path).unlink(missing_ok=True)


# ------------------------------------------------------------------ plans


def project_of(target: Target) -> Path:
    """The project a settings file belongs to (the cwd for the user's settings)."""
    return target.path.parent.parent if target.scope != "user" else Path.cwd()


def _sandboxed(target: Target, data: dict[str, Any], original: str | None,
               domains: list[str]) -> dict[str, Any]:
    """``data`` with smllm's sandbox block (setup/sandbox.py) merged into the user's own,
    and ``domains`` (``--allow-domain``) added to the hosts its commands may reach."""
    before = _original_sandbox(original)
    ours = sandbox.block(project_of(target), available=not sandbox.missing_tools())
    return sandbox.with_domains(sandbox.with_block(data, ours, before), domains)


def _original_sandbox(original: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(original) if original and original.strip() else {}
    except ValueError:
        return None
    box = data.get("sandbox") if isinstance(data, dict) else None
    return box if isinstance(box, dict) else None


def plan_install(target: Target, python: str, flags: list[str], *, hooks: bool = True,
                 sandbox: bool = True, domains: list[str] | tuple[str, ...] = ()) -> Plan:
    """Install into ``target`` (raises ``ConfigError`` on a malformed file).

    ``sandbox``: also configure Claude Code's sandbox so that commands cannot write
    smllm's protected set (``--no-sandbox`` turns it off); ``hooks=False`` writes only
    the sandbox (``--sandbox-only``, for the plugin route, whose hooks come from the plugin).
    ``domains`` (``--allow-domain``): hosts the sandboxed commands may reach, kept in the
    install record so that a later install keeps them.

    Install writes no permission rules: Claude Code ignores a project's (and a tracked
    local file's) ``permissions.allow`` until the folder is trusted and says so on every
    ``claude -p``, and smllm's PreToolUse hook allows its own firing anyway
    (:mod:`smllm.setup.firing`). Rules an earlier install added are removed.
    """
    current = settings.read(target.path)
    want = desired(python, flags)
    have = owned(current.data)
    record = load_record(target.path)
    companion = plan_mcp_install(target, python, flags) if hooks else None
    exe = executable_plan(python, flags) if hooks else None
    allowed = list(dict.fromkeys([*(record.get("domains") or [] if record else []), *domains]))
    data: dict[str, Any] = dict(current.data)
    added: dict[str, Any] = {"allow": [], "enabledMcpjsonServers": False}
    if hooks:
        data, added = firing.add(with_ours(current.data, python, flags), target.scope,
                                 target.project)
    if have or record is not None:  # the rules an earlier install added
        data, _ = firing.remove(data, record.get("added") if record else None,
                                servers=False)
    if sandbox:
        data = _sandboxed(target, data, record.get("original") if record else current.text,
                          allowed)
    after = current.layout.dump(data)
    summary = install_summary(target, python, flags, hooks=hooks, sandbox=sandbox,
                              data=data, mcp=companion)
    if (after == current.text or data == current.data) and (
            companion is None or not companion.changed):
        head = f"smllm is already installed in {target.path} (no change)"
        if exe is not None:
            return Plan("install", target, current.text, current.text,
                        f"{head}; wrote the hook executable {exe[0]}", executable=exe)
        return Plan("install", target, current.text, current.text, head)
    # the first install saves the original; an update keeps the record it finds
    if not (have or (record is not None and "sandbox" in current.data)):
        record = None
    if record is None:
        record = {"path": str(target.path.absolute()), "original": current.text,
                  "created_dir": not target.path.parent.exists()}
    record["added"] = _merged(record.get("added"), added)
    if allowed:
        record["domains"] = allowed
    verb = "updated" if have else "installed"
    if hooks and owned(data) != have:
        first = f"{verb} smllm's hooks for {len(want)} events in {target.path}"
    else:
        first = f"{verb} smllm's sandbox in {target.path}"
    return Plan("install", target, current.text, after, "\n".join([first, *summary]), record,
                companion if companion is not None and companion.changed else None, exe)


def install_summary(target: Target, python: str, flags: list[str], *, hooks: bool,
                    sandbox: bool, data: dict[str, Any], mcp: Plan | None) -> list[str]:
    """What an install of ``target`` sets up, in plain words (install prints it; doctor
    shows the same from the files)."""
    lines = []
    if hooks:
        lines += [f"  hooks: each of the {len(EVENTS)} events runs "
                  f"{hook_command('EVENT', python, flags)}",
                  f"  permission rules: none; {firing.OWN_FIRE}"]
        if mcp is not None and mcp.action == "install":
            lines.append(f"  MCP server {firing.MCP_SERVER}: in {mcp.target.path}, its tool "
                         f"{firing.MCP_TOOL} fires state-machine events")
        elif mcp is not None and mcp.changed:
            lines.append(f"  {mcp.summary} (no state machine here uses it)")
    if sandbox:
        lines += sandbox_summary(data)
    return lines


def sandbox_summary(data: dict[str, Any]) -> list[str]:
    """The sandbox and its network rule, in plain words, from the settings ``data``."""
    box = data.get("sandbox") if isinstance(data.get("sandbox"), dict) else None
    if not box or not box.get("enabled"):
        return ["  sandbox: off (--no-sandbox): nothing but the gate keeps the agent's "
                "commands from changing smllm's policy, hooks or journal"]
    lacking = sandbox.missing_tools()
    if lacking:
        text = (f"  sandbox: configured, but it cannot run here ({', '.join(lacking)} "
                f"missing): the trust boundary is advisory until you install it "
                f"(apt-get install -y {' '.join(lacking)})")
    else:
        text = ("  sandbox: on; the agent's Bash commands cannot write smllm's policy, hooks "
                "or journal, nor read your credential stores (--no-sandbox to opt out)")
    return [text, f"  {sandbox.network_text(box)}"]


def _merged(old: Any, new: dict[str, Any]) -> dict[str, Any]:
    """What install added over several runs (an update adds to the first run's record);
    install adds no allow rule any more, and removes those an earlier one added."""
    old = old if isinstance(old, dict) else {}
    return {"allow": [], "enabledMcpjsonServers": bool(old.get("enabledMcpjsonServers")
                                                       or new["enabledMcpjsonServers"])}


def is_ours(box: Any) -> bool:
    """A ``sandbox`` object smllm wrote: it protects smllm's own data folder."""
    fs = box.get("filesystem") if isinstance(box, dict) else None
    deny = fs.get("denyWrite") if isinstance(fs, dict) else None
    return isinstance(deny, list) and "/" + os.path.abspath(paths.data_root()) in deny


def plan_uninstall(target: Target) -> Plan:
    """Remove our entries from ``target``, restoring the original bytes when nothing else
    changed."""
    current = settings.read(target.path)
    remaining, removed = strip(current.data)
    record = load_record(target.path)
    remaining, rules = firing.remove(remaining, record.get("added") if record else None)
    companion = plan_mcp_uninstall(target)
    original = record.get("original") if record else None
    if "sandbox" in remaining and (record is not None or is_ours(remaining["sandbox"])):
        before = _original_sandbox(original)  # ours: put back the user's own
        remaining = {k: v for k, v in remaining.items() if k != "sandbox"}
        if before is not None:
            remaining["sandbox"] = before
        removed = removed or 1
    if not removed and not rules and companion is None:
        return Plan("uninstall", target, current.text, current.text,
                    f"smllm is not installed in {target.path} (no change)")
    after: str | None
    if record is not None and _same_data(original, remaining):
        after = original
        how = "restored byte for byte"
    else:
        after = current.layout.dump(remaining)
        how = "other content kept"
    lines = [f"removed smllm's hooks ({removed}) from {target.path}; {how}"]
    if companion is not None:
        lines.append(companion.summary)
    return Plan("uninstall", target, current.text, after, "\n".join(lines), record, companion)


# ------------------------------------------------------------------ the MCP server


def _mcp_file(target: Target) -> settings.SettingsFile:
    path = target.project / firing.MCP_FILE
    current = settings.read(path)
    servers = current.data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise InstallError("\"mcpServers\" must be an object of servers",
                           "fix it by hand; Claude Code ignores a malformed .mcp.json",
                           where=f"{path}:1")
    return current


def plan_mcp_install(target: Target, python: str, flags: list[str]) -> Plan | None:
    """Register the MCP server in the project's ``.mcp.json`` (project scope, a project
    that uses state machines: :func:`smllm.setup.firing.registers_mcp`); in a project
    without machines, remove the one an earlier install registered there."""
    if not firing.registers_mcp(target.scope, target.project):
        return plan_mcp_uninstall(target) if target.scope == "project" else None
    current = _mcp_file(target)
    path = current.path
    mcp = Target(target.scope, path)
    entry = firing.mcp_entry(python, flags)
    existing = (current.data.get("mcpServers") or {}).get(firing.MCP_SERVER)
    if existing == entry:
        return Plan("install", mcp, current.text, current.text,
                    f"the MCP server {firing.MCP_SERVER} is already in {path} (no change)")
    if existing is not None and not firing.is_ours(existing):
        raise InstallError(
            f"{path} already has an MCP server named {firing.MCP_SERVER!r} that smllm install "
            "did not write", "rename or remove that server, then run smllm install again")
    record = load_record(path) if existing is not None else None
    if record is None:
        record = {"path": str(path.absolute()), "original": current.text, "created_dir": False}
    after = current.layout.dump(firing.with_server(current.data, entry))
    return Plan("install", mcp, current.text, after,
                f"registered the MCP server {firing.MCP_SERVER} in {path}", record)


def plan_mcp_uninstall(target: Target) -> Plan | None:
    """Remove our MCP server from the project's ``.mcp.json``, if it is there."""
    if target.scope == "user":
        return None
    current = _mcp_file(target)
    if not firing.is_ours((current.data.get("mcpServers") or {}).get(firing.MCP_SERVER)):
        return None
    path = current.path
    remaining = firing.without_server(current.data)
    record = load_record(path)
    original = record.get("original") if record else None
    after: str | None
    if record is not None and _same_data(original, remaining):
        after, how = original, "restored byte for byte"
        if original is None:
            how = "removed the file install created"
    else:
        after, how = current.layout.dump(remaining), "other content kept"
    return Plan("uninstall", Target(target.scope, path), current.text, after,
                f"removed the MCP server {firing.MCP_SERVER} from {path}; {how}", record)


def _pruned(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without the empty containers removing our entries may or may not leave
    behind, depending on what was there before: event lists, ``hooks``, ``allow``,
    ``permissions``, ``enabledMcpjsonServers``, ``mcpServers``."""
    out = dict(data)
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        out["hooks"] = {e: g for e, g in hooks.items() if g != []}
    permissions = out.get("permissions")
    if isinstance(permissions, dict):
        out["permissions"] = {k: v for k, v in permissions.items()
                              if not (k == "allow" and v == [])}
    return {k: v for k, v in out.items()
            if not (k in ("hooks", "permissions", "enabledMcpjsonServers", "mcpServers")
                    and not v)}


def _same_data(original: Any, data: dict[str, Any]) -> bool:
    """Is what is left after removing our hooks the original (nobody changed anything)?"""
    if original is None or not str(original).strip():
        return _pruned(data) == {}
    try:
        before = json.loads(original)
    except ValueError:
        return False
    return isinstance(before, dict) and _pruned(before) == _pruned(data)


def diff(plan: Plan) -> str:
    """A unified diff of the planned change (and of its companion's)."""
    text = ""
    for p in plan.plans:
        name = str(p.target.path)
        before = (p.before or "").splitlines(keepends=True)
        lines = difflib.unified_diff(
            before, (p.after or "").splitlines(keepends=True),
            fromfile=name if p.before is not None else "/dev/null",
            tofile=name if p.after is not None else "/dev/null")
        text += "".join(line if line.endswith("\n")
                        else line + "\n\\ No newline at end of file\n" for line in lines)
    return text


def apply(plan: Plan) -> None:
    """Carry out a plan (and its companion's): atomic writes, only of bytes that change,
    and the records; then what the protected set and the tripwire learn from it. An install
    also creates the folders of smllm's that the sandbox hides
    (:func:`smllm.base.protected.hidden_folders`), so that they are hidden from the first
    sandboxed command on."""
    for p in plan.plans:
        _apply_one(p)
    if plan.action == "install":
        for folder in protected.hidden_folders():
            root = paths.state_root() if folder.startswith(paths.state_root()) \
                else paths.data_root()
            paths.ensure_private_tree(folder, root)
    protect(plan)


def record_command() -> str | None:
    """Record the ``smllm`` command the installer linked in the user's bin folder (the
    folder installer/install.sh chose, from the same variables), if one is there: the
    protected set (and so the sandbox settings planned next) knows it without PATH."""
    from smllm.setup import onpath  # noqa: PLC0415 - install only

    link = onpath.bin_dir() / "smllm"
    if not (link.is_symlink() or link.is_file()):
        return None
    protected.record_command(str(link))
    return str(link)


def protect(plan: Plan) -> None:
    """After an install: arm the tripwire with the files as they now are (smllm's own
    change, made by a person); after an uninstall: stop watching the project."""
    protect_for("claude", plan.action, plan.target.scope, project_of(plan.target))


def protect_for(host: str, action: str, scope: str, project: Path) -> None:
    """:func:`protect` for ``host``'s install or uninstall (``scope`` ``project`` or
    ``user``; ``project`` the folder, the cwd for the user's): arm the tripwire, ``host``'s
    own files among the watched ones; after a project's uninstall, stop watching them (and
    the project once no host is installed there)."""
    from smllm.tripwire import keeper  # noqa: PLC0415 - install and uninstall only

    if action == "install":
        keeper.arm(str(project), host)
    elif scope == "project":
        keeper.disarm(str(project), host)


def _apply_one(plan: Plan) -> None:
    if plan.executable is not None:
        write_executable(*plan.executable)
    if plan.before == plan.after:
        return
    path = plan.target.path
    if plan.action == "install":
        if plan.record is not None:
            _save_record(path, plan.record)
        settings.write_atomic(path, plan.after or "")
        return
    if plan.after is None:
        path.unlink(missing_ok=True)
        if plan.record and plan.record.get("created_dir"):
            with contextlib.suppress(OSError):  # not empty: something else lives there
                path.parent.rmdir()
    else:
        settings.write_atomic(path, plan.after)
    _drop_record(path)
