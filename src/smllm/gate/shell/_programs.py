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
        "asdf", "at", "aws-vault", "batch", "builtin", "bundle", "busybox", "bwrap", "cabal",
        "caffeinate", "capsh", "catchsegv", "ccache", "chpst", "chronic", "chroot", "chrt",
        "command", "concurrently", "conda", "cpulimit", "daemonize", "dbus-launch",
        "dbus-run-session", "devbox", "direnv", "distcc", "doas", "doppler", "dotenv",
        "dotenvx", "dumb-init", "eatmydata", "entr", "env", "exec", "expect", "fakechroot",
        "fakeroot", "faketime", "firejail", "flock", "gnome-terminal", "goenv", "gosu",
        "gtimeout", "hyperfine", "ifne", "infisical", "ionice", "lldb", "ltrace", "mamba",
        "micromamba", "mise", "nice", "nix", "nix-shell", "nocache", "nodemon", "nodenv",
        "nohup", "nsenter", "numactl", "nvm", "op", "opam", "perf", "pkexec", "prlimit",
        "proot", "proxychains", "proxychains4", "pv", "pyenv", "rbenv", "rtk", "rtx", "run0",
        "runuser", "sccache", "screen", "script", "setarch", "setpriv", "setsid", "sg",
        "ssh-agent", "sshpass", "stack", "stdbuf", "strace", "su-exec", "sudo", "systemd-cat",
        "systemd-inhibit", "systemd-run", "taskset", "then", "time", "timeout", "tini", "tmux",
        "torify", "torsocks", "trickle", "tsocks", "unbuffer", "unshare", "valgrind",
        "watchexec", "with-contenv", "xterm", "xvfb-run",
    ),
    "_shells": (
        ".", "alias", "ash", "bash", "cd", "csh", "dash", "declare", "eval", "export", "fish",
        "hash", "ksh", "local", "mksh", "posh", "pushd", "rbash", "readonly", "sh", "source",
        "su", "tcsh", "trap", "typeset", "watch", "yash", "zsh",
    ),
    "_feeders": (
        "find", "parallel", "xargs",
    ),
    "_fs": (
        "blkdiscard", "cfdisk", "chattr", "chgrp", "chmod", "chown", "cp", "cryptsetup", "dd",
        "diskutil", "fdisk", "format", "gdisk", "hdparm", "install", "ln", "lvremove", "mdadm",
        "mkdir", "mkfs", "mv", "parted", "patch", "pvremove", "rclone", "rm", "rmdir", "rsync",
        "setfacl", "sfdisk", "sgdisk", "shred", "srm", "tar", "tee", "touch", "truncate",
        "unlink", "unzip", "vgremove", "zip", "zpool",
    ),
    "_git": (
        "git",
    ),
    "_code": (
        "awk", "busybox-awk", "emacs", "ex", "gawk", "gsed", "gvim", "mawk", "nano", "nawk",
        "nvim", "python", "sed", "vi", "view", "vim",
    ),
    "_system": (
        "crontab", "halt", "init", "kill", "killall", "killall5", "launchctl", "loginctl",
        "pkill", "poweroff", "reboot", "service", "shutdown", "systemctl", "telinit",
    ),
    "_data": (
        "clickhouse-client", "cockroach", "cqlsh", "dropdb", "dropuser", "duckdb", "mariadb",
        "mongo", "mongosh", "mysql", "mysqladmin", "pg_dropcluster", "psql", "redis-cli",
        "sqlcmd", "sqlite3",
    ),
    "_infra": (
        "aws", "az", "cdk", "docker", "docker-compose", "doctl", "firebase", "fly", "flyctl",
        "gcloud", "gh", "glab", "gsutil", "helm", "heroku", "kind", "kubectl", "minikube",
        "nerdctl", "netlify", "oc", "podman", "pulumi", "serverless", "sls", "terraform",
        "tofu", "vagrant", "vercel",
    ),
    "_net": (
        "curl", "http", "https", "lftp", "mail", "mailx", "msmtp", "mutt", "nc", "ncat",
        "netcat", "openssl", "scp", "sendmail", "sftp", "socat", "ssh", "telnet", "wget", "xh",
    ),
    "_packages": (
        "apt", "apt-get", "brew", "bun", "cargo", "composer", "dnf", "dotnet", "dpkg", "flit",
        "gem", "go", "gradle", "gradlew", "hatch", "mvn", "mvnw", "npm", "npx", "ovsx", "pdm",
        "pip", "pipenv", "pipx", "pnpm", "poetry", "rye", "snap", "twine", "uv", "uvx", "vsce",
        "yarn", "yum", "zypper",
    ),
    "_runners": (
        "gmake", "go-task", "grunt", "gulp", "inv", "invoke", "just", "make", "nox", "poe",
        "rake", "task", "tox",
    ),
    "_runoptions": (
        "gdb", "less", "man", "pandoc", "sort", "tcpdump",
    ),
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
    if strip_version(name) == "pip":  # pip3, pip3.12
        return "_packages", "pip"
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
