
"""git: the forms that destroy uncommitted work, history or the means of recovery, and
the settings and options that make git run commands.

Options are read as git reads them: global options before the subcommand (``-C``,
``-c``, ``--git-dir``, ...), short clusters (``-fdx``), and long options abbreviated
to any unambiguous prefix (``git reset --har``, ``git push --mirr``), which git's
option parser accepts. The long options each check needs are listed per subcommand.
"""

from __future__ import annotations

from smllm.gate.shell._analyse import (
    git_setting,
    judge_argv,
    nested,
    patched_files,
    read_script,
    write_target,
)
from smllm.gate.shell._flags import Arg, Options, flags, long_option, read
from smllm.gate.shell._model import Context, Finding
from smllm.gate.shell._parse import Simple, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Result = tuple[list[Finding], bool]

_GLOBAL_ARG = frozenset({
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix",
    "--config-env", "--list-cmds", "--attr-source",
})
_GLOBAL_LONG = ("--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix",
                "--config-env", "--list-cmds", "--attr-source", "--no-pager", "--paginate",
                "--bare", "--no-replace-objects", "--no-lazy-fetch", "--literal-pathspecs",
                "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
                "--no-optional-locks", "--no-advice", "--help", "--version", "--html-path",
                "--man-path", "--info-path")
#: subcommands that only read (with no arguments for the ones that also write)
_SAFE = frozenset({
    "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep", "describe",
    "shortlog", "ls-tree", "cat-file", "reflog", "help", "version", "fetch", "remote", "tag",
    "branch", "config", "stash", "whatchanged", "rev-list", "ls-remote", "merge-base",
    "name-rev", "show-ref", "for-each-ref", "count-objects", "var", "check-ignore",
})
#: the long options of each checked subcommand, for abbreviations (from git's manual)
_LONG: dict[str, tuple[str, ...]] = {
    name: tuple(text.split()) for name, text in {
        "reset": "--hard --soft --mixed --merge --keep --quiet --no-quiet --patch "
                 "--intent-to-add --recurse-submodules --no-recurse-submodules --refresh "
                 "--no-refresh --pathspec-from-file --pathspec-file-nul",
        "clean": "--force --dry-run --quiet --interactive --exclude",
        "push": "--all --branches --mirror --delete --tags --dry-run --porcelain --force "
                "--force-with-lease --no-force-with-lease --force-if-includes "
                "--no-force-if-includes --recurse-submodules --no-recurse-submodules --thin "
                "--no-thin --receive-pack --exec --set-upstream --progress --no-progress "
                "--prune --no-prune --verify --no-verify --follow-tags --no-follow-tags "
                "--signed --no-signed --atomic --no-atomic --push-option --ipv4 --ipv6 "
                "--repo --verbose --quiet",
        "checkout": "--quiet --progress --no-progress --force --ours --theirs --track "
                    "--no-track --guess --no-guess --detach --orphan "
                    "--ignore-skip-worktree-bits --merge --conflict --patch "
                    "--ignore-other-worktrees --overwrite-ignore --no-overwrite-ignore "
                    "--recurse-submodules --no-recurse-submodules --overlay --no-overlay "
                    "--pathspec-from-file --pathspec-file-nul",
        "switch": "--create --force-create --detach --guess --no-guess --force "
                  "--discard-changes --merge --conflict --quiet --progress --no-progress "
                  "--track --no-track --orphan --ignore-other-worktrees --recurse-submodules "
                  "--no-recurse-submodules",
        "restore": "--source --patch --worktree --staged --quiet --progress --no-progress "
                   "--ours --theirs --merge --conflict --ignore-unmerged "
                   "--ignore-skip-worktree-bits --recurse-submodules --no-recurse-submodules "
                   "--overlay --no-overlay --pathspec-from-file --pathspec-file-nul",
        "branch": "--delete --force --move --copy --list --all --remotes --verbose --quiet "
                  "--abbrev --no-abbrev --column --no-column --sort --merged --no-merged "
                  "--contains --no-contains --points-at --format --color --no-color "
                  "--ignore-case --omit-empty --track --no-track --set-upstream-to "
                  "--unset-upstream --edit-description --show-current --create-reflog "
                  "--recurse-submodules",
        "worktree": "--force --expire --dry-run --verbose --porcelain --reason",
        "commit": "--all --patch --reuse-message --reedit-message --fixup --squash "
                  "--reset-author --short --branch --porcelain --long --null --file "
                  "--author --date --message --template --signoff --no-signoff --trailer "
                  "--verbose --untracked-files --edit --no-edit --amend --no-post-rewrite "
                  "--include --only --pathspec-from-file --pathspec-file-nul --status "
                  "--no-status --gpg-sign --no-gpg-sign --no-verify --verify --allow-empty "
                  "--allow-empty-message --cleanup --dry-run --quiet",
        "gc": "--aggressive --auto --prune --no-prune --quiet --force --keep-largest-pack "
              "--cruft --no-cruft --max-cruft-size",
        "rm": "--cached --force --dry-run --quiet --ignore-unmatch --sparse "
              "--pathspec-from-file --pathspec-file-nul",
        "update-ref": "--no-deref --create-reflog --stdin",
        "reflog": "--expire --expire-unreachable --rewrite --updateref --stale-fix "
                  "--dry-run --verbose --all --single-worktree",
        "clone": "--template --local --shared --no-hardlinks --quiet --verbose --progress "
                 "--no-checkout --bare --mirror --origin --branch --upload-pack --reference "
                 "--dissociate --separate-git-dir --depth --single-branch --no-single-branch "
                 "--recurse-submodules --shallow-submodules --jobs --config --filter "
                 "--sparse --bundle-uri --server-option --no-tags --also-filter-submodules",
        "rebase": "--exec --onto --keep-base --continue --abort --quit --skip "
                  "--edit-todo --show-current-patch --interactive --rebase-merges "
                  "--autosquash --autostash --root --update-refs --no-verify --verify",
        "prune": "--dry-run --verbose --progress --expire",
    }.items()
}
_FETCHERS = frozenset({"clone", "fetch", "pull", "ls-remote", "archive", "submodule"})


