"""Nobody else runs code as you: the real server on TCP and on a Unix socket, spoken to
byte by byte as another local user's client would (no LSP library: nothing smooths over
what the server does)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import SCRIPTS
from lsp_helpers import SERVER, frame, runner_pids

LISTENING = re.compile(
    r"listening on (?:unix socket (\S+)|127\.0\.0\.1:(\d+))(?:.*?; token (?:in|from) (\S+))?"
)


class Server:
    """``bottleneck-lsp serve`` with some options, and what it printed when it listened."""

    def __init__(self, *options: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*SERVER, *options], stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
        )
        self.stderr: list[str] = []
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.stderr.append(line)
            found = LISTENING.search(line)
            if found:
                self.socket, port, token_path = found.groups()
                self.port = int(port) if port else None
                self.token_path = Path(token_path) if token_path else None
                return
        raise AssertionError(f"the server never listened: {self.stderr}")

    def token(self) -> str:
        assert self.token_path is not None
        return self.token_path.read_text().strip()

    async def connect(self) -> Client:
        if self.socket:
            reader, writer = await asyncio.open_unix_connection(self.socket)
        else:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        return Client(reader, writer)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        _, rest = self.proc.communicate(timeout=20)
        return "".join(self.stderr) + rest


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.next_id = 0
        self.others: list[dict[str, Any]] = []  # what came while waiting for an answer

    def send(self, method: str, params: Any = None, request: bool = True) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        self.write(message)
        return self.next_id

    def write(self, message: dict[str, Any]) -> None:
        self.writer.write(frame(message))

    async def receive(self) -> dict[str, Any] | None:
        """The next message, None when the server closed the connection."""
        length = 0
        while True:
            line = await asyncio.wait_for(self.reader.readline(), 30)
            if not line:
                return None
            if line == b"\r\n":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(await self.reader.readexactly(length))  # type: ignore[no-any-return]

    async def answer(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = await self.receive()
            assert message is not None, f"closed before answering request {msg_id}"
            if message.get("id") == msg_id and "method" not in message:
                return message
            self.others.append(message)

    async def closed(self) -> bool:
        while True:
            try:
                message = await self.receive()
            except (ConnectionError, asyncio.IncompleteReadError):
                return True
            if message is None:
                return True

    async def initialize(
        self, root: Path, token: str | None, flat: bool = False, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """``flat``: the settings beside the token, not under "bottleneck" (as the Emacs
        and lsp-mode examples of docs/editors.md send them)."""
        options: dict[str, Any] = {"top": 3} if flat else {"bottleneck": {}}
        if token is not None:
            options["token"] = token
        params = {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": capabilities or {},
            "initializationOptions": options,
        }
        return await self.answer(self.send("initialize", params))


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """A script that leaves a file behind if it ever runs."""
    marker = tmp_path / "it-ran"
    script = tmp_path / "victim.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    return script, marker


def _profile_params(script: Path) -> dict[str, Any]:
    return {"command": "bottleneck.profile", "arguments": [{"uri": script.as_uri()}]}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def _intruder(server: Server, tmp_path: Path, token: str | None) -> None:
    """Everything another user's client might try, without the right token."""
    script, marker = _planted(tmp_path)
    client = await server.connect()
    # before initialize: refused, nothing runs, nothing is read
    for method, params in (
        ("workspace/executeCommand", _profile_params(script)),
        ("workspace/executeCommand", {"command": "bottleneck.report", "arguments": []}),
        (
            "textDocument/hover",
            {"textDocument": {"uri": script.as_uri()}, "position": {"line": 0, "character": 0}},
        ),
        ("textDocument/codeLens", {"textDocument": {"uri": script.as_uri()}}),
    ):
        reply = await client.answer(client.send(method, params))
        assert reply["error"]["code"] == -32002, reply
        assert "requires authentication" in reply["error"]["message"]
    client.send("initialized", {}, request=False)  # notifications are dropped
    reply = await client.initialize(tmp_path, token)
    assert reply["error"]["code"] == -32803 and reply["error"]["data"] == {"retry": False}
    why = "no token was given" if token is None else "the token is wrong"
    assert f"authentication failed ({why})" in reply["error"]["message"]
    assert await client.closed()  # the server ends a failed connection
    await asyncio.sleep(1.0)
    assert not marker.exists() and runner_pids(str(script)) == []


