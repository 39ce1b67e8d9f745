"""The team store: every journal shipped to PostgreSQL (psycopg 3, the ``team`` extra).

* :mod:`~smllm.store.address`    where the store is (``--store``/``--to``,
  ``SMLLM_STORE_URL``, ``[store] url``) and the rule that no password rides in argv
* :mod:`~smllm.store.connection` opening it, with a clear error when psycopg is missing
* :mod:`~smllm.store.schema`     versioned migrations, the writer and auditor roles, RLS
* :mod:`~smllm.store.shipper`    ``smllm ship``: COPY into staging, insert the new rows,
  report conflicts, a cursor per journal
* :mod:`~smllm.store.trigger`    what SessionEnd and Stop call: start a detached shipper
  (hot path: standard library only)
* :mod:`~smllm.store.reader`     ``sessions``/``search`` with the index's
  :class:`~smllm.index.Filters`
* :mod:`~smllm.store.audit`      ``verify --store``: the hash chain from the stored rows

This module itself only answers :func:`configured` (hot path: Stop and SessionEnd ask it
on every call, and load :mod:`~smllm.store.trigger` only when a store is configured).
"""

from __future__ import annotations

from smllm.base import osfast as os
from smllm.base import paths

ENV_URL = "SMLLM_STORE_URL"
_READ_LIMIT = 256 * 1024


def configured() -> bool:
    """A store URL is in the environment, or the user config has a ``[store]`` table
    (the shipper reads it properly; this only looks)."""
    if os.environ.get(ENV_URL, "").strip():
        return True
    try:
        fd = os.open(paths.user_config_file(), os.O_RDONLY)
    except OSError:
        return False
    try:
        return b"[store]" in os.read(fd, _READ_LIMIT)
    finally:
        os.close(fd)
