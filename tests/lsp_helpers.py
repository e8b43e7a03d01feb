"""pytest-lsp plumbing: the real server over stdio or TCP, with a chosen client's capabilities."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
import sys
import tempfile
from typing import Any

import attrs
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from helpers import SCRIPTS, marker_line

SERVER = [os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp"), "serve"]


def _live_processes() -> list[tuple[int, list[str], int]]:
    """(pid, argv, parent pid) of every process that is not a zombie."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().decode(errors="replace").split("\0")
            with open(f"/proc/{entry}/stat") as handle:
                state, ppid = handle.read().rsplit(")", 1)[1].split()[:2]
        except OSError:
            continue
        if state != "Z":
            found.append((int(entry), argv, int(ppid)))
    return found


def frame(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message as the base protocol frames it (a Content-Length header)."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def runner_pids(marker: str) -> list[int]:
    """Live runner processes for ``marker``: a fresh runner names it on its command line; a
    pass forked from a fork server (whose command line is the server's) holds the script
    open, and so does whatever it forked."""
    return [
        pid
        for pid, argv, _ in _live_processes()
        if any("bottleneck_lsp.runner" in a for a in argv)
        and (any(marker in a for a in argv) or any(marker in target for target in _open_files(pid)))
    ]


def our_processes() -> str:
    """Every live process of this package, one per line (pid, parent, argv): what a failed
    check on ``runner_pids`` prints, so that a rare race says what was left."""
    return "\n".join(
        f"{pid} (parent {ppid}): {' '.join(argv)}"
        for pid, argv, ppid in _live_processes()
        if any("bottleneck_lsp" in a for a in argv)
    )


def fork_servers(parent: int | None = None) -> list[int]:
    """Live fork servers (started by ``parent``, when given)."""
    return [
        pid
        for pid, argv, ppid in _live_processes()
        if "bottleneck_lsp.runner.forkserver" in argv and parent in (None, ppid)
    ]


def our_folders() -> set[str]:
    """The private folders of jobs and fork servers of this checkout (``runner_folder``)."""
    package = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "server", "bottleneck_lsp"))
    found = set()
    for name in os.listdir(tempfile.gettempdir()):
        path = os.path.join(tempfile.gettempdir(), name)
        link = os.path.join(path, "bottleneck_lsp")
        if name.startswith("bottleneck-lsp-") and os.path.islink(link) and os.path.realpath(link) == package:
            found.add(path)
    return found


def gone(pid: int) -> bool:
    """The process ended (or is a zombie, waiting to be collected)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _open_files(pid: int) -> list[str]:
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    out = []
    for name in names:
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{name}"))
        except OSError:
            continue
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@attrs.define
class TcpConfig(ClientServerConfig):
    """Start ``bottleneck-lsp serve --tcp`` and connect to it."""

    async def start(self, devtools: str | None = None) -> Any:
        port = _free_port()
        folder = tempfile.mkdtemp(prefix="bottleneck-token-")
        token_file = os.path.join(folder, "token")
        token = secrets.token_urlsafe(32)
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(token)
        proc = await asyncio.create_subprocess_exec(
            *self.server_command, "--tcp", f"127.0.0.1:{port}", "--token-file", token_file
        )
        client = self.client_factory()
        client._bottleneck_proc = proc
        client._bottleneck_token_dir = folder
        client._bottleneck_token = token  # sent in initializationOptions (start_session)
        # The server serves exactly one connection: connect with the client itself.
        for _ in range(400):
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            proc.kill()
            raise RuntimeError("the TCP server never listened")
        return client


CONFIGS = {
    "stdio-vscode": (ClientServerConfig(server_command=SERVER), "visual-studio-code"),
    "tcp-neovim": (TcpConfig(server_command=SERVER), "neovim"),
}


async def start_session(client: LanguageClient, caps_name: str, root: str, settings: dict[str, Any]) -> None:
    client.lens_refreshes = 0  # type: ignore[attr-defined]
    options: dict[str, Any] = {"bottleneck": settings}
    token = getattr(client, "_bottleneck_token", None)
    if token is not None:  # a TCP server: the token of its --token-file
        options["token"] = token

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_refresh(params: Any) -> None:
        client.lens_refreshes += 1  # type: ignore[attr-defined]

    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(caps_name),
            root_uri=uris.from_fs_path(root),
            workspace_folders=[types.WorkspaceFolder(uri=uris.from_fs_path(root) or "", name="scripts")],
            initialization_options=options,
        )
    )


async def execute(client: LanguageClient, command: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


SETTINGS = {"passes": ["cpu"], "python": sys.executable, "timeout": 120}


def uri_of(name: str) -> str:
    return uris.from_fs_path(str(SCRIPTS / name)) or ""


async def open_session(name: str) -> Any:
    config, caps = CONFIGS[name]
    client = await config.start()
    client.caps_name = caps
    await start_session(client, caps, str(SCRIPTS), SETTINGS)
    return client


async def close_session(client: Any) -> None:
    if not getattr(client, "shutdown_done", False):
        await client.shutdown_session()
    await client.stop()
    proc = getattr(client, "_bottleneck_proc", None)
    if proc is not None:
        proc.terminate()
        await proc.wait()
    folder = getattr(client, "_bottleneck_token_dir", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


async def wait_for_runner(marker: str) -> None:
    for _ in range(300):
        if runner_pids(marker):
            return
        await asyncio.sleep(0.1)


def hot_diagnostic(client: LanguageClient, name: str, marker: str = "# HOT") -> types.Diagnostic:
    line = marker_line(name, marker) - 1
    found = [d for d in client.diagnostics.get(uri_of(name), []) if d.range.start.line == line]
    assert found, f"no diagnostic on {name}:{line + 1}: {client.diagnostics.get(uri_of(name))}"
    return found[0]
