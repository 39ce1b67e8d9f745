"""Environment variables and git settings that make programs run code, as data.

Setting one (``NAME=value cmd``, ``export NAME=value``, ``env NAME=value cmd``,
``declare -x``) runs code later, in a program that looks innocent:
``GIT_SSH_COMMAND='…' git fetch``, ``BASH_ENV=./x bash -c true``, ``LD_PRELOAD=…``.
The core analyses the value by its kind:

* ``shell``: the value is a command line (analysed as shell);
* ``script``: the value names a file run as a shell script (read and analysed);
* ``library``: the value names native code loaded into every program (escalated);
* ``options``: the value holds interpreter options; those that load code escalate;
* ``git-config``: git configuration given through the environment (escalated when it
  names a key that runs code).

:func:`git_key` classifies a git configuration key the same way, for ``git -c``,
``git config KEY VALUE`` and ``GIT_CONFIG_PARAMETERS``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

VARS: dict[str, str] = {
    # a command line, run by the program that reads the variable
    "GIT_SSH_COMMAND": "shell",
    "GIT_SSH": "shell",
    "GIT_PROXY_COMMAND": "shell",
    "GIT_EXTERNAL_DIFF": "shell",
    "GIT_PAGER": "shell",
    "GIT_EDITOR": "shell",
    "GIT_SEQUENCE_EDITOR": "shell",
    "GIT_ASKPASS": "shell",
    "SSH_ASKPASS": "shell",
    "SUDO_ASKPASS": "shell",
    "PAGER": "shell",
    "MANPAGER": "shell",
    "SYSTEMD_PAGER": "shell",
    "EDITOR": "shell",
    "VISUAL": "shell",
    "FCEDIT": "shell",
    "BROWSER": "shell",
    "PROMPT_COMMAND": "shell",
    "LESSOPEN": "shell",
    "LESSCLOSE": "shell",
    "RSYNC_RSH": "shell",
    "CVS_RSH": "shell",
    "SVN_SSH": "shell",
    # a file run as a script by every non-interactive shell
    "BASH_ENV": "script",
    "ENV": "script",
    # native code loaded into every program started
    "LD_PRELOAD": "library",
    "LD_AUDIT": "library",
    "DYLD_INSERT_LIBRARIES": "library",
    # interpreter options: the code-loading ones escalate
    "NODE_OPTIONS": "options",
    "PERL5OPT": "options",
    "RUBYOPT": "options",
    "JAVA_TOOL_OPTIONS": "options",
    "_JAVA_OPTIONS": "options",
    "JDK_JAVA_OPTIONS": "options",
    "PYTHONSTARTUP": "script",
    # git configuration through the environment
    "GIT_CONFIG_PARAMETERS": "git-config",
    "GIT_CONFIG_GLOBAL": "git-config",
    "GIT_CONFIG_SYSTEM": "git-config",
    "GIT_CONFIG": "git-config",
    "GIT_EXEC_PATH": "library",
    "GIT_TEMPLATE_DIR": "library",
}
#: GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n> pairs
GIT_CONFIG_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
#: interpreter options that load code: node --require, perl -M, ruby -r, java -javaagent
CODE_OPTIONS = ("--require", "-r", "--import", "--loader", "--experimental-loader", "-M",
                "-m", "-d", "-javaagent", "-agentlib", "-agentpath")


def kind_of(name: str) -> str | None:
    """The kind of the variable ``name`` (None: an ordinary variable)."""
    kind = VARS.get(name)
    if kind is None and name.startswith(GIT_CONFIG_PREFIXES):
        return "git-config"
    return kind


def loads_code(options: str) -> bool:
    """Interpreter options that load a module or an agent (``--require x``, ``-Mx``)."""
    for word in options.split():
        if any(word == o or (word.startswith(o) and len(o) == 2) or word.startswith(o + "=")
               or (o.startswith("-java") and word.startswith(o)) for o in CODE_OPTIONS):
            return True
    return False


#: git settings whose value is a command line git runs
_GIT_SHELL = frozenset({
    "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.gitproxy",
    "core.fsmonitor", "sequence.editor", "diff.external", "gpg.program", "credential.helper",
    "web.browser", "uploadpack.packobjectshook", "interactive.difffilter",
})
#: git settings that point at code smllm cannot see (a folder of hooks, another config)
_GIT_CODE = frozenset({"core.hookspath", "init.templatedir", "include.path"})
#: <section>.<name>.<key> settings whose value is a command line
_GIT_SHELL_SUBKEYS = {
    "diff": ("textconv", "command"), "merge": ("driver",), "filter": ("clean", "smudge",
    "process"), "gpg": ("program",), "remote": ("uploadpack", "receivepack", "vcs"),
    "browser": ("cmd",), "mergetool": ("cmd",), "difftool": ("cmd",), "man": ("cmd",),
    "credential": ("helper",),
}


def git_key(key: str, value: str | None) -> str | None:
    """``shell`` (the value is a command line git runs), ``code`` (the setting loads code
    smllm cannot see) or None, for the git setting ``key`` set to ``value``."""
    k = key.lower()
    if k == "core.fsmonitor" and (value or "").lower() in ("true", "false", "1", "0", ""):
        return None  # the built-in monitor
    return next((kind for matches, kind in _GIT_KEYS if matches(k)), None)


def _subkey_runs(k: str) -> bool:
    parts = k.split(".")
    return len(parts) >= 3 and parts[-1] in _GIT_SHELL_SUBKEYS.get(parts[0], ())


#: what a (lowercased) git setting is, the first that matches
_GIT_KEYS: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda k: k in _GIT_SHELL, "shell"),
    (lambda k: k in _GIT_CODE or (k.startswith("includeif.") and k.endswith(".path")), "code"),
    (lambda k: k.startswith("pager."), "shell"),
    (lambda k: k.startswith("protocol.") and k.endswith(".allow") and "ext" in k, "code"),
    (_subkey_runs, "shell"),
)
