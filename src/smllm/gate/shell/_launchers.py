"""Programs that run other programs, as data: a launcher's options are skipped and the
program it runs is judged in its place.

A program is a launcher only when this table knows it (``sudo``, ``timeout``, ``flock``,
``unshare``, ``uv run``, ``doppler run --``, ``tmux new-session``, …); an unknown
program's arguments are data. Each entry says which options take a value (skipped
with it), how many operands come before the command (``timeout 5``, ``flock FILE``),
the subcommand that launches (``poetry run``), the options whose value is a shell
command line (``flock -c``, ``script -qc``, ``nix-shell --run``: analysed as shell),
whether every operand is a command line (``hyperfine``, ``concurrently``), whether it
changes privileges, and whether it schedules the command to run later.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import (
    environment,
    judge_argv,
    nested,
    run_script_file,
    stdin_text,
)
from smllm.gate.shell._flags import Options, item, read, subcommand
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word, is_assignment, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]


class Launcher:
    """How one launcher reads its command line (see the module's docstring)."""

    __slots__ = ("after", "later", "options", "privileged", "skip", "string", "strings",
                 "sub", "with_arg")

    def __init__(  # noqa: PLR0917 - a table row
        self, with_arg: str = "", skip: int = 0, sub: str = "", string: str = "",
        strings: bool = False, privileged: bool = False, later: bool = False,
        after: str = "",
    ) -> None:
        self.with_arg = frozenset(with_arg.split())
        self.skip = skip
        self.sub = frozenset(sub.split())
        self.string = frozenset(string.split())
        self.strings = strings
        self.privileged = privileged
        self.later = later
        self.after = after  # the command starts after this word (gdb --args, xterm -e)
        #: its own options as the argv reader reads them (getopt: ``-qc CMD`` is ``-c CMD``)
        self.options = Options(self.with_arg | self.string, clusters=True)


L = Launcher
_SUDO = ("-u -g -C -D -h -p -r -t -T -U --user --group --chdir --prompt --role --type "
         "--host --close-from --other-user")
LAUNCHERS: dict[str, Launcher] = {
    # privilege changes
    "sudo": L(_SUDO, privileged=True),
    "doas": L("-u -C", privileged=True),
    "pkexec": L("--user", privileged=True),
    "run0": L("-u --user -g --group --chdir -D --description --slice --property",
              privileged=True),
    "runuser": L("-u -g -G --user --group --supp-group", privileged=True),
    "sg": L("", skip=1, string="-c", privileged=True),
    "gosu": L("", skip=1, privileged=True),
    "su-exec": L("", skip=1, privileged=True),
    "setpriv": L("--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps "
                 "--ambient-caps --bounding-set --securebits --pdeathsig --selinux-label "
                 "--apparmor-profile --landlock-access --landlock-rule", privileged=True),
    "chpst": L("-u -U -b -e -/ -n -l -L -m -d -o -p -f -c -r -t"),
    "chroot": L("--userspec --groups", skip=1, privileged=True),
    "nsenter": L("-t --target -S --setuid -G --setgid -r --root -w --wd --env",
                 privileged=True),
    "unshare": L("-S --setuid -G --setgid -R --root -w --wd --map-user --map-group "
                 "--map-users --map-groups --propagation --setgroups"),
    "capsh": L("", after="--"),
    # sandboxes and process wrappers
    "firejail": L(""),
    "bwrap": L("--chdir --tmpfs --dev --proc --dir --remount-ro --unsetenv --uid --gid "
               "--hostname --lock-file --sync-fd --info-fd --seccomp --exec-label "
               "--file-label --args --cap-add --cap-drop --userns --userns2 --pidns --perms "
               "--size --chmod --block-fd --userns-block-fd --json-status-fd --argv0"),
    "systemd-run": L("-u --unit -p --property --description --slice --setenv -E --uid "
                     "--gid --nice -M --machine -H --host --working-directory -D "
                     "--on-active --on-boot --on-startup --on-unit-active --on-unit-inactive "
                     "--on-calendar --on-clock-change --on-timezone-change "
                     "--timer-property --path-property --socket-property --service-type "
                     "--expand-environment"),
    "systemd-inhibit": L("--what --who --why --mode"),
    "systemd-cat": L("-t --identifier -p --priority --stderr-priority --level-prefix"),
    "dbus-run-session": L("--config-file --dbus-daemon"),
    "dbus-launch": L("--config-file"),
    "flock": L("-w --timeout -E --conflict-exit-code", skip=1, string="-c --command"),
    "script": L("-O --log-out -I --log-in -B --log-io -T --log-timing -m --logging-format "
                "-E --echo -t --timing", string="-c --command"),
    "nohup": L(""),
    "setsid": L(""),
    "time": L("-o -f --format --output"),
    "nice": L("-n --adjustment"),
    "ionice": L("-c -n -p -P -u --class --classdata"),
    "chrt": L("", skip=1),
    "taskset": L("-c", skip=1),
    "numactl": L("-C -N -m -p -i -P --physcpubind --cpunodebind --membind --preferred "
                 "--interleave"),
    "prlimit": L("-p --pid -o --output"),
    "cpulimit": L("-l --limit -p --pid -e --exe"),
    "timeout": L("-s --signal -k --kill-after", skip=1),
    "gtimeout": L("-s --signal -k --kill-after", skip=1),
    "stdbuf": L("-i -o -e --input --output --error"),
    "unbuffer": L(""),
    "caffeinate": L("-t -w"),
    "xvfb-run": L("-n -s -f -e -p --server-num --server-args --auth-file --error-file"),
    "strace": L("-o -e -p -s -u -E -a -b -I -O -P -S -X"),
    "ltrace": L("-o -e -p -s -u -a -n -A -D -F -l -x"),
    "valgrind": L(""),
    "eatmydata": L(""),
    "fakeroot": L("-l -s -i -b --lib --faked"),
    "fakechroot": L("-l -d -e --lib --use-system-libs --environment --config-dir"),
    "proot": L("-r -b -m -w -q -k --rootfs --bind --mount --pwd --cwd --qemu --kernel-release"),
    "faketime": L("", skip=1),
    "setarch": L("", skip=1),
    "torsocks": L("-u -p -a -P"),
    "torify": L(""),
    "tsocks": L(""),
    "proxychains": L("-f"),
    "proxychains4": L("-f"),
    "trickle": L("-u -d -w -t -l -n"),
    "nocache": L(""),
    "chronic": L(""),
    "ifne": L(""),
    "catchsegv": L(""),
    "pv": L(""),
    "rtk": L(""),
    "busybox": L(""),
    "builtin": L(""),
    "then": L(""),
    "exec": L("-a"),
    "ccache": L(""),
    "sccache": L(""),
    "distcc": L(""),
    "ssh-agent": L("-a -E -t -P"),
    "sshpass": L("-p -f -d -P"),
    "daemonize": L("-a -c -e -o -p -l -u -E"),
    "tini": L("-p -e"),
    "dumb-init": L("-r --rewrite"),
    "with-contenv": L(""),
    "lldb": L("", after="--"),
    "xterm": L("", after="-e"),
    "gnome-terminal": L("", after="--"),
    "entr": L("", string="-s"),
    "expect": L("", string="-c"),
    # strings are command lines
    "hyperfine": L("-w --warmup -r --runs -m --min-runs -M --max-runs -n --command-name "
                   "-u --time-unit -N -S --shell --export-json --export-csv "
                   "--export-markdown --export-asciidoc --style",
                   string="-p --prepare -c --cleanup -s --setup --conclude", strings=True),
    "concurrently": L("-n --names -c --prefix-colors -p --prefix -l --prefix-length "
                      "-t --timestamp-format -k --success --restart-tries --restart-after "
                      "--max-processes -m --name-separator --handle-input", strings=True),
    "nodemon": L("-w --watch -e --ext -i --ignore -d --delay -V --signal --config",
                 string="-x --exec"),
    "watchexec": L("-w --watch -e --exts -f --filter -i --ignore -d --debounce "
                   "--shell -s --signal --stop-signal --stop-timeout -W --watch-non-recursive"
                   " --project-origin --workdir -E --env"),
    "tmux": L("-L -S -f -T -c -e -F -n -s -t -x -y -l",
              sub="new-session new new-window neww split-window splitw respawn-pane respawnp "
                  "respawn-window respawnw run-shell run send-keys send",
              strings=True),
    "screen": L("-S -c -t -p -e -h -T"),
    # schedulers: the command runs later
    "at": L("-q -t -f -M -m", later=True),
    "batch": L("-q -f -m", later=True),
    # environment and version managers, secret injectors, package runners
    "direnv": L("", sub="exec", skip=1),
    "mise": L("-C --cd -E --env -j --jobs", sub="exec x"),
    "rtx": L("", sub="exec x"),
    "asdf": L("", sub="exec"),
    "rbenv": L("", sub="exec"),
    "pyenv": L("", sub="exec"),
    "nodenv": L("", sub="exec"),
    "goenv": L("", sub="exec"),
    "nvm": L("", sub="exec", skip=1),
    "conda": L("-n --name -p --prefix --cwd", sub="run"),
    "mamba": L("-n --name -p --prefix --cwd", sub="run"),
    "micromamba": L("-n --name -p --prefix --cwd", sub="run"),
    "bundle": L("--gemfile", sub="exec"),
    "opam": L("--switch", sub="exec"),
    "stack": L("--stack-yaml --resolver", sub="exec"),
    "cabal": L("", sub="exec"),
    "nix-shell": L("-I -A --attr --arg --argstr -j --max-jobs", string="--run --command"),
    "nix": L("-I --arg --argstr --profile", sub="develop shell", string="-c --command"),
    "devbox": L("-c --config", sub="run"),
    "dotenv": L("-e -v -c -p"),
    "dotenvx": L("-f --env-file -e --env -o --overload", sub="run"),
    "doppler": L("-p --project -c --config --token --mount --mount-format", sub="run",
                 string="--command"),
    "infisical": L("--env --projectId --token --path --domain", sub="run", string="--command"),
    "op": L("--env-file --account", sub="run"),
    "aws-vault": L("-d --duration --region --mfa-token", sub="exec", skip=1),
    "perf": L("-e --event -o --output -p --pid -t --tid -C --cpu -F --freq -c --count -G",
              sub="stat record trace"),
}


def launcher(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    spec = LAUNCHERS[name]
    out: list[Finding] = []
    if spec.privileged:
        out.append(Finding("sys.privileged", "ask", f"runs with elevated privileges ({name})"))
    if spec.later:
        out.append(Finding("sys.persistence", "ask", f"{name} schedules commands to run later"))
    start = _launched_from(spec, [a.value or "" for a in args])
    if start is None:
        return out, False  # not the launching subcommand: its arguments are data
    strings: list[Word | None] = []
    i = len(args)
    for arg in read([a.value for a in args], spec.options, start):
        if arg.name == "":
            i = arg.at
        elif arg.name in spec.string:
            strings.append(arg.word(args))
        elif name == "systemd-run" and arg.name.startswith("--on-"):
            out.append(Finding("sys.persistence", "ask", "systemd-run starts a timer"))
    rest = _command_words(spec, args[i:][spec.skip:], strings)
    found, safe = _run_strings(name, strings, ctx)
    out += found
    if name in ("at", "batch"):
        return out + _scheduled(name, args, cmd, ctx), False
    if not rest:
        return out, safe and not out and not strings
    sub_found, sub_safe = judge_argv(rest, cmd, ctx)
    return out + sub_found, sub_safe and not out and not strings


def _launched_from(spec: Launcher, values: list[str]) -> int | None:
    """Where the launcher's own options start: after its launching subcommand
    (``poetry run``) or its ``after`` word (``xterm -e``); None when it launches nothing."""
    i = 0
    if spec.sub:
        i = subcommand(values, spec.with_arg)
        if i >= len(values) or values[i] not in spec.sub:
            return None
        i += 1
    if spec.after:
        if spec.after not in values[i:]:
            return None
        i = values.index(spec.after, i) + 1
    return i


def _command_words(spec: Launcher, rest: list[Word], strings: list[Word | None]) -> list[Word]:
    """The command the launcher runs, from the words after its options and operands;
    command-line strings among them go to ``strings``."""
    if rest and rest[0].value == "--":
        rest = rest[1:]
    if rest and rest[0].value in spec.string and not spec.strings:  # flock FILE -c CMD
        strings.append(rest[1] if len(rest) > 1 else None)
        return []
    if spec.strings:
        strings += rest
        return []
    return rest


def _run_strings(name: str, strings: list[Word | None], ctx: Context) -> Result:
    out: list[Finding] = []
    for w in strings:
        if w is None or w.value is None:
            out.append(Finding("shell.dynamic-command", "ask",
                               f"{name} runs a command line only known at run time"))
        elif w.value.strip():
            out += nested(w.value, ctx, name)
    return out, not out


def _scheduled(name: str, args: list[Word], cmd: Simple, ctx: Context) -> list[Finding]:
    """``at``/``batch`` read the commands from stdin or ``-f FILE``."""
    values = [a.value for a in args]
    if "-f" in values:
        from_file = args[values.index("-f") + 1] if values.index("-f") + 1 < len(args) else None
        return run_script_file(name, from_file, ctx) if from_file else []
    text, source = stdin_text(cmd)
    if text is not None:
        return nested(text, ctx, f"{name} reading {source}")
    return [Finding("shell.stdin-script", "ask", f"{name} runs commands read from {source}")]


def command_builtin(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    i = 0
    while i < len(args) and args[i].value in ("-p", "--"):
        i += 1
    if i < len(args) and args[i].value in ("-v", "-V"):
        return [], True
    return judge_argv(args[i:], cmd, ctx) if args[i:] else ([], True)


#: GNU env's options (``-`` is ``-i``; ``--chd`` abbreviates ``--chdir``), and what the
#: ones that change the command do: ``-C`` runs it in another folder, ``-S`` splits a
#: string into more arguments
_ENV = Options(("-u", "--unset", "-P", "-C", "--chdir", "-S", "--split-string"), clusters=True,
               dash=True, longs=("--ignore-environment", "--null", "--debug", "--block-signal",
                                 "--default-signal", "--ignore-signal", "--argv0",
                                 "--list-signal-handling", "--help", "--version"))
_ENV_ACTIONS = {"-C": "chdir", "--chdir": "chdir", "-S": "split", "--split-string": "split"}


def env(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value for a in args]
    run_ctx = ctx
    found: list[Finding] = []
    i = 0
    while i < len(args):
        arg = item(values, _ENV, i)
        action = _ENV_ACTIONS.get(arg.name)
        if arg.name == "--":
            i = arg.end
            break
        if arg.name == "" and not is_assignment(values[i] or ""):
            break
        if arg.name == "":
            key, value = (values[i] or "").split("=", 1)
            found += environment(key, value, ctx)
        elif action == "chdir":
            run_ctx = _chdir(ctx, arg.word(args) or Word("", ""))
        elif action == "split":
            sub, safe = _env_split(name, arg.word(args), args[arg.end:], cmd, ctx,
                                   run_ctx=run_ctx)
            return found + sub, safe and not found
        i = arg.end
    rest = args[i:]
    if not rest:
        return found, not found
    sub, safe = judge_argv(rest, cmd, run_ctx)
    return found + sub, safe and not found


def _env_split(name: str, string: Word | None, after: list[Word], cmd: Simple, ctx: Context, *,
               run_ctx: Context) -> Result:
    """``env -S STRING ARGS``: env again over STRING's words followed by ARGS."""
    text = "" if string is None else string.value
    if text is None:
        return [Finding("shell.dynamic-command", "ask", "env -S splits a run-time string")], False
    split = [w for c in parse(text, cwd=ctx.cwd or ctx.root, home=ctx.home).commands
             for w in c.words]
    return env(name, split + after, cmd, run_ctx)


def _chdir(ctx: Context, target: Word) -> Context:
    new = ctx.child()
    new.depth = ctx.depth
    new.cwd = ctx.resolve(target.value) if target.value is not None else None
    return new


HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {
    **dict.fromkeys(LAUNCHERS, launcher),
    "command": command_builtin,
    "env": env,
}
