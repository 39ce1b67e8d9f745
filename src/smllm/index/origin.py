"""Who and where a session ran: this machine's name, the OS user, the project's remote.

The team store records them with every session it receives; the embedded index
reports them for local rows. ``SMLLM_STORE_HOST`` (or ``[store] host`` in the user
config) names the machine when its hostname says nothing (a CI runner's container).
"""

from __future__ import annotations

import os
from functools import cache

from smllm import VERSION


@cache
def host() -> str:
    """This machine's name in the store."""
    named = os.environ.get("SMLLM_STORE_HOST", "").strip()
    if named:
        return named
    import socket  # noqa: PLC0415 - a few milliseconds, only when asked

    from smllm.store import address  # noqa: PLC0415 - the user config, read once

    return address.configured_host() or socket.gethostname()


@cache
def user() -> str:
    """The OS user (``LOGNAME``/``USER``, else the password database)."""
    import getpass  # noqa: PLC0415 - a new journal's origin only

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def version() -> str:
    return VERSION


def strip_credentials(url: str) -> str:
    """A URL without a user's password or token (``https://tok@host/x`` -> ``https://host/x``)."""
    from urllib.parse import urlsplit, urlunsplit  # noqa: PLC0415 - a git remote only

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None and "@" not in parts.netloc:
        return url
    hostport = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))


@cache
def git_remote(folder: str | None) -> str | None:
    """``remote.origin.url`` of the repository at ``folder`` (credentials removed)."""
    if not folder or not os.path.isdir(folder):
        return None
    import subprocess  # noqa: PLC0415 - git: a new journal's origin only

    try:
        proc = subprocess.run(["git", "-C", folder, "config", "--get", "remote.origin.url"],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    url = proc.stdout.strip()
    return strip_credentials(url) if proc.returncode == 0 and url else None
