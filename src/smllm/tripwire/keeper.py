"""The tripwire's slow path: record, classify, restore, adopt and resolve.

Loaded by a hook only when :func:`smllm.tripwire.watch` saw a signature change or an
open violation, and by ``smllm install`` / ``smllm tripwire`` / ``smllm doctor``.
Everything it writes is in the tripwire's folder of smllm's state folder, under one lock
(``tripwire/lock``), so two hooks seeing the same change settle it once.

A change is settled in this order (:func:`settle`):

1. the bytes are the recorded ones (a ``touch``, a rewrite of the same content): the new
   signature is recorded, nothing else;
2. its security view (:func:`smllm.tripwire.watched.security_view`) is unchanged: Claude
   Code's own write (a person's "don't ask again" adds to ``permissions.allow``, Claude
   Code's state in ``~/.claude.json``): adopted; a settings file's adoption is journaled
   (``tripwire.adopted``, ``reason: host-prompt-answer``);
3. at SessionStart, when this session's previous run ended and no other session of the
   project (for the user's files: of any project) is live: a person's edit between
   sessions, adopted and journaled (``reason: between-sessions``);
4. anything else is a violation: the changed bytes are kept (content-addressed copies),
   smllm's copy is put back (a file that appeared is taken away, a folder swapped for a
   link gets its folder back), ``tripwire.violation`` is journaled with the tool call that
   preceded it, and the violation stays open until ``smllm tripwire accept|revert``.
"""

from __future__ import annotations

import contextlib
import time

from smllm import journal, tripwire
from smllm.base import clock, jsonfast, lockfile, paths
from smllm.base import osfast as os
from smllm.journal import records
from smllm.tripwire import watched

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from smllm.journal.codec import Entry

#: a live session whose journal was not written for this long is taken as gone (crashed
#: without SessionEnd): it no longer keeps a person's edits from being adopted
LIVE_WINDOW_S = 3600.0
#: a JSON file that does not parse is read again this many times, this far apart: Claude
#: Code rewrites ``~/.claude.json`` and its settings files in place, and a hook may read
#: one half written
SETTLE_READS = 10
SETTLE_PAUSE_S = 0.02


# ------------------------------------------------------------------ storage


def _folder(*parts: str) -> str:
    root = tripwire.root()
    paths.ensure_private_tree(os.path.join(root, *parts), paths.state_root())
    return os.path.join(root, *parts)


def _lock() -> lockfile.locked:
    return lockfile.locked(os.path.join(_folder(), "lock"))


def _keep(data: bytes | None) -> str | None:
    """Keep ``data`` among the copies (by its SHA-256); its digest."""
    digest = watched.sha(data)
    if data is None or digest is None:
        return None
    path = os.path.join(_folder("copies"), digest)
    if not os.path.exists(path):
        paths.write_private(path, data)
    return digest


def copy_of(digest: str | None) -> bytes | None:
    """The kept bytes of ``digest`` (None: absent, or not kept)."""
    if digest is None:
        return None
    try:
        fd = paths.open_regular(os.path.join(tripwire.root(), "copies", digest), os.O_RDONLY)
    except OSError:
        return None
    return tripwire.read_all(fd)


def _save(manifest: dict[str, Any]) -> None:
    paths.write_private(tripwire.manifest_path(manifest["scope"]),
                        jsonfast.dumps_utf8(manifest))


def _entry(path: str, view: str, data: bytes | None) -> dict[str, Any]:
    return {"sig": tripwire.signature(path), "sha": _keep(data), "view": view,
            "vsha": watched.sha(watched.security_view(data, view))}


# ------------------------------------------------------------------ arming


def _build(scope: str, project: str | None, open_: list[dict[str, Any]],
           hosts: list[str]) -> dict[str, Any]:
    """A fresh manifest of ``scope``: every watched file as it is now, ``hosts``' own
    files among them (:func:`smllm.tripwire.watched.host_files`)."""
    trees: list[str] = []
    if scope == tripwire.USER:
        files = watched.user_files()
    else:
        assert project is not None
        trees, files = watched.project_files(project)
    for host in hosts:
        files.update(watched.host_files(host, project))
    dirs: dict[str, Any] = {}
    for tree in trees:
        found, inside = watched.walk(tree)
        dirs.update(found)
        files.update({f: watched.view_of(f, "bytes") for f in inside})
    return {"v": tripwire.VERSION, "scope": scope, "project": project, "trees": trees,
            "dirs": dirs, "open": open_, "hosts": hosts,
            "files": {p: _entry(p, v, watched.read(p)) for p, v in sorted(files.items())}}


