"""The server built (``BottleneckServer`` with every feature registered) and run over stdio,
TCP or a Unix socket; what ends it (SIGTERM, the interpreter's exit) leaves no runner and
no private folder behind."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import signal
import sys
from pathlib import Path

from . import auth, features, transport
from .server import BottleneckServer


def build() -> BottleneckServer:
    """A server with every request and command registered."""
    server = BottleneckServer()
    features.register(server)
    return server


def serve(
    tcp: str | None,
    log_level: str = "WARNING",
    socket_path: str | None = None,
    token_file: str | None = None,
    no_auth: bool = False,
) -> int:
    """Serve over stdio (the default), a TCP port or a Unix socket (see ``transport``)."""
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, log_level.upper(), logging.WARNING))
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = build()

    def kill_leftovers() -> None:
        """Last resort at interpreter exit: no runner process group outlives the server, and
        no private folder of the server's stays behind."""
        server.kill_all()
        server.remove_reports()

    def terminate(*_: object) -> None:
        """SIGTERM before the TCP/socket loop takes it, and over stdio: runners killed, then
        out. Not ``sys.exit``: over stdio pygls's shutdown joins the thread blocked reading
        stdin, which an editor that signals the server may keep open, so the server would
        never exit."""
        kill_leftovers()
        os._exit(0)

    atexit.register(kill_leftovers)
    signal.signal(signal.SIGTERM, terminate)
    if tcp is None and socket_path is None:
        server.start_io()
        return 0
    written: list[Path] = []
    try:
        serving = transport.serve_socket(server.protocol, tcp, socket_path, token_file, no_auth, written)
        return asyncio.run(serving)
    except (auth.TokenError, OSError, ValueError) as exc:
        print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        for path in written:
            transport.remove_quietly(path)
        server.shutdown()  # type: ignore[no-untyped-call]
