"""The two pygls internals the server's protocol relies on (lsp/protocol.py), exercised on a
real server's protocol writing to a pipe: ``_send_response``, to answer a request whose
params cannot be structured (pygls' own loop dropped it unanswered), and
``_request_futures``, to fail a request of the server's whose response cannot be
structured (its caller would wait for ever). pygls has no public way to do either; an
upgrade that renames them fails here, not in an editor."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import Future
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter

from bottleneck_lsp.lsp.arguments import ProfileArguments, strict_converter
from bottleneck_lsp.lsp.serve import build


def _messages(fd: int) -> list[dict[str, Any]]:
    """The framed messages written so far."""
    data = b""
    while True:
        os.set_blocking(fd, False)
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    out = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        size = next(int(h.split(b":")[1]) for h in header.split(b"\r\n") if h.startswith(b"Content-Length"))
        out.append(json.loads(rest[:size]))
        data = rest[size:]
    return out


def _wait_written(fd: int, count: int) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    for _ in range(200):
        got += _messages(fd)
        if len(got) >= count:
            return got
        time.sleep(0.01)
    raise AssertionError(f"waited 2 s for {count} messages from the protocol, got {got}")


def test_a_request_that_cannot_be_structured_is_answered_and_a_bad_response_fails_the_wait() -> None:
    server = build()
    read_fd, write_fd = os.pipe()
    server.protocol.set_writer(StdoutWriter(os.fdopen(write_fd, "wb")))
    try:
        server.protocol.handle_message(
            {"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"position": "x"}}
        )
        answer = _wait_written(read_fd, 1)[0]
        assert answer["id"] == 5 and answer["error"]["code"] < 0, answer

        waiting: Future[Any] = server.protocol.send_request("workspace/codeLens/refresh", None)
        request = _wait_written(read_fd, 1)[0]
        assert request["method"] == "workspace/codeLens/refresh"
        server.protocol.handle_message({"jsonrpc": "2.0", "id": request["id"], "error": "x"})
        assert isinstance(waiting.exception(timeout=2), JsonRpcException)
    finally:
        assert server.protocol.writer is not None
        server.protocol.writer.close()
        os.close(read_fd)


def test_the_server_structures_command_arguments_strictly() -> None:
    converter = strict_converter()
    parsed = converter.structure({"uri": "file:///s.py", "args": ["-x"]}, ProfileArguments)
    assert parsed.settings == {"args": ["-x"]}
    try:
        converter.structure({"uri": "file:///s.py", "args": "-x"}, ProfileArguments)
    except ValueError as exc:
        assert "'args' must be a list of strings or null, got a string" in str(exc)
    else:
        raise AssertionError("a string for a list of strings was structured")