async def _owner(
    server: Server, tmp_path: Path, token: str | None, flat: bool = False, malformed: bool = False
) -> None:
    """The rightful client: initialize succeeds and commands run."""
    client = await server.connect()
    reply = await client.initialize(tmp_path, token, flat)
    assert "result" in reply and reply["result"]["serverInfo"]["name"] == "bottleneck-lsp", reply
    client.send("initialized", {}, request=False)
    cleared = await client.answer(
        client.send("workspace/executeCommand", {"command": "bottleneck.clear", "arguments": []})
    )
    assert cleared["result"]["cleared"] == 0
    shown = [m["params"]["message"] for m in client.others if m.get("method") == "window/showMessage"]
    assert not shown, shown  # the token is not a setting: no "unknown setting 'token'" warning
    if malformed:  # requests that are answered (pygls logs a traceback for the second)
        await _malformed_requests(client)
    # a second client is turned away while this one is served
    other = await server.connect()
    assert await other.closed()
    await client.answer(client.send("shutdown"))
    client.send("exit", request=False)
    assert await client.closed()


async def _malformed_requests(client: Client) -> None:
    """An argument shaped like a message is an argument; a request whose parameters are not
    its method's gets an error (pygls once left both unanswered)."""
    lookalike = {"jsonrpc": "2.0", "id": 1, "error": "x"}
    reply = await client.answer(
        client.send("workspace/executeCommand", {"command": "bottleneck.report", "arguments": [lookalike]})
    )
    assert reply["result"]["status"] == "refused", reply
    reply = await client.answer(client.send("textDocument/hover", {"textDocument": 5}))
    assert reply["error"]["code"] == -32602 and "Invalid Params" in reply["error"]["message"], reply
    client.write({"id": 99, "method": "shutdown"})  # not JSON-RPC 2.0
    reply = await client.answer(99)
    assert reply["error"]["code"] == -32600 and "Invalid Request" in reply["error"]["message"], reply


def test_a_malformed_answer_to_a_request_of_the_servers_fails_that_request_only(tmp_path: Path) -> None:
    """The client answers the server's window/showDocument with something that is not a
    response: the report command still answers (it says where the report is) instead of
    waiting for ever on that request."""
    server = Server("--tcp", "127.0.0.1:0", "--no-auth")

    async def go() -> None:
        client = await server.connect()
        can_show = {"window": {"showDocument": {"support": True}}}
        assert "result" in await client.initialize(tmp_path, None, capabilities=can_show)
        client.send("initialized", {}, request=False)
        script = {"uri": (SCRIPTS / "fn_call.py").as_uri(), "passes": ["sample"]}
        profiled = await client.answer(
            client.send("workspace/executeCommand", {"command": "bottleneck.profile", "arguments": [script]})
        )
        assert profiled["result"]["status"] == "ok", profiled
        asked = client.send("workspace/executeCommand", {"command": "bottleneck.report", "arguments": []})
        shows = 0
        while True:
            message = await client.receive()
            assert message is not None, "closed before answering"
            if message.get("method") == "window/showDocument":
                shows += 1
                client.write({"jsonrpc": "2.0", "id": message["id"], "error": "not an error object"})
            elif message.get("id") == asked and "method" not in message:
                break
            else:
                client.others.append(message)
        assert shows == 1 and "fn_call.py" in message["result"]["text"], message
        told = [m["params"]["message"] for m in client.others if m.get("method") == "window/showMessage"]
        assert any("the full report is in" in m for m in told), told
        await client.answer(client.send("shutdown"))
        client.send("exit", request=False)
        assert await client.closed()

    try:
        asyncio.run(go())
        assert server.proc.wait(20) == 0
    finally:
        server.stop()


