"""Reading a hook's input and the context every handler shares."""

from __future__ import annotations

from smllm import journal
from smllm.base import clock, jsonfast, paths
from smllm.base import osfast as os
from smllm.base.errors_hot import InvalidSessionId, SmllmError
from smllm.journal import transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from smllm.base.catalogue import ToolCall



class HookInputError(SmllmError):
    """The hook's stdin is not what Claude Code sends."""


def _require(payload: dict[str, Any], key: str, kind: type[object], event: str) -> None:
    if key not in payload:
        raise HookInputError(f"{event} input has no {key!r} field", "is this Claude Code calling?")
    if not isinstance(payload[key], kind):
        raise HookInputError(
            f"{event} input field {key!r} is {type(payload[key]).__name__}, "
            f"expected {kind.__name__}"
        )


def _check_ids(payload: dict[str, Any], event: str) -> None:
    _require(payload, "session_id", str, event)
    try:
        paths.check_id(payload["session_id"])
        if "agent_id" in payload:
            _require(payload, "agent_id", str, event)
            paths.check_id(payload["agent_id"], "agent id")
    except InvalidSessionId as exc:
        raise HookInputError(exc.what, exc.fix) from None


def parse_input(event: str, raw: bytes, *, tool_event: bool,
                harness: str = "claude") -> dict[str, Any]:
    """Decode and check one hook input; raise :class:`HookInputError` if malformed.

    A ``tool_event`` (PreToolUse, PostToolUse, …: see ``smllm.hooks.TABLE``) must name its
    tool and give its input, and its call's id (Gemini CLI gives none:
    :mod:`smllm.harness.gemini` names the call). Copilot's native camelCase payload is
    shaped first (:func:`smllm.harness.copilot.payload`). Gemini's ``hook_event_name`` is
    its own name of the event (``BeforeTool`` for PreToolUse: ``smllm.hooks.HOST_EVENTS``)."""
    from smllm.hooks import HOST_EVENTS  # noqa: PLC0415 - loaded already (it loads this)

    host_event = (HOST_EVENTS.get(harness) or {}).get(event)
    call_ids = harness != "gemini"
    if not raw.strip():
        raise HookInputError("hook input is empty", "the hook expects one JSON object on stdin")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HookInputError(f"hook input is not valid UTF-8 (byte {exc.start})") from None
    try:
        payload = jsonfast.loads(text)
    except (ValueError, RecursionError) as exc:
        raise HookInputError(f"hook input is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"hook input is a JSON {type(payload).__name__}, not an object")
    if harness == "copilot":
        payload = _copilot_shaped(event, payload)
    _check_ids(payload, event)
    name = payload.get("hook_event_name")
    if name is not None and name not in (event, host_event):
        raise HookInputError(
            f"hook input is for {name!r} but this hook handles {event!r}",
            "check the event name in the hook's command line",
        )
    if tool_event:
        _require(payload, "tool_name", str, event)
        _require(payload, "tool_input", dict, event)
        if event != "PermissionRequest" and call_ids:
            _require(payload, "tool_use_id", str, event)
    for key in ("cwd", "transcript_path", "permission_mode", "source", "prompt"):
        if key in payload and payload[key] is not None and not isinstance(payload[key], str):
            raise HookInputError(
                f"{event} input field {key!r} is {type(payload[key]).__name__}, expected str"
            )
    checked: dict[str, Any] = payload
    return checked


def _copilot_shaped(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Copilot's native payload in the shared shape, its transcript path added and, for a
    tool event, the id Copilot gave the call found in that transcript."""
    from smllm.harness import copilot  # noqa: PLC0415 - Copilot's hooks only

    sid = payload.get("sessionId")
    events = copilot.events_path(sid) if isinstance(sid, str) and paths.is_safe_id(sid) \
        else None

    def find(ev: str, p: dict[str, Any], _at: object) -> str | None:
        if events is None or not isinstance(p.get("tool_name"), str):
            return None
        from smllm.harness import copilot_events  # noqa: PLC0415 - tool events only

        def claimed() -> set[str]:  # a parallel batch of identical calls only
            agent = p.get("agent_id")
            log = journal.locate(str(sid), agent_id=agent if isinstance(agent, str) else None,
                                 project=paths.project_root(str(p.get("cwd") or ""), {}))
            return set(journal.read_state(log).get("open_intents") or {})

        return copilot_events.call_id(events, p["tool_name"], p.get("tool_input"),
                                      pre=ev == "PreToolUse", claimed=claimed)

    out: dict[str, Any] = copilot.payload(event, payload, find)
    if events is not None and not isinstance(out.get("transcript_path"), str):
        out["transcript_path"] = events
    return out


def salvage_session_id(raw: bytes) -> str | None:
    """A valid session id found in input that failed to parse, if any."""
    import re  # noqa: PLC0415 - only for rejected input

    m = re.search(rb'"session_id"\s*:\s*"([A-Za-z0-9._-]{1,128})"', raw[:65536])
    if m is None:
        return None
    sid = m.group(1).decode()
    return sid if paths.is_safe_id(sid) else None


def safe_transcript(value: object) -> str | None:
    """The transcript path from input, if it is a plain absolute ``.jsonl`` path."""
    if not isinstance(value, str) or not value.endswith(".jsonl") or "\x00" in value:
        return None
    if not os.path.isabs(value) or ".." in value.replace("\\", "/").split("/"):
        return None
    return value


class HookContext:
    """What a handler knows: the event, its input, the clock and its journal."""

    def __init__(self, event: str, payload: dict[str, Any], *, session_id: str,
                 agent_id: str | None, now_ms: int, env: Mapping[str, str] | None = None,
                 harness: str = "claude") -> None:
        self.event = event
        self.payload = payload
        self.session_id = session_id
        self.agent_id = agent_id
        self.now_ms = now_ms
        self.harness = harness
        if env is None:
            env = os.environ
            if harness != "claude":  # another host's hooks: a Claude Code folder is not theirs
                env = {k: v for k, v in env.items() if k != "CLAUDE_PROJECT_DIR"}
                if harness == "gemini" and env.get("GEMINI_PROJECT_DIR"):
                    # Gemini CLI declares the project for each hook it runs: read it as that
                    env["CLAUDE_PROJECT_DIR"] = env["GEMINI_PROJECT_DIR"]
        self.env: Mapping[str, str] = env
        self._main_log: str | None = None
        #: why gated calls are denied: a tripwire violation is open (smllm.tripwire)
        self.tripped: str | None = None
        #: a gating call is denied with this reason whatever the gate says: the native
        #: client found a listener that is not smllm's worker (smllm.hooks.main)
        self.refusal: str | None = None

    @classmethod
    def create(cls, event: str, payload: dict[str, Any], harness: str = "claude") -> HookContext:
        agent = payload.get("agent_id")
        return cls(
            event=event,
            payload=payload,
            session_id=payload["session_id"],
            agent_id=agent if isinstance(agent, str) else None,
            now_ms=clock.now_ms(),
            harness=harness,
        )

    @property
    def project(self) -> str | None:
        """The project folder Claude Code runs in (``CLAUDE_PROJECT_DIR``), if it says; for
        Codex and Copilot, whose hooks are not read for a declared folder, the project its
        ``cwd`` is in; Gemini CLI's ``GEMINI_PROJECT_DIR`` (set as that in :attr:`env`)."""
        if self.harness in ("codex", "copilot"):
            return paths.project_root(self.cwd, {})
        return paths.declared_project(self.env)

    @property
    def log_path(self) -> str:
        """The journal this event belongs to (a subagent's own, inside a subagent)."""
        if self.agent_id is None:
            return self.main_log_path
        return journal.locate(self.session_id, agent_id=self.agent_id, create=True,
                              project=self.project)

    @property
    def main_log_path(self) -> str:
        """The session's own journal (one per project, even when a session id is reused)."""
        path = self._main_log
        if path is None:
            path = self._main_log = journal.locate(self.session_id, create=True,
                                                   project=self.project)
        return path

    @property
    def cwd(self) -> str:
        cwd = self.payload.get("cwd")
        return cwd if isinstance(cwd, str) and cwd else os.getcwd()

    @property
    def call(self) -> ToolCall:
        """The tool call a tool event asks for, as its host's adapter reads it."""
        if self.harness == "codex":
            from smllm.harness import codex  # noqa: PLC0415 - Codex's hooks only

            return codex.tool_call(self.payload, self.env)
        if self.harness == "copilot":
            from smllm.harness import copilot  # noqa: PLC0415 - Copilot's hooks only

            return copilot.tool_call(self.payload, self.env)
        if self.harness == "gemini":
            from smllm.harness import gemini  # noqa: PLC0415 - Gemini CLI's hooks only

            return gemini.tool_call(self.payload, self.env)
        from smllm.harness import claude  # noqa: PLC0415 - tool events only

        return claude.tool_call(self.payload, self.env)

    @property
    def transcript(self) -> str | None:
        """Claude Code's transcript; None for Codex, Copilot and Gemini CLI (their files
        have other formats, read by their own readers, and no reader of them may wait for a
        tool use it would never show)."""
        if self.harness != "claude":
            return None
        return safe_transcript(self.payload.get("transcript_path"))

    def transaction(self, *, main: bool = False) -> journal.transaction:
        """The journal's lock, taken after reading the transcript (never while holding it)."""
        path = self.main_log_path if main else self.log_path
        # PreToolUse of the main agent: the transcript should show the tool use first (the
        # model call that chose it lands before its intent); a subagent's is elsewhere
        tool_use_id = self.payload.get("tool_use_id") if (
            self.event == "PreToolUse" and self.agent_id is None) else None
        transcript.prefetch(path, self.transcript,
                            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None)
        if self.agent_id is not None and not main and self.harness == "claude":
            transcript.prefetch(path, safe_transcript(self.payload.get("agent_transcript_path")))
        if self.harness == "codex":  # Codex's rollout gives the model calls
            from smllm.harness import codex_rollout  # noqa: PLC0415 - Codex's hooks only

            rollout = safe_transcript(self.payload.get("transcript_path"))
            from smllm import harness  # noqa: PLC0415 - loaded by the call already

            return harness.ingesting(  # type: ignore[return-value]
                journal.transaction(path, now_ms=self.now_ms),
                rollout if self.agent_id is None and path == self.main_log_path else None,
                codex_rollout.ingest)
        if self.harness == "copilot":  # Copilot's events.jsonl gives the model calls
            from smllm import harness  # noqa: PLC0415 - loaded by the call already
            from smllm.harness import copilot_events  # noqa: PLC0415 - Copilot's hooks only

            events = safe_transcript(self.payload.get("transcript_path"))
            if events is not None and self.event == "Stop" and self.agent_id is None:
                copilot_events.settle(events, dict(
                    journal.read_state(path).get("copilot_events") or {}))
            return harness.ingesting(  # type: ignore[return-value]
                journal.transaction(path, now_ms=self.now_ms),
                events if self.agent_id is None and path == self.main_log_path else None,
                copilot_events.ingest)
        if self.harness == "gemini":  # Gemini's chat file gives the model calls
            from smllm import harness  # noqa: PLC0415 - loaded by the call already
            from smllm.harness import gemini_chat  # noqa: PLC0415 - Gemini CLI's hooks only

            chat = safe_transcript(self.payload.get("transcript_path"))
            return harness.ingesting(  # type: ignore[return-value]
                journal.transaction(path, now_ms=self.now_ms),
                chat if self.agent_id is None and path == self.main_log_path else None,
                gemini_chat.ingesting_for(self.call.tool_use_id
                                          if self.event == "PreToolUse" else None))
        return journal.transaction(path, now_ms=self.now_ms)
