"""Where journals live: one folder per host session under the data folder's
``sessions/YYYY/MM/DD/``, found again through a ``by-id`` index, one per project when a
session id is reused (:func:`locate`, :func:`session_folder`)."""

from __future__ import annotations

from smllm.base import clock, paths
from smllm.base import osfast as os
from smllm.base.digest import sha256_hex as digest_hex
from smllm.base.errors_hot import InvalidSessionId, JournalError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Literal


    Durability = Literal["durable", "live_only"]
    LineStatus = Literal["record", "unparseable", "torn"]
    StrPath = str | os.PathLike[str]
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
LOG_NAME = "session.jsonl"
STATE_NAME = "state.json"

# --------------------------------------------------------------------- locating


def _date_path(ms: int) -> str:
    iso = clock.iso_utc(ms)
    return f"{iso[0:4]}/{iso[5:7]}/{iso[8:10]}"


def _read_entry(index: str) -> tuple[str, str | None]:
    """A ``by-id`` entry: the dated folder (``YYYY/MM/DD``) and the project key, if any."""
    fd = paths.open_regular(index, os.O_RDONLY)
    try:
        data = os.read(fd, 256)
    finally:
        os.close(fd)
    text = data.decode("ascii", "replace").strip()
    rel, _, key = text.partition(" ")
    ok = (len(rel) == 10 and rel[4] == rel[7] == "/"
          and (rel[0:4] + rel[5:7] + rel[8:10]).isdigit()
          and (not key or (len(key) == 16 and all(c in "0123456789abcdef" for c in key))))
    if not ok:
        raise JournalError(
            f"store index entry {index} does not name a dated folder ({text[:40]!r})",
            "smllm writes YYYY/MM/DD there; remove the entry if nobody needs that journal")
    return rel, key or None


def project_key(project: str | None) -> str | None:
    """What tells two projects apart in the store: a digest of the project folder."""
    if not project:
        return None
    return digest_hex(os.path.abspath(project).encode("utf-8", "surrogatepass"))[:16]


def _journal_id(sid: str, key: str) -> str:
    """The store id of a session id reused by another project."""
    return f"{sid[:100]}.{key[:12]}"


def session_folder(host_session_id: str, *, create: bool = False,
                   now_ms: int | None = None, project: str | None = None) -> str:
    """``sessions/YYYY/MM/DD/<id>`` of a host session (dated by its first record).

    ``project`` (the project folder) keeps one journal per project when another
    project's session reuses the id: its journal lives under ``<id>.<project digest>``.
    Every path is checked: no link, no folder of someone else's, nothing outside the store.
    """
    sid = paths.check_id(host_session_id)
    key = project_key(project)
    root = paths.data_root()
    sessions = paths.check_store_path(root, "sessions", "by-id")
    sessions = os.path.dirname(sessions)
    entry = _entry_of(sessions, sid)
    if entry is not None and not (key is None or entry[1] is None or entry[1] == key):
        sid = _journal_id(sid, key)  # the id is another project's: ours is beside it
        entry = _entry_of(sessions, sid)
    if entry is not None:
        return paths.check_store_path(root, "sessions", *entry[0].split("/"), sid, checked=2)
    if not create:
        raise FileNotFoundError(os.path.join(sessions, "by-id", sid))
    index = os.path.join(sessions, "by-id", sid)
    paths.ensure_private_tree(os.path.dirname(index), root)
    rel = _date_path(clock.now_ms() if now_ms is None else now_ms)
    try:
        fd = os.open(index, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except FileExistsError:
        rel = _read_entry(index)[0]
    else:
        try:
            os.write(fd, (rel + (f" {key}" if key else "")).encode() + b"\n")
        finally:
            os.close(fd)
    folder = paths.check_store_path(root, "sessions", *rel.split("/"), sid)
    paths.ensure_private_tree(folder, root)
    return folder


def _entry_of(sessions: str, sid: str) -> tuple[str, str | None] | None:
    try:
        return _read_entry(os.path.join(sessions, "by-id", sid))
    except FileNotFoundError:
        return None


def locate(host_session_id: str, *, agent_id: str | None = None, create: bool = False,
           project: str | None = None) -> str:
    """The log of a host session (or of one of its subagents), as a ``str``."""
    folder = session_folder(host_session_id, create=create, project=project)
    if agent_id is not None:
        folder = os.path.join(folder, "subagent", paths.check_id(agent_id, "agent id"))
        if create:
            paths.ensure_private_tree(folder, paths.data_root())
    return os.path.join(folder, LOG_NAME)


def stream_agent(stream: str) -> str | None:
    """The agent id a stream name (``main``, or ``subagent/<agent id>``, as export, the
    index and the team store name a session's logs) names: None for ``main``. A name from
    outside (a stored row) that is neither raises :class:`InvalidSessionId`."""
    if stream == "main":
        return None
    prefix, _, agent = stream.partition("/")
    if prefix != "subagent":
        raise InvalidSessionId(f"not a stream name: {stream!r} (main or subagent/<agent id>)",
                               "a log stream is main or subagent/<agent id>")
    return paths.check_id(agent, "agent id")


def session_dir(host_session_id: str, *, create: bool = False) -> Path:
    from pathlib import Path  # noqa: PLC0415 - for commands; hooks use the str API

    return Path(session_folder(host_session_id, create=create))


def log_path(host_session_id: str, *, agent_id: str | None = None, create: bool = False) -> Path:
    """Like :func:`locate`, as a ``pathlib.Path`` (for commands, not the hot path)."""
    from pathlib import Path  # noqa: PLC0415 - for commands; hooks use the str API

    return Path(locate(host_session_id, agent_id=agent_id, create=create))


