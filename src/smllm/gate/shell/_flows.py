"""Where secrets go: sensitive sources read by a command, and the network sinks they reach.

A *source* is a file that holds secrets (:meth:`Context.secret_kind`: credential stores,
private keys, ``.env`` files, smllm's journals, the policy's sensitive paths). Every
simple command is checked for the sources it reads (its operands and ``<``
redirections, except for programs that only look at a file's name or metadata); the
core notes them in the command string's memory, with the files such a command writes
(now *tainted*: they hold the secret too).

A *sink* sends data over the network (``curl -T``, ``nc``, ``scp`` to a host, ...). A
sink's handler calls :func:`sink` with the files it sends: a flow exists when one of
them is a source or a tainted file, when its stdin comes from a pipeline that reads a
source, or when a source is read in a substitution and the sink has a run-time word.
"""

from __future__ import annotations

from smllm.base import credentials
from smllm.base import osfast as os
from smllm.gate.shell._model import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from smllm.gate.shell._model import Context
    from smllm.gate.shell._parse import Simple, Word

#: a word naming a source contains one of these (a cheap test before resolving it)
_HINTS = credentials.FLOW_HINTS
#: programs that look at a file's name or metadata, or use a key without sending it
NOT_READING = frozenset({
    "chmod", "chown", "chgrp", "chattr", "ls", "stat", "test", "[", "touch", "mkdir", "rm",
    "unlink", "rmdir", "ln", "realpath", "dirname", "basename", "readlink", "du", "file",
    "ssh-add", "ssh-keygen", "ssh-copy-id", "wc", "shred", "srm", "echo", "printf", "cd",
    "pushd", "which", "type", "command", "mv", "install", "git",
})
#: options whose value is a key or a configuration used to authenticate, not data sent
#: (ssh -i, curl --key, kubectl --kubeconfig, ansible --private-key)
_KEY_OPTIONS = frozenset({"-i", "--identity", "--identity-file", "--key", "--key-file",
                          "--keyfile", "--cert", "-E", "--cacert", "--proxy-key",
                          "--proxy-cert", "--capath", "--kubeconfig", "--netrc-file",
                          "--private-key", "--credentials-file", "--credential-file",
                          "--ssh-key", "--tls-key", "--tlskey", "--tlscert", "--sslkey"})


def _hinted(value: str, ctx: Context) -> bool:
    return any(h in value for h in _HINTS) or any(
        os.path.basename(p) in value for p in ctx.extra_sensitive
    )


def _home(value: str, ctx: Context) -> str:
    return ctx.home + value[1:] if value == "~" or value.startswith("~/") else value


def source_of(value: str | None, ctx: Context) -> tuple[str, str] | None:
    """(resolved path, kind) when ``value`` (a path, ``@path`` or ``<path``) names a source,
    links made by the command or found on disk followed."""
    if not value or not (_hinted(value, ctx) or ctx.memory.links):
        return None
    value = _home(value.lstrip("@<"), ctx)
    if "=" in value and not value.startswith(("/", ".", "~")):
        value = _home(value.split("=", 1)[1].lstrip("@<"), ctx)  # name=@file, --opt=file
    if ":" in value and not value.startswith(("/", ".")):  # socat FILE:/path, user@host:/path
        value = value.split(":", 1)[1]
    path = ctx.resolve(value) if value else None
    if path is None:
        return None
    kind = ctx.secret_kind(path)
    if kind is None:
        real = ctx.follow(path)
        kind = ctx.secret_kind(real) if real != path else None
        path = real if kind else path
    return (path, kind) if kind else None


def reads(cmd: Simple, ctx: Context) -> list[tuple[str, str]]:
    """The sources ``cmd`` reads: its operands and its ``<`` redirections."""
    found = []
    for r in cmd.redirects:
        if r.op in ("<", "<>") and r.target is not None:
            hit = source_of(r.target.value, ctx)
            if hit:
                found.append(hit)
    if not cmd.words:
        return found
    name = os.path.basename(cmd.words[0].value or "")
    if name in NOT_READING:
        return found
    skip = False
    for w in cmd.words[1:]:
        v = w.value
        if skip:
            skip = False
            continue
        if v in _KEY_OPTIONS:
            skip = True
            continue
        if v and v.startswith("--") and v.split("=", 1)[0] in _KEY_OPTIONS:
            continue
        hit = source_of(v, ctx)
        if hit:
            found.append(hit)
    return found


def note(found: list[tuple[str, str]], cmd: Simple, ctx: Context, effects_before: int
         ) -> None:
    """After ``cmd`` was judged: remember the sources it read (``found``), and taint what
    it wrote."""
    memory = ctx.memory
    memory.secret_reads += [(path, cmd.nested) for path, _ in found]
    for effect in memory.effects[effects_before:]:
        if effect.kind == "write" and effect.path:
            memory.tainted.add(effect.path)


def remote(value: str | None) -> bool:
    """``[user@]host:path``, as scp and rsync read a remote operand."""
    if not value or value.startswith(("/", ".", "~")) or ":" not in value:
        return False
    host = value.split(":", 1)[0]
    return bool(host) and "/" not in host and not host.startswith("-")


def sink(name: str, sent: Sequence[Word | str], cmd: Simple, ctx: Context) -> list[Finding]:
    """Findings for the network sink ``name`` sending the files ``sent`` (words or raw
    values: ``@file`` and ``<file`` forms are understood) and its stdin."""
    for item in sent:
        value = item if isinstance(item, str) else item.value
        hit = source_of(value, ctx)
        path = hit[0] if hit else ctx.resolve(_home(value.lstrip("@<"), ctx)) if value else None
        if hit or (path and path in ctx.memory.tainted):
            shown = value if hit else f"{value} (written from a secret earlier)"
            return [Finding("exfil.secret-to-network", "deny",
                            f"{name} sends {shown} over the network", path)]
    upstream = cmd.stdin
    seen = 0
    while upstream is not None and seen < 32:
        hit_up = reads(upstream, ctx)
        if hit_up:
            return [Finding("exfil.secret-to-network", "deny",
                            f"{name} sends what a pipeline reads from {hit_up[0][0]}",
                            hit_up[0][0])]
        upstream = upstream.stdin
        seen += 1
    for r in cmd.redirects:
        if r.op in ("<", "<>") and r.target is not None and r.target.value:
            hit = source_of(r.target.value, ctx)
            path = hit[0] if hit else ctx.resolve(r.target.value)
            if hit or (path and path in ctx.memory.tainted):
                return [Finding("exfil.secret-to-network", "deny",
                                f"{name} sends {r.target.value} over the network", path)]
    nested_reads = [p for p, inner in ctx.memory.secret_reads if inner]
    if nested_reads and any(w.value is None for w in cmd.words):
        return [Finding("exfil.secret-to-network", "deny",
                        f"{name} sends a value computed from {nested_reads[0]}",
                        nested_reads[0])]
    return []
