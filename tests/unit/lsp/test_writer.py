"""The stdio writer: queued writes return while the client is not reading, arrive whole and
in order, and a closed client end surfaces as BrokenPipeError (lsp/writer.py)."""

from __future__ import annotations

import os
import threading

import pytest
from pygls.io_ import StdoutWriter

from bottleneck_lsp.lsp.protocol import BottleneckProtocol
from bottleneck_lsp.lsp.server import BottleneckServer
from bottleneck_lsp.lsp.writer import QueuedWriter

MESSAGE = 256 * 1024  # four times a Linux pipe's buffer


def _pipe() -> tuple[int, StdoutWriter]:
    read_fd, write_fd = os.pipe()
    return read_fd, StdoutWriter(os.fdopen(write_fd, "wb"))


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    while size > 0:
        chunk = os.read(fd, min(size, 65536))
        assert chunk, "the pipe closed early"
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def test_write_returns_while_nobody_reads_and_data_arrives_in_order() -> None:
    read_fd, inner = _pipe()
    writer = QueuedWriter(inner)
    messages = [bytes([65 + i]) * MESSAGE for i in range(3)]
    done = threading.Event()

    def send() -> None:
        for m in messages:
            writer.write(m)
        done.set()

    threading.Thread(target=send, daemon=True).start()
    # Nothing reads the pipe yet: pygls' own writer would block on the first message.
    assert done.wait(10), "write() blocked on a client that is not reading"
    assert _read_all(read_fd, 3 * MESSAGE) == b"".join(messages)
    writer.close()
    assert os.read(read_fd, 1) == b"", "close() closes the client's stream"
    os.close(read_fd)


def test_close_writes_out_what_is_queued() -> None:
    read_fd, inner = _pipe()
    writer = QueuedWriter(inner)
    writer.write(b"x" * MESSAGE)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(_read_all(read_fd, MESSAGE)), daemon=True)
    reader.start()
    writer.close()
    reader.join(10)
    assert received == [b"x" * MESSAGE]
    os.close(read_fd)


def test_a_closed_client_end_raises_broken_pipe_on_a_later_write() -> None:
    read_fd, inner = _pipe()
    writer = QueuedWriter(inner)
    os.close(read_fd)
    writer.write(b"lost")
    with pytest.raises(BrokenPipeError):
        for _ in range(1000):  # the writer thread notices the closed end on its own time
            writer.write(b"x")
            threading.Event().wait(0.01)
    writer.close()


def test_the_server_wraps_stdio_writers_only() -> None:
    server = BottleneckServer()
    assert isinstance(server.protocol, BottleneckProtocol)
    read_fd, inner = _pipe()
    server.protocol.set_writer(inner)
    assert isinstance(server.protocol.writer, QueuedWriter)
    server.protocol.writer.close()
    os.close(read_fd)

    class Transport:  # an asyncio transport's shape: already non-blocking, left as it is
        def write(self, data: bytes) -> None: ...

        def close(self) -> None: ...

    plain = Transport()
    server.protocol.set_writer(plain)
    assert server.protocol.writer is plain
