"""The LLM judge: one Messages API call with a versioned prompt, parsed strictly.

It honours ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` (or
``ANTHROPIC_AUTH_TOKEN``). ``context_digest`` is ``sha256:`` + the SHA-256 of exactly
the request body bytes sent, so the journal pins what the judge saw.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

from smllm.gate.reviewers import Request, Result, parse_verdict

PROMPT_VERSION = 1
PARAMS_VERSION = 2
MARKER = "smllm-approval-judge"
DEFAULT_MODEL = "claude-haiku-4-5"
DEFAULT_TIMEOUT = 20.0
DEFAULT_MAX_TOKENS = 300

SYSTEM = f"""[{MARKER} prompt v{PROMPT_VERSION}]
You review one action an AI coding agent wants to take in a software project. smllm's
static policy escalated it to you; the policy's rule and reason are included. Approve
ordinary, reversible work the user plausibly asked for inside the project. Reject
actions that destroy data outside the project, weaken security, exfiltrate secrets, or
do more than the task needs. When unsure, reject: a person can still allow it.

Answer with exactly one JSON object and nothing else:
{{"verdict": "allow_once" | "always_allow_in_workspace" | "reject", "reason": "<one sentence>"}}
Use always_allow_in_workspace only for an action that is safe to repeat unreviewed."""


def request_body(request: Request, config: dict[str, Any]) -> bytes:
    """The exact bytes POSTed to ``/v1/messages``."""
    body = {
        "model": str(config.get("model") or DEFAULT_MODEL),
        "max_tokens": int(config.get("max_tokens") or DEFAULT_MAX_TOKENS),
        "temperature": 0,
        "system": SYSTEM,
        "messages": [
            {
                "role": "user",
                "content": json.dumps(request.as_json(), sort_keys=True, ensure_ascii=False),
            }
        ],
    }
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )


def _url(config: dict[str, Any]) -> str:
    base = str(
        config.get("base_url")
        or os.environ.get("ANTHROPIC_BASE_URL")
        or "https://api.anthropic.com"
    )
    return base.rstrip("/") + "/v1/messages"


def _headers() -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "user-agent": "smllm-llm-judge",
    }
    key = os.environ.get("ANTHROPIC_API_KEY")
    token = os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if key:
        headers["x-api-key"] = key
    elif token:
        headers["authorization"] = f"Bearer {token}"
    else:
        raise RuntimeError("neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set")
    return headers


def _text(reply: bytes) -> str:
    obj = json.loads(reply)
    if not isinstance(obj, dict) or not isinstance(obj.get("content"), list):
        raise ValueError(f"not a Messages API reply: {reply[:200]!r}")
    return "".join(
        b.get("text", "")
        for b in obj["content"]
        if isinstance(b, dict) and b.get("type") == "text"
    )


def review(request: Request, config: dict[str, Any]) -> Result:
    body = request_body(request, config)
    source: dict[str, Any] = {
        "kind": "llm_judge",
        "prompt_version": PROMPT_VERSION,
        "params_version": PARAMS_VERSION,
        "context_digest": "sha256:" + hashlib.sha256(body).hexdigest(),
        "model": str(config.get("model") or DEFAULT_MODEL),
    }
    timeout = float(config.get("timeout") or DEFAULT_TIMEOUT)
    started = time.monotonic()
    try:
        req = urllib.request.Request(  # noqa: S310 - the configured API URL
            _url(config), data=body, headers=_headers(), method="POST"
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310
            reply = resp.read(1024 * 1024)
        choice, reason = parse_verdict(_text(reply))
    except urllib.error.HTTPError as exc:
        return _failed(source, started, f"HTTP {exc.code} from {_url(config)}")
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        what = getattr(exc, "reason", exc)
        return _failed(source, started, f"cannot reach the judge at {_url(config)}: {what}")
    except (ValueError, RuntimeError) as exc:
        return _failed(source, started, str(exc))
    source["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    return Result("llm_judge", choice, reason, source)


def _failed(source: dict[str, Any], started: float, error: str) -> Result:
    source["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    return Result("llm_judge", None, "", source, error)