def hosts_of(manifest: dict[str, Any] | None) -> list[str]:
    """The hosts a manifest watches for: those install armed it for (a manifest from before
    other hosts were watched is Claude Code's)."""
    if manifest is None or "damaged" in manifest:
        return []
    found = manifest.get("hosts")
    return [h for h in found if isinstance(h, str)] if isinstance(found, list) else ["claude"]


def arm(project: str, host: str = "claude") -> list[str]:
    """Record the watched files of the user's scope and ``project``'s as they are now
    (``smllm install``, for ``host``: smllm's own change, and a person's), ``host``'s own
    files among them; violations still open stay open. The manifests written."""
    project = os.path.abspath(project)
    out = []
    with _lock():
        for scope in tripwire.scopes(project):
            old = tripwire.read_manifest(scope) or {}
            hosts = sorted({*hosts_of(old or None), host})
            manifest = _build(scope, None if scope == tripwire.USER else project,
                              list(old.get("open") or []), hosts)
            _save(manifest)
            out.append(tripwire.manifest_path(scope))
    return out


def _project_manifests() -> list[dict[str, Any]]:
    """Every armed project's manifest (readable ones)."""
    try:
        names = sorted(os.listdir(tripwire.root()))
    except OSError:
        return []
    found = [tripwire.read_manifest(n[:-len(".json")]) for n in names
             if n.startswith("p-") and n.endswith(".json")]
    return [m for m in found if m is not None and "damaged" not in m]


def _unwatch(manifest: dict[str, Any], host: str) -> None:
    """``host`` no longer in ``manifest``: its own files leave it (the others stay as
    recorded, a change to them still to be settled)."""
    manifest["hosts"] = [h for h in hosts_of(manifest) if h != host]
    project = manifest.get("project")
    for path in watched.host_files(host, project if isinstance(project, str) else None):
        manifest["files"].pop(path, None)


def disarm(project: str, host: str = "claude") -> bool:
    """``smllm uninstall`` for ``host``: stop watching its files in ``project``, and the
    project once no host is installed there (and the user's files of a host no armed
    project has any more); True if the project was armed for it."""
    project = os.path.abspath(project)
    scope = tripwire.scope_of(project)
    with _lock():
        manifest = tripwire.read_manifest(scope)
        if manifest is None or host not in hosts_of(manifest):
            return False
        _unwatch(manifest, host)
        if manifest["hosts"]:
            _save(manifest)
        else:
            os.unlink(tripwire.manifest_path(scope))
        user = tripwire.read_manifest(tripwire.USER)
        if user is not None and host in hosts_of(user) and not any(
                host in hosts_of(m) for m in _project_manifests()):
            _unwatch(user, host)
            _save(user)
    return True


# ------------------------------------------------------------------ restoring


def _real_folder(folder: str, stop: str) -> None:
    """Make ``folder`` a plain folder again: a link, file or other thing at its place (or at
    a parent's below ``stop``) is removed first (its name, never what it points to).
    ``stop`` and what is above it are the person's, left as they are."""
    if folder == stop or not folder.startswith(stop + os.sep):
        return
    _real_folder(os.path.dirname(folder), stop)
    if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
        os.unlink(folder)
    if not os.path.lexists(folder):
        os.mkdir(folder, 0o755)


def _put(path: str, data: bytes | None, view: str, sig: list[int] | None,
         stop: str) -> None:
    """Make ``path`` hold ``data`` (None: not exist; for a host's state file, none of what
    counts of it), never writing through a link."""
    if data is None and watched.host_state(view) and os.path.isfile(path) \
            and not os.path.islink(path):
        data = watched.merged(watched.read(path), None, view)
    if data is None:
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
            os.unlink(path)
        return
    _real_folder(os.path.dirname(path), stop)
    if os.path.islink(path):
        os.unlink(path)
    if view == "link" and data.startswith(b"link:"):
        os.symlink(os.fsdecode(data[len(b"link:"):]), path)
        return
    paths.write_private(path, watched.merged(watched.read(path), data, view) or data)
    if sig is not None and sig[4] > 0:
        os.chmod(path, sig[4] & 0o7777)


