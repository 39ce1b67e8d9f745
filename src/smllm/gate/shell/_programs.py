"""The table of programs: which family module judges each program, and which are read-only.

The analyser's core (:mod:`._analyse`) finds a program's handler here, each program
named once: :data:`FAMILIES` maps a family module's functions to the programs they
judge, and the program table (:mod:`._tabledata`, judged by :mod:`._table`) names its
own. A family module is imported the first time a command needs it, the program table
the first time a program is found in no family, so a hook that sees ``git status``
loads the git family and nothing else. ``tests/test_shell_table.py`` checks both.
"""

from __future__ import annotations

import sys

from smllm.gate.shell._model import strip_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from smllm.gate.shell._model import Context, Finding
    from smllm.gate.shell._parse import Simple, Word

    Result = tuple[list[Finding], bool]
    Handler = Callable[[str, list[Word], Simple, Context], Result]

#: family module (under ``smllm.gate.shell``) -> {its function: the programs it judges}
#: (the programs of the program table, :mod:`._tabledata`, are not listed here: see
#: :func:`family_of`)
FAMILIES: dict[str, dict[str, tuple[str, ...]]] = {
    "_launchers": {
        "command_builtin": ("command",),
        "env": ("env",),
        "launcher": (
            "asdf", "at", "aws-vault", "batch", "builtin", "bundle", "busybox", "bwrap", "cabal",
            "caffeinate", "capsh", "catchsegv", "ccache", "chpst", "chronic", "chroot", "chrt",
            "concurrently", "conda", "cpulimit", "daemonize", "dbus-launch", "dbus-run-session",
            "devbox", "direnv", "distcc", "doas", "doppler", "dotenv", "dotenvx", "dumb-init",
            "eatmydata", "entr", "exec", "expect", "fakechroot", "fakeroot", "faketime",
            "firejail", "flock", "gnome-terminal", "goenv", "gosu", "gtimeout", "hyperfine",
            "ifne", "infisical", "ionice", "lldb", "ltrace", "mamba", "micromamba", "mise", "nice",
            "nix", "nix-shell", "nocache", "nodemon", "nodenv", "nohup", "nsenter", "numactl",
            "nvm", "op", "opam", "perf", "pkexec", "prlimit", "proot", "proxychains",
            "proxychains4", "pv", "pyenv", "rbenv", "rtk", "rtx", "run0", "runuser", "sccache",
            "screen", "script", "setarch", "setpriv", "setsid", "sg", "ssh-agent", "sshpass",
            "stack", "stdbuf", "strace", "su-exec", "sudo", "systemd-cat", "systemd-inhibit",
            "systemd-run", "taskset", "then", "time", "timeout", "tini", "tmux", "torify",
            "torsocks", "trickle", "tsocks", "unbuffer", "unshare", "valgrind", "watchexec",
            "with-contenv", "xterm", "xvfb-run",
        ),
    },
    "_shells": {
        "alias": ("alias",),
        "cd": ("cd", "pushd"),
        "eval_": ("eval",),
        "export": ("declare", "export", "local", "readonly", "typeset"),
        "hash_": ("hash",),
        "shell": (
            "ash", "bash", "csh", "dash", "fish", "ksh", "mksh", "posh", "rbash", "sh", "tcsh",
            "yash", "zsh",
        ),
        "source": (".", "source"),
        "su": ("su",),
        "trap": ("trap",),
        "watch": ("watch",),
    },
    "_feeders": {
        "fd": ("fd", "fdfind"),
        "find": ("find",),
        "parallel": ("parallel",),
        "xargs": ("xargs",),
    },
    "_fs": {
        "chmod": ("chattr", "chgrp", "chmod", "chown", "setfacl"),
        "dd": ("dd",),
        "disk_destroy": (
            "blkdiscard", "cfdisk", "cryptsetup", "diskutil", "fdisk", "format", "gdisk", "hdparm",
            "lvremove", "mdadm", "mkfs", "parted", "pvremove", "sfdisk", "sgdisk", "vgremove",
            "zpool",
        ),
        "ln": ("ln",),
        "make_path": ("mkdir", "touch"),
        "mv": ("cp", "install", "mv"),
        "patch": ("patch",),
        "rclone": ("rclone",),
        "rm": ("rm", "rmdir", "unlink"),
        "rsync": ("rsync",),
        "shred": ("shred", "srm"),
        "tar": ("tar",),
        "tee": ("tee",),
        "truncate": ("truncate",),
        "unzip": ("unzip",),
        "zip_": ("zip",),
    },
    "_git": {
        "git": ("git",),
    },
    "_code": {
        "awk": ("awk", "busybox-awk", "gawk", "mawk", "nawk"),
        "editor": ("emacs", "ex", "gvim", "nano", "nvim", "vi", "view", "vim"),
        "interpreter": ("python",),
        "sed": ("gsed", "sed"),
    },
    "_system": {
        "crontab": ("crontab",),
        "kill": ("kill",),
        "pkill": ("killall", "killall5", "pkill"),
    },
    "_data": {
        "client": (
            "clickhouse-client", "cockroach", "cqlsh", "duckdb", "mariadb", "mongo", "mongosh",
            "mysql", "psql", "sqlcmd", "sqlite3",
        ),
    },
    "_net": {
        "curl": ("curl",),
        "httpie": ("http", "https", "xh"),
        "lftp": ("lftp",),
        "mail": ("mail", "mailx", "msmtp", "mutt", "sendmail"),
        "netcat": ("nc", "ncat", "netcat", "telnet"),
        "openssl": ("openssl",),
        "scp": ("scp", "sftp"),
        "socat": ("socat",),
        "ssh": ("ssh",),
        "wget": ("wget",),
    },
    "_packages": {
        "build_tool": ("gradle", "gradlew", "mvn", "mvnw"),
        "cargo": ("cargo",),
        "composer": ("composer",),
        "dotnet": ("dotnet",),
        "editor_publish": ("ovsx", "vsce"),
        "gem": ("gem",),
        "go": ("go",),
        "npm": ("bun", "npm", "npx", "pnpm", "yarn"),
        "pip": ("pip",),
        "pipx": ("pipx",),
        "python_project": ("flit", "hatch", "pdm", "pipenv", "poetry", "rye", "twine"),
        "system_packages": ("apt", "apt-get", "brew", "dnf", "dpkg", "snap", "yum", "zypper"),
        "uv": ("uv", "uvx"),
    },
    "_runners": {
        "code_runner": ("grunt", "gulp", "inv", "invoke", "nox", "rake"),
        "just": ("just",),
        "make": ("gmake", "make"),
        "poe": ("poe",),
        "task": ("go-task", "task"),
        "tox": ("tox",),
    },
    "_runoptions": {
        "tool": ("gdb", "less", "man", "pandoc", "sort", "tcpdump"),
    },
}

