"""Serving the language server on a TCP port or a Unix socket: one client at a time.

pygls' own TCP server hands every connection the same protocol object, so a second
connection would take over the first one's session; and it reads a message of any
announced length. Here, instead:

- one client at a time: a connection that arrives while another is served is closed;
- every connection passes the ``auth.Gate`` (a token, unless the user opted out); one
  that does not authenticate within ``AUTH_TIMEOUT_S`` is closed, and a failed one does
  not end the server;
- messages are read with bounded headers and lengths (``PRE_AUTH_LIMIT`` before
  authentication, ``MESSAGE_LIMIT`` after);
- when the client that authenticated leaves (or sends ``exit``), the server ends, as it
  does when an editor closes its stdio.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import os
import signal
import socket
import stat
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import auth
from .auth import Gate

log = logging.getLogger(__name__)

HEADER_LIMIT = 8 * 1024  # bytes of one header line
PRE_AUTH_LIMIT = 64 * 1024  # bytes of one message before the client authenticated
MESSAGE_LIMIT = 256 * 1024 * 1024  # bytes of one message after (a huge didOpen)
AUTH_TIMEOUT_S = 10.0

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ProtocolError(Exception):
    """The peer broke the framing: the connection ends."""


async def read_message(reader: asyncio.StreamReader, limit: int) -> bytes | None:
    """One framed message's body; None at the end of the stream."""
    length: int | None = None
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise ProtocolError("the stream ended inside a header") from None
            return None
        except asyncio.LimitOverrunError:
            raise ProtocolError("a header line is too long") from None
        if line in (b"\r\n", b"\n"):
            if length is None:
                raise ProtocolError("a message without Content-Length")
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise ProtocolError(f"a bad Content-Length: {value.strip()[:40]!r}") from None
            if length < 0 or length > limit:
                raise ProtocolError(f"a message of {length} bytes (at most {limit} here)")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        raise ProtocolError("the stream ended inside a message") from None


class Listener:
    """Accepts connections for one protocol object, one at a time (see the module)."""

    def __init__(self, protocol: Any, token: str | None) -> None:
        self.protocol = protocol
        self.token = token
        self.busy = False
        self.finished = asyncio.Event()
        self.exit_code = 0

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.busy or self.finished.is_set():
            log.warning("refused a connection: the server already has a client")
            writer.close()
            return
        self.busy = True
        gate = Gate(self.token)
        protocol = self.protocol
        protocol.set_writer(writer)
        protocol.gate = gate
        loop = asyncio.get_running_loop()
        timer = loop.call_later(AUTH_TIMEOUT_S, lambda: None if gate.authorised else writer.close())
        try:
            await self._serve(reader, writer, gate)
        except SystemExit as exc:  # the client's exit notification
            self.exit_code = exc.code if isinstance(exc.code, int) else 0
        except ProtocolError as exc:
            log.warning("connection closed: %s", exc)
        except (ConnectionError, OSError) as exc:
            log.info("connection lost: %s", exc)
        finally:
            timer.cancel()
            protocol.gate = None
            writer.close()
            self.busy = False
            if gate.authorised:
                self.finished.set()  # its client is gone: so is the server's reason to run

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, gate: Gate) -> None:
        protocol = self.protocol
        _keep_alive(writer)
        while not writer.is_closing():
            body = await read_message(reader, MESSAGE_LIMIT if gate.authorised else PRE_AUTH_LIMIT)
            if body is None:
                return
            try:
                message = json.loads(body, object_hook=protocol.structure_message)
            except ValueError as exc:
                if not gate.authorised:
                    raise ProtocolError(f"a message that is not JSON before authentication: {exc}") from None
                log.warning("a message that is not JSON: %s", exc)
                continue
            protocol.handle_message(message)
            if gate.failed:
                await writer.drain()
                return


def bound_port(server: asyncio.AbstractServer) -> int:
    sockets = getattr(server, "sockets", None) or []
    return int(sockets[0].getsockname()[1]) if sockets else 0