def _stop(manifest: dict[str, Any], path: str) -> str:
    """The folder above which :func:`_put` never changes anything: the project, or the
    file's own folder for the user's files."""
    project = manifest.get("project")
    return project if isinstance(project, str) and path.startswith(project + os.sep) \
        else os.path.dirname(path)


# ------------------------------------------------------------------ settling


class _Changes:
    """What one scope's settle found: adopted paths, violations, journal entries."""

    def __init__(self) -> None:
        self.host: list[dict[str, Any]] = []
        self.adopted: list[dict[str, Any]] = []
        self.violations: list[dict[str, Any]] = []


def _current_files(manifest: dict[str, Any]) -> dict[str, str]:
    """Every path to compare: the recorded files, and what a changed tree holds now."""
    files = {p: rec.get("view", "bytes") for p, rec in manifest.get("files", {}).items()}
    dirs = manifest.get("dirs", {})
    if any(tripwire.signature(d) != sig for d, sig in dirs.items()):
        for tree in manifest.get("trees", []):
            _, inside = watched.walk(tree)
            for f in inside:
                files.setdefault(f, watched.view_of(f, "bytes"))
    return files


def _preceding(log: str | None) -> dict[str, Any] | None:
    """The last tool call the journal shows (its intent), if any."""
    if log is None or not os.path.isfile(log):
        return None
    last = None
    for rec in journal.iter_records(log):
        if journal.kind_of(rec) == "side_effect_intent":
            last = rec
    if last is None:
        return None
    body = journal.body_of(last)
    return {"sequence": last.get("sequence"), "tool_name": body.get("tool_name"),
            "tool_use_id": body.get("tool_use_id"),
            "policy_decision": body.get("policy_decision")}


def _change_name(before: str | None, after: str | None) -> str:
    if before is None:
        return "created"
    return "removed" if after is None else "modified"


def _violate(manifest: dict[str, Any], path: str, view: str, data: bytes | None,
             ctx: dict[str, Any]) -> dict[str, Any]:
    """Keep the changed bytes, put smllm's copy back, open the violation."""
    rec = manifest["files"].get(path) or {"sig": None, "sha": None, "view": view}
    after = _keep(data)
    error = None
    kept = copy_of(rec.get("sha"))
    try:
        if rec.get("sha") is not None and kept is None:
            raise OSError(f"smllm's copy {rec.get('sha')} is missing")
        _put(path, kept, view, rec.get("sig"), _stop(manifest, path))
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    if rec.get("sha") is None:
        manifest["files"].pop(path, None)
    else:
        manifest["files"][path] = {**rec, "sig": tripwire.signature(path)}
    return {"id": clock.new_id("tw-"), "path": path, "change": _change_name(rec.get("sha"),
                                                                             after),
            "before": rec.get("sha"), "after": after, "view": view,
            "restored": error is None, "error": error, "at_ms": clock.now_ms(),
            "observed_via": ctx["event"], "journal": ctx["log"],
            "preceding": ctx["preceding"]}


def _read_settled(path: str, view: str) -> bytes | None:
    """The bytes of ``path``; a JSON file that does not parse is read again a few times
    (:data:`SETTLE_READS`) in case the host is half-way through writing it. What still
    does not parse is returned as it is (a settings file Claude Code cannot parse turns
    every hook off: that is a change to restore)."""
    data = watched.read(path)
    for _ in range(SETTLE_READS):
        if watched.parses(data, view):
            break
        time.sleep(SETTLE_PAUSE_S)
        data = watched.read(path)
    return data


def _same_bytes(manifest: dict[str, Any], path: str, data: bytes | None,
                sig: list[int] | None) -> bool:
    """Are the bytes at ``path`` the recorded ones (a ``touch``, the same content
    rewritten)? Then the new signature is recorded."""
    rec = manifest["files"].get(path)
    if rec is not None and watched.sha(data) == rec.get("sha"):
        rec["sig"] = sig
        return True
    return False


