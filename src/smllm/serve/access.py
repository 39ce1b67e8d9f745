"""Who may read, and how: the viewer's gate, in front of every route.

* the token: every request carries the random token ``smllm serve`` printed in its URL
  (``?token=``), or the cookie that first request set (as Jupyter does), or an
  ``Authorization: token …`` header; anything else is refused with 403;
* the Host header must name the address the viewer listens on (a web page cannot then
  reach it through DNS rebinding);
* only GET and HEAD: nothing the viewer serves changes anything (405 otherwise);
* every response carries a strict Content-Security-Policy (scripts, styles and images
  from the viewer itself only), no-referrer, no-store and no framing.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]
READ_METHODS = frozenset({"GET", "HEAD"})

REFUSED = ("smllm serve: this address needs the token that `smllm serve` printed: open the "
           "whole URL it printed (http://HOST:PORT/?token=...)\n")
WRONG_HOST = ("smllm serve: the Host header names another site; open the URL that "
              "`smllm serve` printed\n")
NOT_READ = "smllm serve: the viewer is read-only: only GET and HEAD are accepted\n"


def cookie_name(port: int) -> str:
    """One cookie per port (cookies do not tell ports apart)."""
    return f"smllm_serve_{port}"


class Access:
    """ASGI middleware: token, Host and method checks, and the security headers."""

    def __init__(self, app: ASGIApp, token: str, port: int,
                 hosts: frozenset[str] | None) -> None:
        self.app = app
        self.token = token.encode()
        self.cookie = cookie_name(port).encode()
        self.hosts = hosts

    def _presented(self, scope: Scope) -> tuple[bytes | None, bool]:
        """The token the request carries, and whether it came in the URL."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if "token" in query:
            return query["token"][-1].encode("latin-1", "replace"), True
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, rest = value.partition(b" ")
                if scheme.lower() in (b"token", b"bearer"):
                    return rest.strip(), False
            elif name == b"cookie":
                for part in value.split(b";"):
                    key, _, val = part.strip().partition(b"=")
                    if key == self.cookie:
                        return val, False
        return None, False

    def _host_ok(self, scope: Scope) -> bool:
        if self.hosts is None:
            return True
        for name, value in scope.get("headers", []):
            if name == b"host":
                return value.decode("latin-1").lower() in self.hosts
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # websockets: nothing here speaks them
            await send({"type": "websocket.close", "code": 1008})
            return
        if not self._host_ok(scope):
            await _plain(send, 400, WRONG_HOST)
            return
        token, in_url = self._presented(scope)
        if token is None or not hmac.compare_digest(token, self.token):
            await _plain(send, 403, REFUSED)
            return
        if scope["method"] not in READ_METHODS:
            await _plain(send, 405, NOT_READ, [(b"allow", b"GET, HEAD")])
            return
        extra = list(SECURITY_HEADERS)
        if in_url:
            extra.append((b"set-cookie", self.cookie + b"=" + self.token
                          + b"; Path=/; HttpOnly; SameSite=Strict"))

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_secured)


async def _plain(send: Send, status: int, text: str,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS, *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