def test_tcp_requires_the_token_from_a_private_file(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    server = Server("--tcp", "127.0.0.1:0", env={"XDG_RUNTIME_DIR": str(runtime)})
    try:
        assert server.token_path is not None and server.token_path.parent == runtime / "bottleneck-lsp"
        assert _mode(server.token_path) == 0o600 and _mode(server.token_path.parent) == 0o700
        assert len(server.token()) >= 40
        asyncio.run(_intruder(server, tmp_path, None))
        asyncio.run(_intruder(server, tmp_path, "not-the-token-" + "x" * 30))
        asyncio.run(_intruder(server, tmp_path, server.token()[:-1]))
        assert server.proc.poll() is None  # failed attempts do not end the server
        asyncio.run(_owner(server, tmp_path, server.token()))
        assert server.proc.wait(20) == 0  # its client left: the server ends
        assert not server.token_path.exists()  # and removes the token it wrote
    finally:
        server.stop()


def test_a_token_file_of_your_own_is_read_and_must_be_private(tmp_path: Path) -> None:
    mine = tmp_path / "token"
    mine.write_text("s3cret-" * 6 + "\n")
    mine.chmod(0o644)
    proc = subprocess.run(
        [*SERVER, "--tcp", "127.0.0.1:0", "--token-file", str(mine)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "readable by other users: chmod 600 it" in proc.stderr
    mine.chmod(0o600)
    server = Server("--tcp", "127.0.0.1:0", "--token-file", str(mine))
    try:
        assert server.token_path == mine and "token from" in server.stderr[-1]
        asyncio.run(_intruder(server, tmp_path, None))
        asyncio.run(_owner(server, tmp_path, "s3cret-" * 6, flat=True))
        assert server.proc.wait(20) == 0
        assert mine.exists()  # the user's own file stays
    finally:
        server.stop()


def test_unix_socket_is_private_and_a_stale_one_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "lsp.sock"
    path.write_text("not a socket")
    proc = subprocess.run([*SERVER, "--socket", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "exists and is not a socket" in proc.stderr
    path.unlink()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))  # a socket file nobody listens on: a crashed server's leftover
    stale.close()
    server = Server("--socket", str(path))
    try:
        assert stat.S_ISSOCK(path.lstat().st_mode) and _mode(path) == 0o600
        assert "only you can connect" in server.stderr[-1] and server.token_path is None
        asyncio.run(_owner(server, tmp_path, None))
        assert server.proc.wait(20) == 0
        assert not path.exists()  # removed when the server ends
    finally:
        server.stop()
    # a live server's socket is never taken over
    server = Server("--socket", str(path))
    try:
        proc = subprocess.run([*SERVER, "--socket", str(path)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "already listens" in proc.stderr
    finally:
        server.stop()


def test_unix_socket_with_a_token(tmp_path: Path) -> None:
    mine = tmp_path / "token"
    server = Server("--socket", str(tmp_path / "s"), "--token-file", str(mine))
    try:
        assert server.token_path == mine and _mode(mine) == 0o600
        asyncio.run(_intruder(server, tmp_path, "wrong-" * 8))
        asyncio.run(_owner(server, tmp_path, server.token()))
    finally:
        server.stop()


def test_no_auth_is_loud_and_works() -> None:
    server = Server("--tcp", "127.0.0.1:0", "--no-auth")
    try:
        assert any("WARNING: --no-auth" in line for line in server.stderr)
        assert server.token_path is None
        asyncio.run(_owner(server, Path("/tmp"), None, malformed=True))
    finally:
        server.stop()


@pytest.mark.parametrize(
    "payload",
    [
        b"Content-Length: 99999999\r\n\r\n",  # a huge message announced before authenticating
        b"Content-Length: nope\r\n\r\n",
        b"X" * 20000 + b"\r\n",  # a header line without end
        b"Content-Length: 5\r\n\r\n{{{{{",  # not JSON
        b"Content-Length: 7\r\n\r\n[1,2,3]",  # JSON, not a message
        # an initialize that is not one: nothing before authentication structures it
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": "x"}}),
        frame({"id": 1, "method": "initialize", "params": {}}),  # not JSON-RPC 2.0
    ],
)
def test_garbage_before_authentication_ends_that_connection_only(payload: bytes) -> None:
    server = Server("--tcp", "127.0.0.1:0")

    async def go() -> None:
        client = await server.connect()
        client.writer.write(payload)
        assert await client.closed()
        await _owner(server, Path("/tmp"), server.token())

    try:
        asyncio.run(go())
        assert server.proc.wait(20) == 0
        assert "Traceback" not in server.stop()
    finally:
        server.stop()


def test_serve_options_that_contradict_are_refused() -> None:
    for options in (["--no-auth"], ["--tcp", "0", "--no-auth", "--token-file", "x"], ["--token-file", "x"]):
        proc = subprocess.run([*SERVER, *options], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "--no-auth" in proc.stderr, options
