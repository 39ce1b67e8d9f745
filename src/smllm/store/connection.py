"""Opening the team store (psycopg 3), with errors a user can act on.

psycopg is the optional ``team`` extra: without it, every store command says how to
install it. Messages name the store with its password masked.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from smllm.base.errors import ConfigError, SmllmError, StoreError

if TYPE_CHECKING:
    import psycopg

APPLICATION = "smllm"


def require_psycopg() -> Any:
    """The psycopg module, or an error that says how to install it."""
    try:
        import psycopg  # noqa: PLC0415 - the team extra, to connect only
    except ImportError:
        raise SmllmError(
            "the team store needs psycopg 3, which is not installed",
            f"install smllm's team extra: {sys.executable} -m pip install 'smllm[team]'",
        ) from None
    return psycopg


def conninfo_dict(url: str) -> dict[str, Any]:
    """The libpq parameters of a URL or ``key=value`` string."""
    require_psycopg()
    from psycopg import conninfo  # noqa: PLC0415 - the team extra, to read a URL only

    try:
        return dict(conninfo.conninfo_to_dict(url))
    except Exception as exc:  # psycopg.ProgrammingError: not a libpq connection string
        raise ConfigError(
            "not a PostgreSQL connection URL",
            "use postgresql://USER@HOST/DB (or postgresql:///DB?host=/socket/dir)") from exc


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def connect(url: str, *, autocommit: bool = False, timeout: int = 10) -> psycopg.Connection[Any]:
    """An open connection to the store at ``url`` (``timeout``: seconds to connect)."""
    psycopg_mod = require_psycopg()
    from smllm.store.address import shown  # noqa: PLC0415 - address.py imports this module

    conninfo_dict(url)
    try:
        conn: psycopg.Connection[Any] = psycopg_mod.connect(
            url, autocommit=autocommit, application_name=APPLICATION, connect_timeout=timeout)
    except psycopg_mod.OperationalError as exc:
        raise StoreError(
            f"cannot reach the team store {shown(url)}: {first_line(exc)}",
            "check that the server runs, the URL, and the password in ~/.pgpass or PGPASSWORD",
        ) from None
    return conn