def _settle_scope(manifest: dict[str, Any], adopt: bool, ctx: dict[str, Any]) -> _Changes:
    out = _Changes()
    for path, view in sorted(_current_files(manifest).items()):
        rec = manifest["files"].get(path)
        sig = tripwire.signature(path)
        if rec is not None and sig == rec.get("sig"):
            continue
        data = _read_settled(path, view)
        if not watched.parses(data, view) and watched.host_state(view):
            continue  # still being written: never restore over the host's own state file
        if _same_bytes(manifest, path, data, sig):
            continue
        digest = watched.sha(data)
        # a file never recorded was absent: its view then is the view of no file
        before_view = rec.get("vsha") if rec is not None else \
            watched.sha(watched.security_view(None, view))
        now_view = watched.sha(watched.security_view(data, view))
        change = {"path": path, "before": rec.get("sha") if rec else None, "after": digest}
        if before_view == now_view:  # nothing that counts changed (an empty .mcp.json made)
            manifest["files"][path] = _entry(path, view, data)
            if view == "settings":
                out.host.append(change)
            continue
        if adopt:
            if data is None:
                manifest["files"].pop(path, None)
            else:
                manifest["files"][path] = _entry(path, view, data)
            out.adopted.append(change)
            continue
        if ctx["preceding"] is False:
            ctx["preceding"] = _preceding(ctx["log"])
        out.violations.append(_violate(manifest, path, view, data, ctx))
    for tree in manifest.get("trees", []):  # folders as they are now (after any restore)
        for d in [d for d in manifest["dirs"] if d == tree or d.startswith(tree + os.sep)]:
            del manifest["dirs"][d]
        found, _ = watched.walk(tree)
        manifest["dirs"].update(found)
    return out


def _records(changes: _Changes, event: str) -> list[Entry]:
    entries = []
    if changes.host:
        entries.append(records.new("tripwire.adopted", paths=changes.host,
                                   reason="host-prompt-answer", observed_via=event))
    if changes.adopted:
        entries.append(records.new("tripwire.adopted", paths=changes.adopted,
                                   reason="between-sessions", observed_via=event))
    entries += [records.new("tripwire.violation", violation_id=v["id"], path=v["path"],
                            change=v["change"], restored=v["restored"], before=v["before"],
                            after=v["after"], observed_via=event, preceding=v["preceding"],
                            error=v["error"]) for v in changes.violations]
    return entries


def reason(open_: list[dict[str, Any]], damaged: list[str]) -> str | None:
    """Why every gated call is denied while violations are open (None: none is)."""
    if damaged:
        return ("smllm's tripwire cannot read its record of the protected files "
                f"({'; '.join(damaged)}), so every call is denied (fail closed); a person "
                "re-records them outside the session with `smllm tripwire accept`")
    if not open_:
        return None
    first = open_[0]
    call = first.get("preceding") or {}
    after = (f" after the {call.get('tool_name')} call {call.get('tool_use_id')}"
             if call else "")
    fate = ("smllm put its copy back" if first.get("restored")
            else f"smllm could not put its copy back ({first.get('error')})")
    more = f" (and {len(open_) - 1} more change(s))" if len(open_) > 1 else ""
    return (f"smllm's tripwire: {first['path']} was {first['change']} outside smllm{after}"
            f"{more}, and {fate}. Every tool call is denied until a person, outside this "
            "session, runs `smllm tripwire revert` (keep smllm's copy) or `smllm tripwire "
            "accept` (keep the change); `smllm doctor` shows it")


def settle(scopes: list[str], *, event: str, log: str | None,
           adopt: bool | frozenset[str] = False) -> tripwire.Watch:
    """Settle every change of ``scopes`` (see the module's text); ``adopt``: True, or the
    scopes whose changes are a person's edits between sessions."""
    entries: list[Entry] = []
    open_: list[dict[str, Any]] = []
    damaged: list[str] = []
    ctx: dict[str, Any] = {"event": event, "log": log, "preceding": False}
    with _lock():
        for scope in scopes:
            manifest = tripwire.read_manifest(scope)
            if manifest is None:
                continue
            if "damaged" in manifest:
                damaged.append(str(manifest["damaged"]))
                continue
            if tripwire.changed(manifest):
                changes = _settle_scope(manifest, adopt is True or (
                    not isinstance(adopt, bool) and scope in adopt), ctx)
                manifest["open"] = [*manifest.get("open", []), *changes.violations]
                _save(manifest)
                entries += _records(changes, event)
            open_ += manifest.get("open", [])
    return tripwire.Watch(entries, reason(open_, damaged))


# ------------------------------------------------------------------ sessions


def _live_folder() -> str:
    return _folder("live")


