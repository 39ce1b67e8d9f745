"""Where the team store is, and the rule that credentials never ride in argv.

The store URL comes from ``--store``/``--to``/``--url`` (no password allowed there: the
process list shows it to every user of the machine), else ``SMLLM_STORE_URL``, else
``[store] url`` in the user's ``config.toml`` (which must then be mode 0600 if the URL
holds a password). Passwords otherwise come from libpq's own sources: ``PGPASSWORD``,
``~/.pgpass``, ``PGSERVICEFILE``. ``sslmode`` and every other libpq parameter pass
through unchanged.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from smllm.base import paths
from smllm.base.errors import ConfigError, UsageError
from smllm.store import ENV_URL


def config_file() -> str:
    return paths.user_config_file()


def _store_table() -> dict[str, Any]:
    file = config_file()
    try:
        with open(file, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror}") from exc
    if "[store]" not in text:
        return {}
    from smllm.base import tomlread  # noqa: PLC0415 - tomllib: only when no URL is given

    try:
        doc = tomlread.loads(text)
    except tomlread.TOMLDecodeError as exc:
        raise ConfigError(f"{exc}", "fix the TOML syntax", where=file) from exc
    table = doc.get("store")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError("[store] must be a table", "write `[store]` then `url = \"...\"`",
                          where=file)
    unknown = sorted(set(table) - {"url", "host"})
    if unknown:
        raise ConfigError(f"unknown key(s) in [store]: {', '.join(unknown)}",
                          "use one of: url, host", where=file)
    for key in ("url", "host"):
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"[store] {key} must be a string", where=file)
    return table


def configured_host() -> str | None:
    """``[store] host``: this machine's name in the store, if the user chose one."""
    value = _store_table().get("host")
    return value.strip() or None if isinstance(value, str) else None


def has_password(url: str) -> bool:
    """Whether a libpq URL or ``key=value`` string carries a password."""
    from smllm.store.connection import conninfo_dict  # noqa: PLC0415 - psycopg: to read a URL only

    return bool(conninfo_dict(url).get("password"))


def configured_url() -> tuple[str, str] | None:
    """(URL, where it came from) of the configured store, or None."""
    env = os.environ.get(ENV_URL, "").strip()
    if env:
        return env, ENV_URL
    url = _store_table().get("url")
    if not url:
        return None
    file = config_file()
    mode = os.stat(file).st_mode
    if has_password(url) and stat.S_IMODE(mode) & 0o077:
        raise ConfigError(
            "[store] url holds a password but the file is readable by others",
            f"chmod 600 {file}, or move the password to ~/.pgpass", where=file)
    return url, file


def resolve(given: str | None, option: str) -> str:
    """The store URL to use: ``given`` (from ``option``) or the configured one."""
    if given:
        if has_password(given):
            raise UsageError(
                f"the {option} URL holds a password, which any user can read in the process "
                "list",
                f"remove it and use ~/.pgpass or PGPASSWORD, or put the URL in {ENV_URL} or "
                f"[store] url in {config_file()} (mode 0600)")
        return given
    found = configured_url()
    if found is None:
        raise ConfigError(
            "no team store is configured",
            f"pass {option} URL, set {ENV_URL}, or add [store] url = \"postgresql://...\" to "
            f"{config_file()}")
    return found[0]


def shown(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs)."""
    from smllm.store.connection import conninfo_dict  # noqa: PLC0415 - psycopg: to read a URL only

    try:
        params = conninfo_dict(url)
    except ConfigError:
        return "<unreadable store URL>"
    if not params.get("password"):
        return url
    params["password"] = "***"  # noqa: S105 - a mask, not a password
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()))
