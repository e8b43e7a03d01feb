"""Language server figures, measured side by side in one run (not a test).

1. While a profiling job runs, the latency of textDocument/codeLens and textDocument/hover
   requests (p50, p99).
2. The time from a job's end to the last publishDiagnostics, for a script with 5,000 hot
   lines: as the server reports it in its log (its message handed to the writer), and as
   this Python client sees it (the notification received and parsed by pygls' client).

Usage: .venv/bin/python benchmarks/lsp_latency.py
"""

from __future__ import annotations

import asyncio
import datetime
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
SERVER = [os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp"), "serve"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def start(
    settings: dict[str, object], arrivals: list[float] | None = None
) -> tuple[LanguageClient, list[str]]:
    client = LanguageClient("bench", "1")
    logs: list[str] = []

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        logs.append(params.message)

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_message(params: types.ShowMessageParams) -> None:
        logs.append(params.message)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        if arrivals is not None and params.diagnostics:
            arrivals.append(time.time())

    await client.start_io(*SERVER)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=uris.from_fs_path(str(ROOT)),
            initialization_options={"bottleneck": settings},
        )
    )
    client.initialized(types.InitializedParams())
    return client, logs


async def latency_during_job() -> tuple[list[float], list[float]]:
    client, _ = await start({"passes": ["cprofile", "cpu"], "python": sys.executable})
    script = ROOT / "examples" / "train.py"
    uri = uris.from_fs_path(str(script)) or ""
    # a first run so that there are lenses and hovers to serve
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bottleneck.profile", arguments=[{"uri": uri, "args": ["--steps", "5"]}]
        )
    )
    job = asyncio.ensure_future(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="bottleneck.profile", arguments=[{"uri": uri, "args": ["--steps", "60"]}]
            )
        )
    )
    lens_ms: list[float] = []
    hover_ms: list[float] = []
    doc = types.TextDocumentIdentifier(uri=uri)
    while not job.done():
        begin = time.perf_counter()
        await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
        lens_ms.append(1000 * (time.perf_counter() - begin))
        begin = time.perf_counter()
        await client.text_document_hover_async(
            types.HoverParams(text_document=doc, position=types.Position(line=40, character=8))
        )
        hover_ms.append(1000 * (time.perf_counter() - begin))
        await asyncio.sleep(0.01)
    await job
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return lens_ms, hover_ms


async def publish_latency(lines: int) -> tuple[float, float, int]:
    """(server-side ms, client-side ms, annotations published)."""
    folder = tempfile.mkdtemp(prefix="bottleneck-bench-")
    script = Path(folder) / "many_lines.py"
    body = ["import torch", "x = torch.randn(64, 64)"]
    body += [f"y{i} = torch.tanh(x)" for i in range(lines)]
    script.write_text("\n".join(body) + "\n")
    arrivals: list[float] = []
    client, logs = await start(
        {"passes": ["cpu"], "python": sys.executable, "top": lines + 10, "minShare": 0.0}, arrivals
    )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="bottleneck.profile", arguments=[{"uri": uris.from_fs_path(str(script))}]
        )
    )
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    for line in logs:
        match = re.match(r"published (\d+) annotations ([\d.]+) ms .* result read at ([\d:. -]+)\)", line)
        if match and arrivals:
            ended = datetime.datetime.fromisoformat(match.group(3)).timestamp()  # local time, as logged
            client_ms = 1000 * (arrivals[-1] - ended)
            return float(match.group(2)), client_ms, int(match.group(1))
    raise RuntimeError("the server did not report its publish time: " + "\n".join(logs[-5:]))


async def main() -> None:
    lens_ms, hover_ms = await latency_during_job()
    publish_ms, client_ms, published = await publish_latency(5000)
    print("| figure | value | target |")
    print("| --- | --- | --- |")
    print(
        f"| codeLens latency during a job, p50 / p99 ({len(lens_ms)} requests) "
        f"| {statistics.median(lens_ms):.2f} / {percentile(lens_ms, 0.99):.2f} ms | p99 <= 10 ms |"
    )
    print(
        f"| hover latency during a job, p50 / p99 ({len(hover_ms)} requests) "
        f"| {statistics.median(hover_ms):.2f} / {percentile(hover_ms, 0.99):.2f} ms | p99 <= 10 ms |"
    )
    print(
        f"| job end -> last publishDiagnostics sent, {published} hot lines (server) "
        f"| {publish_ms:.1f} ms | <= 100 ms |"
    )
    print(
        f"| job end -> the same received and parsed by pygls' Python client "
        f"| {client_ms:.1f} ms | (for the record) |"
    )


if __name__ == "__main__":
    asyncio.run(main())
