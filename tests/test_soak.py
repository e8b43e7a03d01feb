"""The server holds up under load: the real server over stdio, 50 profile requests on a
small script (every fifth stopped halfway, every seventh restarted by a second request),
edits to a 100,000-line file with 10,000 annotated lines arriving during the runs, and
codeLens and hover on that file throughout.

Asserted: every request is answered (and right), no runner is left behind, the server's
memory (RSS) grows by less than 50 MB from the 10th request to the 50th, and it never opens
a network socket; it ends by itself on exit. The latency of codeLens and hover is recorded
and printed (``benchmarks/soak.py`` prints the same figures against their targets; timing is
never asserted in tests).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient

from bottleneck_lsp.lsp.features.lenses import MAX_LENSES
from lsp_helpers import SERVER, execute, runner_pids, start_session

REQUESTS = 50
BIG_LINES = 100_000
HOT_EVERY = 10  # one torch line in ten: 10,000 hot lines

SMALL = """import time

import torch

x = torch.randn(128, 128)
for _ in range(60):
    x = torch.tanh(x @ x)  # HOT
time.sleep(0.3)  # forked from a warm fork server, the job would end before a stop lands
"""


@dataclass
class Figures:
    edit_lens_ms: list[float] = field(default_factory=list)  # codeLens sent right after an edit
    lens_ms: list[float] = field(default_factory=list)
    hover_ms: list[float] = field(default_factory=list)
    rss_mb: dict[int, float] = field(default_factory=dict)  # after request N
    statuses: list[str] = field(default_factory=list)
    lenses: int = 0

    def summary(self) -> str:
        def p(values: list[float], q: float) -> float:
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

        return (
            f"codeLens right after an edit p50 {statistics.median(self.edit_lens_ms):.1f} ms, "
            f"p99 {p(self.edit_lens_ms, 0.99):.1f} ms; "
            f"codeLens ({self.lenses} lenses) p50 {statistics.median(self.lens_ms):.1f} ms, "
            f"p99 {p(self.lens_ms, 0.99):.1f} ms over {len(self.lens_ms)}; hover p50 "
            f"{statistics.median(self.hover_ms):.1f} ms, p99 {p(self.hover_ms, 0.99):.1f} ms over "
            f"{len(self.hover_ms)}; RSS {self.rss_mb}"
        )


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def network_sockets(pid: int) -> list[str]:
    """The process's sockets that are TCP or UDP (inet), as /proc names them."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as handle:
                rows = handle.readlines()[1:]
        except OSError:
            continue
        found += [f"{table}: {row.split()[1]}" for row in rows if row.split()[9] in inodes]
    return found


def write_big(path: Path) -> str:
    lines = ["import torch", "t = torch.zeros(4)"]
    for i in range(BIG_LINES - 2):
        lines.append("t = t + 1" if i % HOT_EVERY == 0 else "y = 0")
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    return text


async def timed(values: list[float], request: Any) -> Any:
    begin = time.perf_counter()
    result = await request
    values.append((time.perf_counter() - begin) * 1000)
    return result


async def drive(folder: Path) -> Figures:
    """The whole soak against a fresh server; returns what it measured."""
    small, big = folder / "small.py", folder / "big.py"
    small.write_text(SMALL)
    big_text = write_big(big)
    small_uri, big_uri = uris.from_fs_path(str(small)) or "", uris.from_fs_path(str(big)) or ""
    figures = Figures()
    config = ClientServerConfig(server_command=SERVER)
    client: LanguageClient = await config.start()
    settings = {"passes": ["cpu"], "python": sys.executable, "timeout": 120, "minShare": 0.0, "top": 3}
    await start_session(client, "visual-studio-code", str(folder), settings)
    pid = client._server.pid  # type: ignore[union-attr]
    try:
        result = await execute(client, "bottleneck.profile", {"uri": big_uri})
        assert result["status"] == "ok", result
        published = client.diagnostics[big_uri]
        assert len(published) >= (BIG_LINES // HOT_EVERY) * 0.99, len(published)  # 10,000 hot lines
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=big_uri, language_id="python", version=1, text=big_text)
            )
        )
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(types.TextDocumentIdentifier(big_uri))
        )
        figures.lenses = len(lenses or [])
        assert figures.lenses == MAX_LENSES  # the loudest; every line keeps its hover
        version = 1
        inserted = 0  # lines inserted at the top of big.py so far

        async def probe() -> None:
            """codeLens and hover on big.py; the hover on a hot line, wherever edits moved it."""
            await timed(
                figures.edit_lens_ms,
                client.text_document_code_lens_async(
                    types.CodeLensParams(types.TextDocumentIdentifier(big_uri))
                ),
            )
            found = await timed(
                figures.lens_ms,
                client.text_document_code_lens_async(
                    types.CodeLensParams(types.TextDocumentIdentifier(big_uri))
                ),
            )
            assert found and len(found) == figures.lenses
            line = 2 + 10 * HOT_EVERY + inserted  # 0-based: the 11th "t = t + 1"
            hover = await timed(
                figures.hover_ms,
                client.text_document_hover_async(
                    types.HoverParams(types.TextDocumentIdentifier(big_uri), types.Position(line, 0))
                ),
            )
            assert hover is not None and "op CPU" in str(hover.contents), hover

        for n in range(1, REQUESTS + 1):
            request = asyncio.ensure_future(execute(client, "bottleneck.profile", {"uri": small_uri}))
            restart = None
            if n % 5 == 0 or n % 7 == 0:
                for _ in range(600):  # halfway: the runner is running the script
                    if runner_pids(str(small)) or request.done():
                        break
                    await asyncio.sleep(0.05)
                if n % 5 == 0:
                    await execute(client, "bottleneck.stop", small_uri)
                else:
                    restart = asyncio.ensure_future(execute(client, "bottleneck.profile", {"uri": small_uri}))
            while not request.done():  # edits and requests while the job runs
                version += 1
                inserted += 1
                client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        types.VersionedTextDocumentIdentifier(version=version, uri=big_uri),
                        [
                            types.TextDocumentContentChangePartial(
                                range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="# edit\n"
                            )
                        ],
                    )
                )
                await probe()
                await asyncio.sleep(0.05)
            first = await request
            if n % 5 == 0:
                assert first["status"] in ("cancelled", "ok"), first
            elif restart is not None:
                assert first["status"] in ("cancelled", "ok"), first
                first = await restart
                assert first["status"] == "ok", first
            else:
                assert first["status"] == "ok", first
            figures.statuses.append(first["status"])
            if n in (10, REQUESTS):
                figures.rss_mb[n] = round(rss_mb(pid), 1)
            assert network_sockets(pid) == []
        await probe()
        await client.shutdown_session()
        await client.stop()
        assert await asyncio.wait_for(client._server.wait(), 30) == 0  # type: ignore[union-attr]
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
            await client._server.wait()
    return figures


@pytest.mark.slow
@pytest.mark.asyncio
async def test_fifty_requests_with_stops_restarts_edits_and_a_huge_file(tmp_path: Path) -> None:
    figures = await drive(tmp_path)
    print(figures.summary())
    assert figures.statuses.count("cancelled") >= REQUESTS // 5 - 2  # the stops took
    assert runner_pids(str(tmp_path)) == []  # nothing left behind
    assert figures.rss_mb[REQUESTS] - figures.rss_mb[10] < 50, figures.rss_mb
