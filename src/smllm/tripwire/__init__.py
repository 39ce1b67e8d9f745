"""The tripwire: smllm notices a change to its protected *files* that it did not make.

Claude Code's own file tools and the MCP servers it starts run outside the agent's sandbox,
so a write the gate approved can still land in the protected set (a folder swapped for a
link between the gate's check and the write, a shell MCP tool). smllm therefore keeps, in
its state folder (which the agent can neither read nor write), a *manifest* per scope (the
user's files, and each armed project's) with every watched file's stat signature, its
SHA-256, the digest of its security-relevant view (:mod:`smllm.tripwire.watched`) and a
copy of its bytes. Every hook calls :func:`watch` first:

* the fast path (this module, standard library only): read the manifests, ``lstat`` every
  watched file and folder, compare the signatures: nothing changed, nothing more is done;
* a signature that changed, or a violation still open, loads :mod:`smllm.tripwire.keeper`,
  which hashes, classifies and answers: a change the host makes on a person's answer
  (``permissions.allow`` in a settings file) or that leaves the security view as it was is
  adopted; a person's edit between sessions is adopted at SessionStart (or at the
  session's UserPromptSubmit before its first tool call, which a host may run first)
  when no other session of the project is live; anything else is a **violation**:
  smllm's copy is put back, the changed bytes are kept aside, ``tripwire.violation`` is
  journaled with the tool call that preceded it, and every further gated call is denied
  until a person runs ``smllm tripwire accept`` or ``smllm tripwire revert`` (a command
  the gate denies to the agent).

A project is watched once ``smllm install`` *armed* it (:func:`smllm.tripwire.keeper.arm`);
without a manifest the hooks pay one failed ``open`` per scope. Other hosts' adapters use
the same four calls: :func:`watch`, :func:`session_started`, :func:`session_ended` and
``keeper.arm``.

Hot path: ``os`` and smllm's standard-library-only base modules.
"""

from __future__ import annotations

from smllm.base import digest, jsonfast, paths
from smllm.base import osfast as os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.journal.codec import Entry

#: the manifest's format version
VERSION = 1
USER = "user"


def root() -> str:
    """The tripwire's folder in smllm's state folder (hidden from the agent's sandbox)."""
    return os.path.join(paths.state_root(), "tripwire")


def scope_of(project: str) -> str:
    """A project's scope name: ``p-`` and 16 hex digits of its path's SHA-256."""
    return "p-" + digest.sha256_hex(os.path.abspath(project).encode("utf-8",
                                                                    "surrogatepass"))[:16]


def manifest_path(scope: str) -> str:
    return os.path.join(root(), scope + ".json")


def read_manifest(scope: str) -> dict[str, Any] | None:
    """The scope's manifest, None when it was never armed; a damaged one reads as
    ``{"damaged": reason}`` (the keeper denies until a person re-arms it)."""
    path = manifest_path(scope)
    try:
        fd = paths.open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return {"damaged": f"{path}: {exc}"}
    try:
        data = jsonfast.loads(read_all(fd))
    except ValueError as exc:
        return {"damaged": f"{path}: not JSON ({exc})"}
    if not isinstance(data, dict) or data.get("v") != VERSION:
        return {"damaged": f"{path}: not a manifest of this smllm"}
    return data


def read_all(fd: int) -> bytes:
    """Everything left to read of ``fd``, which is closed."""
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def signature(path: str) -> list[int] | None:
    """What ``lstat`` says of ``path`` (inode, size, mtime, ctime, mode), None if absent."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return [-1, -1, -1, -1, -1]  # unreadable: a change to look at
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode]


def changed(manifest: dict[str, Any]) -> list[str]:
    """The watched paths (files and folders) whose signature is not the recorded one."""
    out = [p for p, rec in manifest.get("files", {}).items() if signature(p) != rec.get("sig")]
    out += [p for p, sig in manifest.get("dirs", {}).items() if signature(p) != sig]
    return out


class Watch:
    """What a hook does with the tripwire's answer: journal ``entries`` (violations and
    adoptions, in the order they happened) and, for a gated call, deny with ``reason``
    while a violation is open (None: no open violation)."""

    __slots__ = ("entries", "reason")

    def __init__(self, entries: list[Entry] | None = None, reason: str | None = None) -> None:
        self.entries: list[Entry] = entries or []
        self.reason = reason


QUIET = Watch()


def scopes(project: str | None) -> list[str]:
    return [USER] if project is None else [USER, scope_of(project)]


def watch(project: str | None, *, event: str, log: str | None,
          starting: str | None = None, session: str | None = None) -> Watch:
    """Compare the watched files of the user's scope and ``project``'s with the manifests
    (one ``lstat`` each); when something changed or a violation is open, let the keeper
    settle it (``starting``: the session whose clean start may adopt a person's edits
    between sessions). ``event`` and ``log`` say where it was observed and which journal
    shows the calls before it. ``session``: the main session whose hook this is; its
    UserPromptSubmit before any tool call of it adopts like its start (a host may run the
    two hooks at once: Copilot CLI does, so the prompt's hook can see the edit first)."""
    loaded = []
    for scope in scopes(project):
        manifest = read_manifest(scope)
        if manifest is not None:
            loaded.append((scope, manifest))
    if not any("damaged" in m or m.get("open") or changed(m) for _, m in loaded):
        return QUIET
    from smllm.tripwire import keeper  # noqa: PLC0415 - something changed: the slow path

    if starting is None and session is not None and event == "UserPromptSubmit" \
            and keeper.before_any_call(log):
        starting = session
    adopt = keeper.adoptable(starting, project) if starting is not None else False
    return keeper.settle([s for s, _ in loaded], event=event, log=log, adopt=adopt)


def session_started(project: str | None, session_id: str, log: str, *,
                    clean: bool) -> Watch:
    """SessionStart: register the session as live and :func:`watch`, adopting a person's
    edits made since the last session when this session's previous run ended (``clean``)
    and no other session of the project is live."""
    if not any(os.path.exists(manifest_path(s)) for s in scopes(project)):
        return QUIET
    live = os.path.join(root(), "live")
    paths.ensure_private_tree(live, paths.state_root())
    paths.write_private(os.path.join(live, paths.check_id(session_id)),
                        jsonfast.dumps_utf8({"project": project, "log": log}))
    return watch(project, event="SessionStart", log=log,
                 starting=session_id if clean else None)


def session_ended(session_id: str) -> None:
    """SessionEnd: the session is no longer live (its entry in the live register goes)."""
    try:  # noqa: SIM105 - contextlib is too slow to import on the hot path
        os.unlink(os.path.join(root(), "live", session_id))
    except OSError:
        pass