def prepare_socket_path(path: Path) -> None:
    """Make room for a Unix socket at ``path``: a stale socket of a server that is gone is
    removed; anything else there (a live server, a file) is an error for the user."""
    if not path.parent.is_dir():
        raise OSError(f"no folder {path.parent}")
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise OSError(f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink()  # nobody listens: a leftover
        return
    finally:
        probe.close()
    raise OSError(f"a server already listens on {path}")


async def start_unix(path: Path, handler: Handler) -> asyncio.AbstractServer:
    """A Unix socket created 0600 (no moment in which others may connect)."""
    old = os.umask(0o177)
    try:
        server = await asyncio.start_unix_server(handler, path=str(path), limit=HEADER_LIMIT)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return server


async def start_tcp(host: str, port: int, handler: Handler) -> asyncio.AbstractServer:
    return await asyncio.start_server(handler, host, port, limit=HEADER_LIMIT)


def remove_quietly(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def say(text: str) -> None:
    """A line for the person who started the server (stderr)."""
    print(f"bottleneck-lsp: {text}", file=sys.stderr, flush=True)


async def serve_socket(
    protocol: Any,
    tcp: str | None,
    socket_path: str | None,
    token_file: str | None,
    no_auth: bool,
    written: list[Path],
) -> int:
    """Serve ``protocol`` on a TCP port or a Unix socket until its client leaves (or SIGTERM),
    with a token unless ``no_auth``; the files it writes (socket, token) go in ``written``."""
    given = Path(token_file).expanduser().absolute() if token_file else None
    token: str | None = None
    keep_file = False
    if not no_auth and given is not None and given.exists():
        token, keep_file = auth.read_token(given), True
    elif not no_auth and (tcp is not None or given is not None):
        token = auth.new_token()
    listener = Listener(protocol, token)
    # SIGTERM ends the loop as the client's exit does (token files removed); an exception raised
    # by a signal handler could land inside the loop's own bookkeeping and hang its shutdown.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, listener.finished.set)
    if no_auth:
        say(
            "WARNING: --no-auth: any process that can reach this server can run code as you "
            "through the profile command; use it only where nobody else can connect"
        )
    if socket_path is not None:
        path = Path(socket_path).expanduser().absolute()
        prepare_socket_path(path)
        started = await start_unix(path, listener.connection)
        written.append(path)
        where = f"unix socket {path} (mode 0600: only you can connect)"
    else:
        assert tcp is not None
        host, _, port_text = tcp.rpartition(":")
        host = host or "127.0.0.1"
        try:
            port = int(port_text)
        except ValueError:
            raise ValueError(f"--tcp wants [HOST:]PORT, not {tcp!r}") from None
        if not is_loopback(host):
            say(
                f"warning: listening on {host}, not loopback: anyone who can reach this port "
                "can try to connect (the token is what keeps them out)"
            )
        started = await start_tcp(host, port, listener.connection)
        where = f"{host}:{bound_port(started)}"
    if token is not None and not keep_file:
        path = given or auth.default_dir() / f"tcp-{where.rsplit(':', 1)[-1]}.token"
        auth.write_token(path, token)
        written.append(path)
        where += f"; token in {path} (clients pass it as initializationOptions.token)"
    elif token is not None:
        where += f"; token from {given} (clients pass it as initializationOptions.token)"
    say(f"listening on {where}")
    async with started:
        await listener.finished.wait()
    return listener.exit_code


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


KEEPALIVE_IDLE_S = 60  # a TCP client silent this long is probed; gone after 5 probes 10 s apart


def _keep_alive(writer: asyncio.StreamWriter) -> None:
    """TCP keepalive on a client's connection: a client whose machine went away (a laptop
    asleep, a network cut) sends no end of file, and the server would wait for its next
    message for ever; the probes end the connection within about 2 minutes instead."""
    sock = writer.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in (("TCP_KEEPIDLE", KEEPALIVE_IDLE_S), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 5)):
            option = getattr(socket, name, None)
            if option is not None:
                sock.setsockopt(socket.IPPROTO_TCP, option, value)
    except OSError as exc:
        log.debug("TCP keepalive not set: %s", exc)
