"""``smllm serve [--host ADDR] [--port N] [--store URL] [--open] [--raw]``: the read-only
web viewer, over the embedded index or the team store."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import secrets
import socket
import sys
from typing import TYPE_CHECKING

from smllm.base.errors import SmllmError, UsageError

if TYPE_CHECKING:
    from smllm.serve.source import Source

DEFAULT_PORT = 8765
EXTRA = "pip install 'smllm[serve]'"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                        help=f"the port to listen on (default {DEFAULT_PORT}; 0 picks a free "
                             "one)")
    parser.add_argument("--host", default="127.0.0.1", metavar="ADDR",
                        help="the address to listen on (default 127.0.0.1; anything but a "
                             "loopback address needs --allow-remote)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow --host to be an address other machines can reach (the "
                             "token still guards every request)")
    parser.add_argument("--store", metavar="URL",
                        help="show the team store (PostgreSQL) instead of this machine's "
                             "journals; no password in the URL (use ~/.pgpass or PGPASSWORD)")
    parser.add_argument("--open", action="store_true",
                        help="open the viewer in the default web browser")
    parser.add_argument("--raw", action="store_true",
                        help="show values as journaled, secrets included (every page says "
                             "so); the default replaces secrets by [REDACTED:...] markers")


def _require_dependencies() -> None:
    for module in ("starlette", "uvicorn", "jinja2"):
        try:
            __import__(module)
        except ImportError:
            raise SmllmError(
                f"smllm serve needs {module}, which is not installed (nor are all of "
                "starlette, uvicorn and jinja2)",
                f"install the viewer's extra: {EXTRA}") from None


def is_loopback(host: str) -> bool:
    """Is ``host`` an address only this machine can reach?"""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    bare = host.strip("[]")
    return f"[{bare}]" if ":" in bare else bare


def _listen(host: str, port: int) -> socket.socket:
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    try:
        return socket.create_server((bare, port), family=family, backlog=128)
    except socket.gaierror as exc:
        raise UsageError(f"cannot listen on {host}: {exc.strerror}",
                         "give an IP address with --host, such as 127.0.0.1") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise SmllmError(f"port {port} on {host} is already in use",
                             "pick another with --port N, or --port 0 for any free port"
                             ) from None
        raise SmllmError(f"cannot listen on {host}:{port}: {exc.strerror}",
                         "pick another address or port") from None


def _allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """Host headers a loopback viewer answers (None: any, for --allow-remote)."""
    if not is_loopback(host):
        return None
    names = {"127.0.0.1", "localhost", "[::1]", _url_host(host)}
    return frozenset(f"{n}:{port}" for n in names)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port number", "give 0 to 65535")
    if not is_loopback(args.host) and not args.allow_remote:
        raise UsageError(
            f"refusing to listen on {args.host}: it is not a loopback address, so other "
            "machines could reach the journals",
            "drop --host to listen on 127.0.0.1, or add --allow-remote if you mean it")
    _require_dependencies()
    from smllm.serve.source import IndexSource, StoreSource  # noqa: PLC0415 - the serve extra

    source: Source
    if args.store is not None:
        from smllm.store import address  # noqa: PLC0415 - --store only

        source = StoreSource(address.resolve(args.store, "--store"))
    else:
        source = IndexSource()
    try:
        return _serve(args, source)
    finally:
        source.close()


def _serve(args: argparse.Namespace, source: Source) -> int:
    import uvicorn  # noqa: PLC0415 - the serve extra: when serving only

    from smllm.serve.app import Settings, create_app  # noqa: PLC0415 - the serve extra

    sock = _listen(args.host, args.port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    app = create_app(Settings(token=token, port=port, raw=args.raw,
                              hosts=_allowed_hosts(args.host, port)), source)
    url = f"http://{_url_host(args.host)}:{port}/?token={token}"
    mode = ("RAW: values are shown as journaled, secrets included" if args.raw else
            "redacted (secrets replaced by markers; --raw shows them)")
    sys.stdout.write(f"smllm serve: {url}\n  {mode}; read-only; Ctrl-C stops it\n")
    sys.stdout.flush()
    if args.open:
        import webbrowser  # noqa: PLC0415 - --open only

        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False,
                            proxy_headers=False, lifespan="off", timeout_graceful_shutdown=3)
    uvicorn.Server(config).run(sockets=[sock])
    return 0