def _discard(reason: str) -> list[Finding]:
    return [Finding("git.discard", "deny", reason)]


#: git's own options, before the subcommand (``git -C DIR -c KEY=VALUE status``)
_GLOBAL = Options(_GLOBAL_ARG, longs=_GLOBAL_LONG, dash=True)


def git(name: str, args: list[Word], cmd: Simple, ctx: Context) -> Result:
    values = [a.value for a in args]
    aliases: dict[str, str] = {}
    found: list[Finding] = []
    i = len(args)
    for arg in read(values, _GLOBAL):
        if arg.name == "":
            i = arg.at
        elif arg.name != "--":
            found += _global_option(arg, args, ctx, aliases)
    if i < len(args) and values[i] is None:
        return [
            Finding("shell.dynamic-command", "ask", "git arguments only known at run time")
        ], False
    if i >= len(args):
        return found, not found
    sub = (args[i].value or "").lower()
    rest = args[i + 1 :]
    if sub in aliases:
        more, safe = _alias(name, (sub, aliases[sub]), rest, cmd, ctx)
        return found + more, safe and not found
    more, safe = _subcommand(sub, rest, ctx)
    return found + more, safe and not found


def _global_option(arg: Arg, args: list[Word], ctx: Context, aliases: dict[str, str]
                   ) -> list[Finding]:
    """What one of git's own options does: ``-c KEY=VALUE`` sets a setting (or an alias),
    ``--config-env`` takes one from the environment, ``--exec-path=DIR`` runs git's
    commands from DIR."""
    word = arg.word(args)
    if arg.name == "-c" and word is not None:
        return _setting(word, ctx, aliases)
    if arg.name == "--config-env":
        key = (word.value or "").split("=", 1)[0] if word is not None else ""
        return git_setting(key, None, ctx, f"git --config-env {key}") if key else []
    if arg.name == "--exec-path" and arg.attached is not None:
        return [Finding("exec.code-option", "ask",
                        f"git --exec-path={arg.attached} runs git's commands from another "
                        "folder")]
    return []


def _setting(word: Word, ctx: Context, aliases: dict[str, str]) -> list[Finding]:
    """``-c KEY=VALUE``: an alias is kept for the subcommand, a setting judged."""
    if word.value is None:
        return [Finding("exec.code-option", "ask", "git -c with a run-time setting")]
    key, _, value = word.value.partition("=")
    if key.lower().startswith("alias."):
        aliases[key[6:].lower()] = value
        return []
    return git_setting(key, value, ctx, f"git -c {key}")


