"""The export document as typed models, and its JSON Schema (``smllm export --schema``).

:mod:`smllm.audit.export` writes the document by streaming, without these models (an
export of a long session must not be held in memory); the models describe exactly what
it writes, so third-party tools can validate an export and generate readers from the
schema, and the tests validate real exports against it. An envelope keeps the fields
of the journal line it copies (``extra`` allowed: a record may carry fields a later
version adds, such as ``skipped``); the payload is the record's own, described by the
record kinds of ``docs/concepts/journal.md``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from smllm.audit.export import SCHEMA_VERSION

SCHEMA_ID = f"urn:smllm:export:{SCHEMA_VERSION}"
Sha256 = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
Timestamp = Annotated[str, Field(description="RFC 3339, UTC, milliseconds: "
                                             "2026-08-02T10:15:09.400Z")]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Build(BaseModel):
    """Which smllm wrote something: ``{"display": "smllm 0.1.0", "smllm": "0.1.0"}``."""

    model_config = ConfigDict(extra="allow")
    display: str
    smllm: str | None = None


class SessionEnd(_Closed):
    exit_reason: str | None
    uptime_ms: int | None


class StreamSummary(_Closed):
    """One log of the session: the main log, or a subagent's."""

    stream: str = Field(description='"main", or "subagent/<agent id>"')
    log: str = Field(description="the log's path relative to the session folder")
    session_id: str | None
    agent_id: str | None
    lines: int = Field(ge=0, description="physical lines, records or not")
    records: int = Field(ge=0)
    turn_count: int = Field(ge=0)
    step_count: int = Field(ge=0)
    first_recorded_at: Timestamp | None
    last_recorded_at: Timestamp | None
    session_end: SessionEnd | None = Field(description="the last orderly end, if any")
    bytes: int = Field(ge=0, description="the log's size when the export began")
    sha256: Sha256 = Field(description="of those bytes")
    harness: str | None = Field(None, description="the agent CLI (codex, copilot, …); "
                                                  "absent: Claude Code")


class Diagnostics(_Closed):
    """Tolerance counters: what the reader met that is not a plain record."""

    unparseable_lines: int = Field(ge=0)
    unknown_payload_kinds: int = Field(ge=0)
    gaps: int = Field(ge=0, description="sequence_gaps + omitted_live_only")
    omitted_live_only: int = Field(ge=0)
    duplicate_records: int = Field(ge=0)
    torn_lines: int = Field(ge=0)
    sequence_gaps: int = Field(ge=0)


class Envelope(BaseModel):
    """One journal line, as written by the journal (product.md §5)."""

    model_config = ConfigDict(extra="allow")
    sequence: int = Field(ge=1)
    recorded_at: Timestamp
    record_type: Literal["event", "fact"]
    durability: Literal["durable", "live_only"]
    payload_type: str | None = Field(description="a fact's kind; null for an event")
    payload: dict[str, Any] = Field(
        description='{"event": {"kind": ..., ...}} or {"kind": ..., "record": {...}}')
    id: str
    causation_id: str | None
    v: int
    prev: Sha256
    hash: Sha256


class RecordEvent(_Closed):
    kind: Literal["record"]
    stream: str
    line: int = Field(ge=1)
    envelope: Envelope


class RawEvent(_Closed):
    """A line that is not a record: not JSON (``unparseable``), or cut short (``torn``)."""

    kind: Literal["unparseable", "torn"]
    stream: str
    line: int = Field(ge=1)
    raw: str


Event = Annotated[RecordEvent | RawEvent, Field(discriminator="kind")]


class ExportDocument(_Closed):
    """One session's journal, byte-deterministic (``smllm export``)."""

    model_config = ConfigDict(extra="forbid", title="smllm export")
    export_schema_version: Literal[1]
    redaction: Literal["raw", "redacted"]
    exporter_version: Build
    session_build: Build | None
    session_terminated_abnormally: bool = Field(
        description="false only when the main log's last end is an orderly `clean` one")
    sessions: list[StreamSummary] = Field(min_length=1)
    diagnostics: Diagnostics
    events: list[Event] = Field(description="one element per physical line, in log order, "
                                            "the main log first, then each subagent's")


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the export document."""
    out = ExportDocument.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            **out}


def schema_text() -> str:
    """What ``smllm export --schema`` prints."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"
