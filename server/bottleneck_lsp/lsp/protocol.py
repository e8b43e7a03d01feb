"""The server's JSON-RPC protocol: pygls' own, with what this server changes in it.

- stdio messages are written from a thread (``writer.QueuedWriter``);
- a decoded message is structured at its top level only (pygls structured every nested
  object with a "jsonrpc" key, and dropped requests it could not structure unanswered);
- on a socket, the ``auth.Gate`` reads each decoded message before anything else does.
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from .auth import Gate
from .writer import QueuedWriter

log = logging.getLogger(__name__)


class BottleneckProtocol(LanguageServerProtocol):
    """pygls' protocol, writing stdio messages from a thread (``writer.QueuedWriter``), so
    that a large publish never waits on the client's reading inside the event loop. Over TCP
    pygls' asyncio transport already buffers without blocking. Both writers are synchronous
    (pygls' only asynchronous one is for WebSockets, which this server does not offer)."""

    gate: Gate | None = None  # on a socket: who may talk (transport.Listener sets it)

    def set_writer(self, writer: Any, include_headers: bool = True) -> None:
        if isinstance(writer, StdoutWriter):
            writer = QueuedWriter(writer)
        super().set_writer(writer, include_headers)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The JSON decoder's hook for every object it reads, innermost first: left as read.
        pygls structures here any object that holds a "jsonrpc" key, nested ones included, so
        a command argument shaped like a message became one (an ``exit``, a response that
        took the place of one this server awaits) or failed to, and then the request around
        it was dropped unanswered. ``handle_message`` structures the message itself."""
        return data

    def handle_message(self, message: Any) -> None:
        gate = self.gate
        if not isinstance(message, dict) or message.get("jsonrpc") != JsonRPCProtocol.VERSION:
            if gate is not None and not gate.authorised:
                gate.failed = True  # not even a message, before authentication: the end
                return
            self._not_a_message(message)
            return
        if gate is not None:
            answer = gate.check(message)
            if answer is not None:
                if answer:
                    self.send_json_text(answer)
                return
        structured = self._message_of(message)
        if structured is not None:
            super().handle_message(structured)

    def _not_a_message(self, data: Any) -> None:
        """JSON that is not a JSON-RPC 2.0 message: an Invalid Request answer when it has an
        id to answer, else a line in the log (pygls' own loop stopped at it with a traceback)."""
        msg_id = data.get("id") if isinstance(data, dict) else None
        if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            why = JsonRpcInvalidRequest(
                message=f'{JsonRpcInvalidRequest.MESSAGE}: not a JSON-RPC "2.0" message'
            )
            self._send_response(msg_id, error=why.to_response_error())
        else:
            log.warning("dropped JSON that is not a JSON-RPC 2.0 message (a %s)", type(data).__name__)

    def _message_of(self, data: dict[str, Any]) -> Any:
        """The message a decoded object is, or None when it is not one: a request gets the
        error as its answer; a response, to a request of this server's, fails that request
        (its caller would wait for ever); a notification is logged (pygls logs it too)."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id, method = data.get("id"), data.get("method")
            if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
                return None
            if isinstance(method, str):
                self._send_response(msg_id, error=exc.to_response_error())
            elif method is None:
                waiting = self._request_futures.pop(msg_id, None)
                if waiting is not None and not waiting.done():
                    waiting.set_exception(exc)
            return None

    def send_json_text(self, body: str) -> None:
        """Send a message that is already JSON text, framed with the Content-Length header.
        Every transport this server offers (stdio, TCP, a Unix socket) frames so; pygls
        drops the header only for WebSockets, which are not offered."""
        writer = self.writer
        if writer is None:
            log.error("no transport to send a message on")
            return
        data = body.encode("utf-8")
        writer.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