def _alias(name: str, alias: tuple[str, str], rest: list[Word], cmd: Simple, ctx: Context
           ) -> Result:
    """``git -c alias.NAME=BODY NAME``: BODY run (``!`` makes it a shell command)."""
    sub, body = alias
    if body.startswith("!"):
        return [
            Finding("git.alias-exec", "ask", f"git alias {sub!r} runs a shell command"),
            *nested(body[1:], ctx, f"git alias {sub}"),
        ], False
    return git(name, [*(Word(p, p) for p in body.split()), *rest], cmd, ctx)


def _subcommand(sub: str, rest: list[Word], ctx: Context) -> Result:
    values = [(a.value or "").lower() for a in rest]
    if "--help" in values or "-h" in values:
        return [], True
    found: list[Finding] = []
    if sub in _FETCHERS:
        found += _fetcher(sub, values, rest, ctx)
    check = _CHECKS.get(sub)
    if check:
        known = _LONG.get(sub, ())
        found += check([long_option(v, known) for v in values], rest, ctx)
    safe = (
        sub in _SAFE
        and not found
        and (sub not in _WRITERS or (not values and sub != "stash")  # bare stash pushes
             or (bool(values) and _lists(sub, [a.value for a in rest])))
    )
    return found, safe


#: the subcommands of :data:`_SAFE` that also write: read-only bare (but ``git stash``,
#: which is ``git stash push``), or in a listing form
_WRITERS = ("branch", "tag", "stash", "config", "remote")
#: the options with which they only list (``git branch -a``, ``git remote -v``)
_LIST_FLAGS: dict[str, frozenset[str]] = {
    "branch": frozenset({"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
                         "--show-current", "--no-color", "--no-column", "--list", "-l"}),
    "tag": frozenset({"-l", "--list"}),
    "remote": frozenset({"-v", "--verbose"}),
    "config": frozenset({"-l", "--list", "--global", "--local", "--system", "--show-origin",
                         "--show-scope", "--name-only"}),
    "stash": frozenset(),
}
#: a first word that makes the rest read-only (``git stash list``, ``git config --get k``)
_LIST_WORDS: dict[str, frozenset[str]] = {
    "stash": frozenset({"list", "show"}),
    "remote": frozenset({"get-url", "show"}),
    "config": frozenset({"--get", "--get-all", "--get-regexp"}),
}


def _lists(sub: str, values: list[str | None]) -> bool:
    """Do these arguments of a writing subcommand (:data:`_WRITERS`) only list? Every
    argument a listing option; after ``--list`` (branch, tag) also patterns; after a
    listing word, the operands it reads (for ``config --get``: a key and a value pattern)."""
    if any(v is None for v in values):
        return False
    words = [v or "" for v in values]
    if words[0] in _LIST_WORDS.get(sub, ()):
        rest = words[1:]
        return sub != "config" or (len(rest) in (1, 2) and not rest[0].startswith("-"))
    flags = _LIST_FLAGS[sub]
    listing = sub in ("branch", "tag") and ("--list" in words or "-l" in words)
    return all(w in flags or (listing and not w.startswith("-")) for w in words)


