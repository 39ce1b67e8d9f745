"""The journal: one append-only, hash-chained JSON Lines log per host session.

``codec`` is the line format and its readers, ``folders`` where logs live, ``log`` the
appending transaction (all re-exported here: ``journal.event``, ``journal.fact``,
``journal.transaction``, ...); ``records`` is the registry of record kinds every writer
builds its records with (``records.new(kind, **fields)``); ``sidecar`` keeps the
per-session counters beside the log; ``transcript`` ingests Claude Code's transcript;
``verify`` checks the hash chain; ``lookup`` finds sessions; ``recovery`` and
``reconcile`` deal with effects left in flight.
"""

from smllm.journal.codec import (
    GENESIS,
    LINE_LIMIT,
    SCHEMA_VERSION,
    STRING_LIMIT,
    Entry,
    Line,
    Written,
    body_of,
    encode_record,
    event,
    fact,
    iter_lines,
    iter_records,
    kind_of,
    line_hash,
    new_record_id,
    omit_large,
    parse_line,
)
from smllm.journal.folders import (
    LOG_NAME,
    STATE_NAME,
    locate,
    log_path,
    project_key,
    session_dir,
    session_folder,
    stream_agent,
)
from smllm.journal.log import (
    HEAD_NAME,
    TAIL_MISSING,
    Tail,
    Transaction,
    append,
    read_head,
    read_state,
    read_tail,
    transaction,
    write_head,
)

__all__ = [
    "GENESIS",
    "HEAD_NAME",
    "LINE_LIMIT",
    "LOG_NAME",
    "SCHEMA_VERSION",
    "STATE_NAME",
    "STRING_LIMIT",
    "TAIL_MISSING",
    "Entry",
    "Line",
    "Tail",
    "Transaction",
    "Written",
    "append",
    "body_of",
    "encode_record",
    "event",
    "fact",
    "iter_lines",
    "iter_records",
    "kind_of",
    "line_hash",
    "locate",
    "log_path",
    "new_record_id",
    "omit_large",
    "parse_line",
    "project_key",
    "read_head",
    "read_state",
    "read_tail",
    "session_dir",
    "session_folder",
    "stream_agent",
    "transaction",
    "write_head",
]
