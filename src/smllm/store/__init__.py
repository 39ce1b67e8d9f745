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
"""