def _fetcher(sub: str, values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    """clone/fetch/pull/...: ``--upload-pack`` runs a command, ``ext::`` URLs run one,
    ``--config`` sets git settings, ``--template`` copies hooks in."""
    out: list[Finding] = []
    for j, v in enumerate(values):
        out += _fetch_option(sub, j, v, args, ctx)
    if sub == "clone":
        operands = [a for a in args if not (a.value or "").startswith("-")]
        if len(operands) >= 2:
            out += write_target(operands[1], ctx, truncate=False, what="git clone into",
                                by="git")
    if sub == "submodule" and values[:1] == ["foreach"]:
        out += _foreach(args, ctx)
    return out


def _fetch_option(sub: str, j: int, v: str, args: list[Word], ctx: Context) -> list[Finding]:
    """What the word ``v`` (``args[j]``, lowercased) of a fetching subcommand runs."""
    raw = args[j].value or ""
    full = long_option(v, _LONG.get("clone", ()))
    nxt = args[j + 1].value if j + 1 < len(args) else None
    out: list[Finding] = []
    value: str | None = None
    if full in ("--upload-pack", "--exec", "--receive-pack") or (
        v == "-u" and sub in ("clone", "ls-remote")
    ):
        value = nxt
    elif full.startswith(("--upload-pack=", "--exec=", "--receive-pack=")):
        value = raw.split("=", 1)[1]
    if value is not None:
        out.append(Finding("exec.code-option", "ask",
                           f"git {sub} {full.split('=')[0]} runs a command on this machine"))
        out += nested(value, ctx, f"git {sub} {full.split('=')[0]}")
    setting = nxt if full in ("--config", "-c") and nxt else (
        raw.split("=", 1)[1] if full.startswith("--config=") else None)
    if setting is not None:
        key, _, value = setting.partition("=")
        out += git_setting(key, value, ctx, f"git {sub} --config {key}")
    if full.startswith("--template"):
        out.append(Finding("exec.code-option", "ask",
                           f"git {sub} --template copies hooks that git then runs"))
    if raw.lower().startswith("ext::"):
        out.append(Finding("exec.code-option", "ask", f"git {sub} of an ext:: URL runs a command"))
        out += nested(raw[5:].replace("% ", " ").replace("%%", "%"), ctx, "git ext::")
    return out


def _foreach(args: list[Word], ctx: Context) -> list[Finding]:
    """``git submodule foreach CMD``: CMD runs in each submodule."""
    body = [a.value for a in args[1:] if (a.value or "") not in ("--recursive", "-q", "--quiet")]
    if any(b is None for b in body):
        return [Finding("shell.dynamic-command", "ask",
                        "git submodule foreach runs a run-time string")]
    return nested(" ".join(b for b in body if b is not None), ctx, "git submodule foreach")


def _reset(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if flags(values) & {"--hard", "--merge", "--keep"}:
        return _discard("git reset --hard discards uncommitted changes")
    return []


def _pathspecs(args: list[Word], ctx: Context, what: str) -> list[Finding]:
    """The files a checkout or restore writes: the pathspecs after ``--``."""
    values = [a.value for a in args]
    if "--" not in values:
        return []
    out: list[Finding] = []
    for w in args[values.index("--") + 1:]:
        out += write_target(w, ctx, truncate=False, what=what, by="git")
    return out


def _checkout(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    f = flags(values)
    if f & {"-b", "--orphan"} or "-b" in values:
        return []
    if f & {"-f", "--force", "-p", "--patch"} or "--" in values or "." in values:
        return _discard("git checkout overwrites working-tree files") + _pathspecs(
            args, ctx, "git checkout overwrites")
    return []


def _restore(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    f = flags(values)
    if f & {"--staged", "-S"} and not f & {"--worktree", "-W"}:
        return []
    operands = [a for a in args if not (a.value or "").startswith("-")]
    out = _discard("git restore discards working-tree changes")
    for w in operands:
        if w.value != "--":
            out += write_target(w, ctx, truncate=False, what="git restore overwrites", by="git")
    return out


def _apply(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    """git apply PATCH: the files the patch names are written."""
    if flags(values) & {"--check", "--stat", "--numstat", "--summary"}:
        return []
    out: list[Finding] = []
    for w in args:
        if w.value and not w.value.startswith("-"):
            text = read_script(w, ctx)
            for path in patched_files(text or "", 1):
                out += write_target(Word(path, path), ctx, truncate=False,
                                    what="git apply writes", by="git")
    return out


def _switch(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if flags(values) & {"-f", "--force", "--discard-changes"}:
        return _discard("git switch --discard-changes throws away local changes")
    return []


def _clean(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    f = flags(values)
    if f & {"-n", "--dry-run"}:
        return []
    if f & {"-f", "--force"}:
        return _discard("git clean -f deletes untracked (and with -x ignored) files")
    return []


def _stash(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if values and values[0] in ("drop", "clear"):
        return [Finding("git.destroy-refs", "deny", f"git stash {values[0]} loses stashed work")]
    return []


def _branch(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    raw = [a.value or "" for a in args]
    f = flags(values)
    capital_d = any(v.startswith("-") and not v.startswith("--") and "D" in v for v in raw)
    if capital_d or ("--delete" in f and ("--force" in f or "-f" in f)):
        return [Finding("git.destroy-refs", "deny", "git branch -D deletes an unmerged branch")]
    return []


def _worktree(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if values and values[0] == "remove":
        if flags(long_option(v, _LONG["worktree"]) for v in values[1:]) & {"-f", "--force"}:
            return _discard("git worktree remove --force discards its changes")
        return [Finding("git.worktree-remove", "ask", "git worktree remove deletes a worktree")]
    return []


def _push(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    f = flags(values)
    if f & {"-f", "--force", "--mirror", "--delete", "-d", "--prune"}:
        return [
            Finding("git.force-push", "deny", "git push that overwrites or deletes remote history")
        ]
    operands = [v for v in values if not v.startswith("-")]
    if any(v.startswith(("+", ":")) for v in operands[1:]):
        return [
            Finding("git.force-push", "deny", "git push of a forced (+) or deleting (:) refspec")
        ]
    if f & {"--force-with-lease", "--force-if-includes"}:
        return [Finding("git.force-push-lease", "ask",
                        "git push --force-with-lease still rewrites the remote's history")]
    return _push_elsewhere(f, operands, ctx)


def _push_elsewhere(f: set[str], operands: list[str], ctx: Context) -> list[Finding]:
    """A push to a repository named by its URL, or to a remote this command has just
    added or re-pointed: the code goes where nobody configured it to go (with ``--all``
    or ``refs/*``, the whole repository)."""
    if not operands:
        return []
    remote = operands[0]
    url = "://" in remote or remote.endswith(".git") or (
        ":" in remote and "@" in remote.split(":", 1)[0])
    if not url and remote not in ctx.memory.remotes:
        return []
    whole = bool(f & {"--all", "--branches", "--tags"}) or any("*" in v for v in operands[1:])
    where = f"the URL {remote}" if url else f"the remote {remote} this command points"
    from smllm.gate.shell._decisions import finding  # noqa: PLC0415 - a rare finding (hot path)

    return [finding("git.push-new-remote", f"git push{' of every branch' if whole else ''} "
                    f"to {where}")]


def _remote(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    """``git remote add NAME URL`` / ``set-url NAME URL``: a later push to NAME in the same
    command goes to a new place."""
    operands = [v for v in values if not v.startswith("-")]
    if len(operands) >= 3 and operands[0] in ("add", "set-url", "rename"):
        ctx.memory.remotes.add(operands[1 if operands[0] != "rename" else 2])
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


def _prune(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if flags(values) & {"-n", "--dry-run"}:
        return []
    return [Finding("git.destroy-refs", "deny", "git prune deletes unreachable objects")]


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


_CONFIG_WITH_ARG = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                              "--value", "--url"})


def _config(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    """``git config [scope] KEY VALUE`` (or ``git config set KEY VALUE``): a setting
    that runs a command is analysed; the user's or the system's file is outside."""
    raw = [a.value for a in args]
    operands: list[str | None] = []
    scope = "local"
    j = 0
    while j < len(raw):
        v = raw[j] or ""
        if v in ("--global", "--system"):
            scope = v[2:]
        if v in _CONFIG_WITH_ARG:
            j += 2
            continue
        if not v.startswith("-"):
            operands.append(raw[j])
        j += 1
    if operands[:1] in (["set"], ["unset"], ["get"], ["list"], ["edit"]):
        verb = operands.pop(0)
        if verb != "set":
            return []
    if len(operands) < 2 or operands[0] is None:
        return []
    key = operands[0]
    value = operands[1]
    out: list[Finding] = []
    if key.lower().startswith("alias.") and (value is None or value.startswith("!")):
        out.append(Finding("git.alias-exec", "ask", f"defines {key} as a shell command"))
        out += nested(value[1:], ctx, f"git {key}") if value else []
    else:
        out += git_setting(key, value, ctx, f"git config {key}")
    if scope != "local":
        path = f"{ctx.home}/.gitconfig" if scope == "global" else "/etc/gitconfig"
        out += write_target(Word(path, path), ctx, truncate=False,
                            what=f"git config --{scope} changes", by="git config")
    return out


def _rebase(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    for j, v in enumerate(values):
        text = None
        if v in ("-x", "--exec") and j + 1 < len(args):
            text = args[j + 1].value
        elif v.startswith("--exec="):
            text = (args[j].value or "").split("=", 1)[1]
        else:
            continue
        if text is None:
            out.append(Finding("shell.dynamic-command", "ask", "git rebase --exec a run-time "
                               "string"))
        else:
            out += nested(text, ctx, "git rebase --exec")
    return out


def _bisect(values: list[str], args: list[Word], ctx: Context) -> list[Finding]:
    if values[:1] == ["run"] and len(args) > 1:
        return judge_argv(args[1:], Simple(), ctx)[0]
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
    "remote": _remote,
    "reflog": _reflog,
    "gc": _gc,
    "prune": _prune,
    "update-ref": _update_ref,
    "filter-branch": _rewrite,
    "filter-repo": _rewrite,
    "commit": _commit,
    "rm": _rm,
    "config": _config,
    "rebase": _rebase,
    "bisect": _bisect,
    "apply": _apply,
}

HANDLERS: dict[str, Callable[[str, list[Word], Simple, Context], Result]] = {"git": git}