# programs judged by a name pattern rather than by a name
_VERSIONED_INTERPRETERS = frozenset({"python", "pypy", "ruby", "perl", "php", "lua", "luajit"})
_INTERPRETERS = frozenset({"node", "nodejs", "deno", "rscript", "tclsh", "osascript",
                           "pwsh", "powershell"})
_DISK_PREFIXES = ("mkfs", "mke2fs", "mkswap", "wipefs", "mkdosfs")

#: programs without a handler that only read (they print, search, compare, describe)
READ_ONLY = frozenset({
    "ls", "cat", "head", "tail", "wc", "echo", "printf", "pwd", "grep", "egrep", "fgrep", "rg",
    "ag", "which", "type", "whereis", "man", "hash", "help", "true", "false", "test", "[",
    "date", "whoami", "id", "uname", "stat", "file", "du", "df", "diff", "cmp", "sort", "uniq",
    "cut", "tr", "less", "more", "tree", "realpath", "dirname", "basename", "readlink", "jq",
    "yq", "column", "nl", "od", "hexdump", "xxd", "sha256sum", "md5sum", "sha1sum", "cksum",
    "seq", "sleep", "tac", "fold", "fmt", "expand", "comm", "join", "paste", "printenv",
    "locale", "hostname", "uptime", "ps", "pgrep", "lsof", "free", "nproc", "getconf", "base64",
    ":", "exit", "return", "cd", "pushd", "popd", "set", "export", "unset", "local", "declare",
    "read", "shift", "wait", "jobs",
})

