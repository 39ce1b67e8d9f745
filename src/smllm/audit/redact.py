"""Redaction for share-safe exports (``smllm export --redacted``).

Every payload string goes through :func:`redact_text`: authorization headers,
secret-keyed assignments, PEM private keys, bearer and provider tokens, JWTs and
passwords in URLs are replaced by ``[REDACTED:<kind>]``. In structured payloads a
string whose *key* names a secret (``password``, ``api_key``, ``GITHUB_TOKEN``…) is
replaced whole (:func:`redact_value`).

Redaction only removes: it never adds content beyond the marker, and it is a pure
function of its input, so two redacted exports of one log are byte-identical.
Ordinary hex digests, UUIDs, git SHAs and base64 content are left alone.

>>> redact_text("curl -H 'Authorization: Bearer abc.def.ghi123456' https://x")
"curl -H 'Authorization: [REDACTED:authorization]' https://x"
>>> redact_text("postgres://app:s3cr3t-pw@db:5432/main")
'postgres://app:[REDACTED:url_password]@db:5432/main'
>>> redact_text("commit 3f786850e387550fdab836ed7e6dc881de23001b")
'commit 3f786850e387550fdab836ed7e6dc881de23001b'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MARK = "[REDACTED:{}]"

# Keys whose string value is a secret wherever they appear (JSON keys, env names).
_SECRET_NAMES = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "api[_-]?key", "apikey",
    "access[_-]?key", "private[_-]?key", "secret[_-]?key", "client[_-]?secret",
    "credentials?", "auth[_-]?key", "session[_-]?key", "signing[_-]?key",
    "encryption[_-]?key", "dsn", "authorization",
)
_SECRET_WORDS = "|".join(_SECRET_NAMES)
SECRET_KEY_RE = re.compile(rf"(?i)(?:^|[_.\-])(?:{_SECRET_WORDS})$|^(?:{_SECRET_WORDS})$")

# Fields that hold opaque, non-secret material kept verbatim in both modes
# (encrypted reasoning blobs, the journal's own hashes).
VERBATIM_KEYS = frozenset({"signature", "encrypted_content", "hash", "prev", "sha256",
                           "context_digest", "idempotency_key"})

_Rule = tuple[str, "re.Pattern[str]", Callable[["re.Match[str]"], str]]


def _whole(kind: str) -> Callable[[re.Match[str]], str]:
    mark = MARK.format(kind)
    return lambda m: mark


def _group(kind: str, keep_before: int, keep_after: int | None = None) -> Callable[
        [re.Match[str]], str]:
    """Keep groups 1..keep_before and keep_after.., replace the group in between."""
    mark = MARK.format(kind)

    def sub(m: re.Match[str]) -> str:
        head = "".join(m.group(i) or "" for i in range(1, keep_before + 1))
        tail = m.group(keep_after) if keep_after else ""
        return head + mark + (tail or "")

    return sub


_PROVIDERS: list[tuple[str, str]] = [
    ("pem", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("anthropic", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{20,}"),
    ("openai", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"),
    ("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
    ("gitlab", r"\bgl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{20,}"),
    ("slack", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("google_oauth", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("stripe", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}|\bwhsec_[0-9A-Za-z]{24,}"),
    ("npm", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("huggingface", r"\bhf_[A-Za-z0-9]{34,}\b"),
    ("sendgrid", r"\bSG\.[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}"),
    ("twilio", r"\bSK[0-9a-f]{32}\b"),
    ("digitalocean", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("shopify", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
]

_RULES: list[_Rule] = [
    ("pem", re.compile(_PROVIDERS[0][1]), _whole("pem")),
    (
        "authorization",
        re.compile(
            r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)"
            r"((?:bearer|basic|token|digest|bot|apikey)\s+)?([^\s\"',;]{4,})"
        ),
        _group("authorization", 1),
    ),
    (
        "bearer",
        re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=\-]{8,})"),
        _group("bearer", 1),
    ),
    *((kind, re.compile(rx), _whole(kind)) for kind, rx in _PROVIDERS[1:]),
    (
        "url_password",
        re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"']*:)([^\s@/\"']+)(@)"),
        _group("url_password", 1, 3),
    ),
    (
        "secret_assignment",
        re.compile(
            rf"(?i)(\b[A-Za-z0-9_.\-]*(?:{_SECRET_WORDS})[\"']?\s*(?::=|=|:)\s*)"
            r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&|)}\]]+)"
        ),
        _group("secret", 1),
    ),
]


def _assignment_value_ok(value: str) -> bool:
    """An assignment whose value is already a marker or a variable reference."""
    inner = value.strip("\"'")
    return not inner or inner.startswith(("[REDACTED", "$", "<", "${", "%(")) or inner in (
        "null", "None", "true", "false", "***")


def _unless_placeholder(sub: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
    def guarded(m: re.Match[str]) -> str:
        return m.group(0) if _assignment_value_ok(m.group(2)) else sub(m)

    return guarded


def redact_text(text: str) -> str:
    """``text`` with every secret the rules recognise replaced by a marker."""
    if len(text) < 8:
        return text
    for kind, rx, sub in _RULES:
        if kind == "secret_assignment":
            text = rx.sub(_unless_placeholder(sub), text)
        else:
            text = rx.sub(sub, text)
    return text


def redact_value(value: Any, key: str | None = None) -> Any:
    """A JSON value with every string redacted; secret-keyed strings replaced whole."""
    if isinstance(value, str):
        if key is not None:
            if key in VERBATIM_KEYS:
                return value
            if SECRET_KEY_RE.search(key) and value and not _assignment_value_ok(value):
                return MARK.format("secret")
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_value(v, k if isinstance(k, str) else None) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, key) for v in value]
    return value
