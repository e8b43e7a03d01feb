"""Time from "profile this script" to the first annotation, measured side by side in one run
(not a test): the real server over stdio, a real client in this process.

For each workload: the bare script's wall time (a fresh ``python script.py``) and its body
alone (torch already imported); then, from the command to the first publishDiagnostics:
- cold: the first profile of a session (its fork server imports torch first),
- warm: the next profile in the same session (``keepWarm``: the fork server is ready),
- keepWarm off: each profile starts its own fork server (and ends it), as the CLI does;
and the end of the job each time, and the warm fork server's resident memory.

Usage: .venv/bin/python benchmarks/first_annotation.py [workload ...]
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from engine import bytecode  # noqa: E402

from lsp_helpers import SERVER, fork_servers, start_session  # noqa: E402

WORKLOADS = {
    "trivial": ROOT / "benchmarks" / "workloads" / "trivial.py",
    "train_small": ROOT / "benchmarks" / "workloads" / "train_small.py",
}
BODY = """
import sys, time, json, runpy
import torch, torch._dynamo
begin = time.perf_counter()
runpy.run_path(sys.argv[1], run_name="__main__")
print("BODY " + json.dumps(time.perf_counter() - begin))
"""


def bare(script: Path) -> tuple[float, float]:
    begin = time.perf_counter()
    subprocess.run([sys.executable, str(script)], capture_output=True, check=True)
    whole = time.perf_counter() - begin
    out = subprocess.run(
        [sys.executable, "-c", BODY, str(script)], capture_output=True, text=True, check=True
    )
    body = float(next(x for x in out.stdout.splitlines() if x.startswith("BODY "))[5:])
    return whole, body


async def profile(client: LanguageClient, script: Path) -> tuple[float, float]:
    """(seconds to the first publishDiagnostics with a hot line, seconds to the job's end)."""
    uri = uris.from_fs_path(str(script)) or ""
    client.diagnostics.pop(uri, None)
    begin = time.perf_counter()
    first: list[float] = []

    async def watch() -> None:
        while not client.diagnostics.get(uri):
            await asyncio.sleep(0.005)
        first.append(time.perf_counter() - begin)

    watcher = asyncio.ensure_future(watch())
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bottleneck.profile", arguments=[{"uri": uri}])
    )
    ended = time.perf_counter() - begin
    await asyncio.wait_for(watcher, 5)
    assert result["status"] == "ok", result
    return first[0], ended


async def session(keep_warm: bool, script: Path, repeats: int) -> dict[str, Any]:
    client = await ClientServerConfig(server_command=SERVER).start()
    settings = {"python": sys.executable, "timeout": 300, "keepWarm": keep_warm}
    await start_session(client, "visual-studio-code", str(script.parent), settings)
    try:
        runs = [await profile(client, script) for _ in range(repeats)]
        pid = client._server.pid  # type: ignore[union-attr]
        rss = None
        for server in fork_servers(pid):
            with open(f"/proc/{server}/status") as handle:
                rss = next(int(x.split()[1]) / 1024 for x in handle if x.startswith("VmRSS:"))
        return {"runs": runs, "rss_mb": rss}
    finally:
        await client.shutdown_session()
        await client.stop()


def main(names: list[str]) -> None:
    bytecode()
    rows = []
    for name in names or list(WORKLOADS):
        script = WORKLOADS[name]
        whole, body = bare(script)
        warm = asyncio.run(session(True, script, 3))
        fresh = asyncio.run(session(False, script, 2))
        rows.append((name, whole, body, warm, fresh))
    print(
        "| workload | bare run | bare body | first annotation: cold | warm | target (1.5x body + 0.5 s) "
        "| keepWarm off | job end: cold | warm | keepWarm off | warm fork server RSS |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, whole, body, warm, fresh in rows:
        cold_first, cold_end = warm["runs"][0]
        warm_first = statistics.median(r[0] for r in warm["runs"][1:])
        warm_end = statistics.median(r[1] for r in warm["runs"][1:])
        fresh_first = statistics.median(r[0] for r in fresh["runs"])
        fresh_end = statistics.median(r[1] for r in fresh["runs"])
        target = 1.5 * body + 0.5
        verdict = "met" if warm_first <= target else "missed"
        rss = f"{warm['rss_mb']:.0f} MB" if warm["rss_mb"] is not None else "?"
        print(
            f"| {name} | {whole:.2f} s | {body:.2f} s | {cold_first:.2f} s | **{warm_first:.2f} s** "
            f"| {target:.2f} s ({verdict}) | {fresh_first:.2f} s | {cold_end:.2f} s | {warm_end:.2f} s "
            f"| {fresh_end:.2f} s | {rss} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
