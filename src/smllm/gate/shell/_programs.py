"""The table of programs: which family module judges each program, and which are read-only.

The analyser's core (:mod:`._analyse`) finds a program's handler here. Each family
module holds its handlers in a ``HANDLERS`` dict (program name -> handler) and is
imported the first time a command needs it, so a hook that sees ``git status`` loads
the git family and nothing else. ``tests/test_shell_table.py`` checks that this table
and every family's ``HANDLERS`` name the same programs.
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

#: family module (under ``smllm.gate.shell``) -> the programs it judges
FAMILIES: dict[str, tuple[str, ...]] = {
    "_launchers": (
        ".", "ash", "bash", "builtin", "busybox", "caffeinate", "catchsegv", "cd", "chronic",
        "chrt", "command", "csh", "dash", "doas", "env", "eval", "exec", "fish", "gtimeout",
        "ifne", "ionice", "ksh", "ltrace", "mksh", "nice", "nohup", "posh", "proxychains",
        "proxychains4", "pushd", "pv", "rbash", "rtk", "runuser", "setsid", "sg", "sh",
        "source", "stdbuf", "strace", "su", "sudo", "taskset", "tcsh", "then", "time",
        "timeout", "torsocks", "unbuffer", "watch", "xvfb-run", "yash", "zsh",
    ),
    "_feeders": ("find", "parallel", "xargs"),
    "_fs": (
        "blkdiscard", "cfdisk", "chattr", "chgrp", "chmod", "chown", "cp", "cryptsetup", "dd",
        "diskutil", "fdisk", "format", "gdisk", "hdparm", "install", "lvremove", "mdadm",
        "mkfs", "mv", "parted", "pvremove", "rclone", "rm", "rmdir", "rsync", "setfacl",
        "sfdisk", "sgdisk", "shred", "srm", "tar", "tee", "truncate", "unlink", "vgremove",
        "zip", "zpool",
    ),
    "_git": ("git",),
    "_code": (
        "awk", "busybox-awk", "emacs", "ex", "gawk", "gsed", "gvim", "mawk", "nano", "nawk",
        "nvim", "python", "sed", "vi", "view", "vim",
    ),
    "_system": (
        "aws", "az", "clickhouse-client", "cockroach", "crontab", "docker", "gcloud", "gsutil",
        "halt", "init", "kill", "kubectl", "mariadb", "mongo", "mongosh", "mysql", "oc",
        "podman", "poweroff", "psql", "reboot", "redis-cli", "service", "shutdown", "sqlcmd",
        "sqlite3", "ssh", "systemctl", "telinit", "terraform", "tofu",
    ),
}

# programs judged by a name pattern rather than by a name
_VERSIONED_INTERPRETERS = frozenset({"python", "pypy", "ruby", "perl", "php", "lua", "luajit"})
_INTERPRETERS = frozenset({"node", "nodejs", "deno", "bun", "rscript", "tclsh", "osascript",
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

_WHERE: dict[str, str] = {name: family for family, names in FAMILIES.items() for name in names}


def family_of(name: str) -> tuple[str, str] | None:
    """(family module, key in its ``HANDLERS``) for ``name``, a lowercase program name."""
    family = _WHERE.get(name)
    if family is not None:
        return family, name
    # python3.11, pypy3, node18, ruby2.7, ...: an interpreter whose code is scanned
    if name in _INTERPRETERS or strip_version(name) in _VERSIONED_INTERPRETERS:
        return "_code", "python"
    if name.startswith(_DISK_PREFIXES):  # mkfs.ext4, mke2fs, wipefs, ...
        return "_fs", "mkfs"
    return None


def lookup(name: str) -> Handler | None:
    """The handler of ``name``, its family module imported on first use."""
    found = family_of(name)
    if found is None:
        return None
    family, key = found
    module = sys.modules.get(f"smllm.gate.shell.{family}")
    if module is None:
        # by name, on first use: a hook pays only for the families its command needs
        __import__(f"smllm.gate.shell.{family}")
        module = sys.modules[f"smllm.gate.shell.{family}"]
    handlers: dict[str, Handler] = module.HANDLERS
    return handlers[key]
