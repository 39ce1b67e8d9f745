# ruff: noqa: PLR0911 - a shell grammar is a big case analysis; /tmp is data here
"""git: the forms that destroy uncommitted work, history or the means of recovery."""

from __future__ import annotations

from smllm.gate.shell._analyse import nested
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._model import re_lazy as re
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

_GLOBAL_ARG = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--super-prefix",
        "--config-env",
        "--list-cmds",
    }
)
_SAFE = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "grep",
        "describe",
        "shortlog",
        "ls-tree",
        "cat-file",
        "reflog",
        "help",
        "version",
        "fetch",
        "remote",
        "tag",
        "branch",
        "config",
        "stash",
        "whatchanged",
    }
)


def _discard(reason: str) -> list[Finding]:
    return [Finding("git.discard", "deny", reason)]


def git(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    aliases: dict[str, str | None] = {}
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            return [
                Finding("shell.dynamic-command", "ask", "git arguments only known at run time")
            ], False
        if not v.startswith("-"):
            break
        if v == "-c" and i + 1 < len(args):
            _alias(args[i + 1].value, aliases)
        elif v.startswith("-c") and len(v) > 2:
            _alias(v[2:], aliases)
        i += 2 if v in _GLOBAL_ARG else 1
    if i >= len(args):
        return [], True
    sub_word = args[i]
    sub = (sub_word.value or "").lower()
    rest = args[i + 1 :]
    values = [(a.value or "").lower() for a in rest]
    if sub in aliases:
        body = aliases[sub]
        if body is None:
            return [Finding("git.alias-exec", "ask", "git alias with a run-time body")], False
        if body.startswith("!"):
            return [
                Finding("git.alias-exec", "ask", f"git alias {sub!r} runs a shell command"),
                *nested(body[1:], ctx, f"git alias {sub}"),
            ], False
        inner = [Word("git", "git"), *(Word(p, p) for p in body.split()), *rest]
        return git(name, inner[1:], cmd, ctx)
    if "--help" in values or "-h" in values:
        return [], True
    check = _CHECKS.get(sub)
    found = check(values, rest, ctx) if check else []
    safe = (
        sub in _SAFE
        and not found
        and not (sub in ("branch", "tag", "stash", "config", "remote") and values)
    )
    return found, safe


def _alias(setting: str | None, aliases: dict[str, str | None]) -> None:
    if setting is None:
        return
    m = re.match(r"alias\.([^=]+)=(.*)", setting, re.DOTALL | re.IGNORECASE)
    if m:
        aliases[m.group(1).lower()] = m.group(2)


def _flags(values: list[str]) -> set[str]:
    """Every flag, with short clusters split (``-fdx`` -> ``-f -d -x``)."""
    out: set[str] = set()
    for v in values:
        if v == "--":
            break
        if v.startswith("--"):
            out.add(v.split("=", 1)[0])
        elif v.startswith("-") and len(v) > 1:
            out.update(f"-{ch}" for ch in v[1:])
    return out


def _reset(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if flags & {"--hard", "--merge", "--keep"}:
        return _discard("git reset --hard discards uncommitted changes")
    return []


def _checkout(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if flags & {"-b", "--orphan"} or "-b" in values:
        return []
    if flags & {"-f", "--force", "-p", "--patch"} or "--" in values or "." in values:
        return _discard("git checkout overwrites working-tree files")
    return []


def _restore(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if flags & {"--staged", "-S"} and not flags & {"--worktree", "-W"}:
        return []
    return _discard("git restore discards working-tree changes")


def _switch(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if flags & {"-f", "--force", "--discard-changes"}:
        return _discard("git switch --discard-changes throws away local changes")
    return []


def _clean(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if flags & {"-n", "--dry-run"}:
        return []
    if flags & {"-f", "--force"}:
        return _discard("git clean -f deletes untracked (and with -x ignored) files")
    return []


def _stash(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if values and values[0] in ("drop", "clear"):
        return [Finding("git.destroy-refs", "deny", f"git stash {values[0]} loses stashed work")]
    return []


def _branch(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if (
        "-D" in {v for v in values}
        or ("--delete" in flags and "--force" in flags)
        or any(re.fullmatch(r"-[a-z]*D[a-z]*", a.value or "") for a in args)
    ):
        return [Finding("git.destroy-refs", "deny", "git branch -D deletes an unmerged branch")]
    return []


def _worktree(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if values and values[0] == "remove":
        flags = _flags(values[1:])
        if flags & {"-f", "--force"}:
            return _discard("git worktree remove --force discards its changes")
        return [Finding("git.worktree-remove", "ask", "git worktree remove deletes a worktree")]
    return []


def _push(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    flags = _flags(values)
    if flags & {"-f", "--force", "--mirror", "--delete", "-d", "--prune"}:
        return [
            Finding("git.force-push", "deny", "git push that overwrites or deletes remote history")
        ]
    operands = [v for v in values if not v.startswith("-")]
    if any(v.startswith("+") or v.startswith(":") for v in operands[1:]):
        return [
            Finding("git.force-push", "deny", "git push of a forced (+) or deleting (:) refspec")
        ]
    return []


def _reflog(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if values and values[0] in ("expire", "delete"):
        return [
            Finding("git.destroy-refs", "deny", "git reflog expire removes the means of recovery")
        ]
    return []


def _gc(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if any(v.startswith("--prune=") and v != "--prune=2.weeks.ago" for v in values):
        return [
            Finding("git.destroy-refs", "deny", "git gc --prune=now drops unreachable commits")
        ]
    return []


def _update_ref(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if "-d" in values or "--delete" in values:
        return [Finding("git.destroy-refs", "deny", "git update-ref -d deletes a ref")]
    return []


def _rewrite(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    return [Finding("git.destroy-refs", "deny", "rewrites the whole history")]


def _commit(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if "--amend" in values:
        return [Finding("git.amend", "ask", "git commit --amend rewrites the last commit")]
    return []


def _rm(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if "--cached" in values:
        return []
    return [Finding("git.rm", "ask", "git rm deletes files from the working tree")]


def _config(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    for i, v in enumerate(values):
        if v.startswith("alias.") and i + 1 < len(args):
            body = args[i + 1].value
            if body is None or body.startswith("!"):
                inner = nested(body[1:], ctx, f"git {v}") if body else []
                return [
                    Finding("git.alias-exec", "ask", f"defines {v} as a shell command"),
                    *inner,
                ]
    return []


_CHECKS: dict[str, Callable[[list[str], list[Word], Context], list[Finding]]] = {
    "reset": _reset,
    "checkout": _checkout,
    "restore": _restore,
    "switch": _switch,
    "clean": _clean,
    "stash": _stash,
    "branch": _branch,
    "worktree": _worktree,
    "push": _push,
    "reflog": _reflog,
    "gc": _gc,
    "update-ref": _update_ref,
    "filter-branch": _rewrite,
    "filter-repo": _rewrite,
    "commit": _commit,
    "rm": _rm,
    "config": _config,
}

HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {"git": git}
