"""What the real-editor tests share (tests/test_neovim.py, tests/test_emacs.py): the code
blocks of a section of docs/editors.md, the long script they quit during, a TCP server as
that page's "running server" blocks reach it, and the check that nothing of ours outlived
the editor."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from lsp_helpers import gone, our_processes

EDITORS_DOC = Path(__file__).resolve().parent.parent / "docs" / "editors.md"

# runs two minutes unless stopped; writes "started" once it runs, for the driver to wait on
LONG = """import time

import torch

open("started", "w").close()
x = torch.randn(64, 64)
end = time.monotonic() + 120
while time.monotonic() < end:
    y = x @ x  # HOT
"""


def doc_blocks(heading: str, language: str) -> list[str]:
    """The ``language`` code blocks of docs/editors.md's section ``heading`` (its text without
    the ``#`` marks), up to the next heading of the same level or above (outside code blocks)."""
    level = 0
    section: list[str] = []
    fenced = False
    for line in EDITORS_DOC.read_text().splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        marks = len(line) - len(line.lstrip("#")) if not fenced and line.startswith("#") else 0
        if level and marks and marks <= level and line[marks : marks + 1] == " ":
            break
        if level:
            section.append(line)
        elif marks and line[marks:].strip() == heading:
            level = marks
    assert level, f"docs/editors.md has no section {heading!r}"
    return re.findall(rf"```{language}\n(.*?)```", "".join(section), re.S)


@contextlib.contextmanager
def tcp_server(token: Path) -> Iterator[int]:
    """`bottleneck-lsp serve --tcp 127.0.0.1:PORT --token-file TOKEN`, started by hand as
    docs/editors.md says; yields PORT. The editor run inside must end it (a network server ends when
    its one client leaves) and it must remove the token it wrote."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [str(Path(sys.executable).parent / "bottleneck-lsp"), "serve", "--tcp", f"127.0.0.1:{port}"]
    server = subprocess.Popen([*command, "--token-file", str(token)], stderr=subprocess.PIPE)
    try:
        assert server.stderr is not None
        listening = server.stderr.readline().decode()
        assert f"listening on 127.0.0.1:{port}" in listening and token.exists(), listening
        yield port
        assert server.wait(timeout=30) == 0  # its one client left
        assert not token.exists()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def assert_all_gone(pids: list[int]) -> None:
    """The editor's server, fork server and pass (``pids``, seen while a profile ran) all
    ended with it (within 30 s)."""
    assert len(pids) >= 3, pids
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(gone(pid) for pid in pids):
        time.sleep(0.1)
    assert all(gone(pid) for pid in pids), our_processes()


def with_running_server(stdio: str, running: str, start: str, port: int) -> str:
    """The user's config for a server started by hand: docs/editors.md's ``running`` block (its port
    2087 made ``port``) in place of the ``stdio`` block's first form, which ``start`` (a
    regular expression, matched from the block's start) finds; the rest of it kept."""
    assert "2087" in running, running
    found = re.match(start, stdio, re.S)
    assert found, stdio
    return running.replace("2087", str(port)) + stdio[found.end() :]