#: file utilities whose every effect on disk the analysis records with its path (a
#: ``write``, ``delete`` or ``move``): a call of one that changes only files in the
#: workspace or the temp folders is confined there (``approve = "known-safe"``). Not
#: ``tar`` (an archive's entries choose where they land), ``ln`` (a link leads elsewhere)
#: or anything that runs code.
CONFINED = frozenset({"mkdir", "touch", "cp", "mv", "rm", "rmdir", "unlink", "tee"})

#: the words that, as a program's only argument, make it print its help or version and stop
HELP_FORMS = frozenset({"--help", "--version", "-h"})
#: programs for which that is not so: option parsers that read ``--version`` as the short
#: options ``-v -e -r -s ...`` (``crontab --version`` removes the crontab, ``halt -h``
#: halts), builtins whose operand is code or a file, shells and launchers reading stdin
NOT_HELP = frozenset({
    "crontab", "at", "batch", "halt", "poweroff", "reboot", "shutdown", "telinit", "init",
    "killall5", "killall", "kill", "pkill", ".", "source", "eval", "exec", "command",
    "builtin", "time", "then", "trap", "alias", "screen", "tmux",
})
#: programs of another system that the table knows because agents type them (Windows'
#: ``format``, macOS' ``diskutil``): where none is installed, the word cannot act
FOREIGN = frozenset({"format", "diskutil"})

#: programs that are shells: ``-c`` runs a string, an operand a script, stdin code
SHELLS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "ash",
        "fish",
        "tcsh",
        "csh",
        "yash",
        "posh",
        "rbash",
    }
)

#: program -> (family module, function)
_WHERE: dict[str, tuple[str, str]] = {
    name: where
    for family, functions in FAMILIES.items()
    for function, names in functions.items()
    for where in ((family, function),)  # one tuple per function, not one per program
    for name in names
}
_TABLE: frozenset[str] | None = None  # the program table's names, read on first need


def table_names() -> frozenset[str]:
    """The programs of the program table (:mod:`._tabledata`), loaded on first use."""
    global _TABLE  # noqa: PLW0603 - a cache
    if _TABLE is None:
        from smllm.gate.shell._tabledata import PROGRAMS  # noqa: PLC0415 - on first need: a hook whose commands all have families never loads the table

        _TABLE = frozenset(name for p in PROGRAMS for name in p["names"])
    return _TABLE


def family_of(name: str) -> tuple[str, str] | None:
    """(module, function) of the handler of ``name``, a lowercase program name."""
    found = _WHERE.get(name)
    if found is None and name not in READ_ONLY:
        found = _by_pattern(name)
        if found is None and name in table_names():
            found = ("_table", "judge")
    return found


def _by_pattern(name: str) -> tuple[str, str] | None:
    """The handler of a program judged by a name pattern."""
    # python3.11, pypy3, node18, ruby2.7, ...: an interpreter whose code is scanned
    if name in _INTERPRETERS or strip_version(name) in _VERSIONED_INTERPRETERS:
        return _WHERE["python"]
    if name.startswith(_DISK_PREFIXES):  # mkfs.ext4, mke2fs, wipefs, ...
        return _WHERE["mkfs"]
    if strip_version(name) == "pip":  # pip3, pip3.12
        return _WHERE["pip"]
    return None


def lookup(name: str) -> Handler | None:
    """The handler of ``name``, its module imported on first use."""
    found = family_of(name)
    if found is None:
        return None
    family, function = found
    module = sys.modules.get(f"smllm.gate.shell.{family}")
    if module is None:
        # by name, on first use: a hook pays only for the families its command needs
        __import__(f"smllm.gate.shell.{family}")
        module = sys.modules[f"smllm.gate.shell.{family}"]
    handler: Handler = getattr(module, function)
    return handler