def _others_live(session_id: str, project: str | None) -> tuple[bool, bool]:
    """Is another session live: ``(of this project, of any project)``; stale entries
    (no journal write for :data:`LIVE_WINDOW_S`) are dropped."""
    folder = _live_folder()
    same = anywhere = False
    now = time.time()
    for name in os.listdir(folder):
        if name == session_id:
            continue
        entry = os.path.join(folder, name)
        try:
            fd = paths.open_regular(entry, os.O_RDONLY)
            try:
                info = jsonfast.loads(os.read(fd, 1 << 16))
            finally:
                os.close(fd)
            log = str(info.get("log") or "")
            fresh = now - os.stat(log).st_mtime < LIVE_WINDOW_S
        except (OSError, ValueError, AttributeError):
            fresh = False
        if not fresh:
            with contextlib.suppress(OSError):
                os.unlink(entry)
            continue
        anywhere = True
        same = same or info.get("project") == project
    return same, anywhere


def before_any_call(log: str | None) -> bool:
    """Has the session of ``log`` made no tool call yet (its agent has not acted)?"""
    return log is not None and _preceding(log) is None


def adoptable(session_id: str, project: str | None) -> frozenset[str]:
    """The scopes whose changes a clean SessionStart of ``session_id`` adopts as a person's
    edits between sessions: the project's when no other session of it is live, the
    user's when no other session at all is."""
    same, anywhere = _others_live(session_id, project)
    adopt = set()
    if not anywhere:
        adopt.add(tripwire.USER)
    if not same and project is not None:
        adopt.add(tripwire.scope_of(project))
    return frozenset(adopt)


# ------------------------------------------------------------------ a person's answer


def open_violations(project: str) -> list[dict[str, Any]]:
    """The violations still open for ``project`` (its scope and the user's)."""
    out = []
    for scope in tripwire.scopes(os.path.abspath(project)):
        manifest = tripwire.read_manifest(scope)
        if manifest is not None:
            out += manifest.get("open", [])
    return out


def resolve(project: str, how: str, ids: list[str] | None = None) -> list[dict[str, Any]]:
    """A person's answer: ``accept`` puts the changed bytes back and records them as the
    baseline; ``revert`` keeps (or puts back) smllm's copy. Each violation resolved is
    journaled (``tripwire.resolved``) in the journal where it was found. A damaged manifest
    is re-recorded by ``accept``. The violations resolved."""
    project = os.path.abspath(project)
    done: list[dict[str, Any]] = []
    with _lock():
        for scope in tripwire.scopes(project):
            manifest = tripwire.read_manifest(scope)
            if manifest is None:
                continue
            if "damaged" in manifest:
                if how == "accept":  # which hosts it was armed for is lost: all of them
                    _save(_build(scope, None if scope == tripwire.USER else project, [],
                                 ["claude", *watched.HOSTS]))
                    done.append({"id": None, "path": tripwire.manifest_path(scope),
                                 "change": "damaged", "journal": None})
                continue
            keep = []
            for v in manifest.get("open", []):
                if ids and v["id"] not in ids:
                    keep.append(v)
                    continue
                _answer(manifest, v, how)
                done.append(v)
            manifest["open"] = keep
            _save(manifest)
    resolution = "accepted" if how == "accept" else "reverted"
    for v in done:
        if v.get("journal") and os.path.isfile(v["journal"]):
            journal.append(v["journal"], [records.new(
                "tripwire.resolved", violation_id=v["id"], path=v["path"],
                resolution=resolution, by="person",
                kept=v["after"] if how == "accept" else v["before"])])
    return done


def _answer(manifest: dict[str, Any], v: dict[str, Any], how: str) -> None:
    path, view = v["path"], v.get("view", "bytes")
    digest = v["after"] if how == "accept" else v["before"]
    data = copy_of(digest)
    if digest is not None and data is None:
        raise OSError(f"smllm's copy {digest} of {path} is missing")
    current = watched.read(path)
    if watched.sha(current) != digest:
        _put(path, data, view, (manifest["files"].get(path) or {}).get("sig"),
             _stop(manifest, path))
    if data is None:
        manifest["files"].pop(path, None)
    else:
        manifest["files"][path] = _entry(path, view, data)
    for tree in manifest.get("trees", []):
        found, _ = watched.walk(tree)
        manifest["dirs"].update(found)
