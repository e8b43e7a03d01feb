"""End to end against the old way, cold and warm, measured side by side in one run (not a
test): on each workload, alternating,
- the old way (``oldway.py``: the removed torch.utils.bottleneck's passes in one process);
- cold: our command line as a user runs it (``python -m bottleneck_lsp --passes cprofile,cpu
  --event-budget 0``: its start, a fork server importing torch, the passes, the report);
- warm: the same passes from the real language server over stdio (settings ``passes``
  cprofile and cpu, ``eventBudget`` 0), whose fork server a first profile of the session
  already started (``keepWarm``, the default): from the command to the job's end.

Medians of three (one warm-up profile of the server first, left out).

Usage: .venv/bin/python benchmarks/end_to_end.py [workload ...]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from engine import WORKLOADS, bytecode, cli, wall  # noqa: E402

from lsp_helpers import SERVER, start_session  # noqa: E402

NAMES = ("trivial", "train_small", "tiny_ops", "event_heavy")
REPEATS = 3


async def job(client: LanguageClient, script: Path) -> float:
    """Seconds from ``bottleneck.profile`` to the job's end (the command's answer)."""
    uri = uris.from_fs_path(str(script)) or ""
    begin = time.perf_counter()
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="bottleneck.profile", arguments=[{"uri": uri}])
    )
    seconds = time.perf_counter() - begin
    assert result["status"] == "ok", result
    return seconds


async def measure(script: Path) -> dict[str, float]:
    client = await ClientServerConfig(server_command=SERVER).start()
    settings = {
        "python": sys.executable,
        "timeout": 600,
        "passes": ["cprofile", "cpu"],
        "eventBudget": 0,
        "keepWarm": True,
    }
    await start_session(client, "visual-studio-code", str(script.parent), settings)
    old: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    try:
        first = await job(client, script)  # starts the session's fork server
        for _ in range(REPEATS):  # alternating: a slower minute hits each side alike
            old.append(wall([sys.executable, str(HERE / "oldway.py"), str(script)])[0])
            cold.append(cli(script)[0])
            warm.append(await job(client, script))
    finally:
        await client.shutdown_session()
        await client.stop()
    return {
        "old": statistics.median(old),
        "cold": statistics.median(cold),
        "warm": statistics.median(warm),
        "first": first,
    }


def main(names: list[str]) -> None:
    bytecode()
    rows = [(name, asyncio.run(measure(WORKLOADS[name]))) for name in names or NAMES]
    print(
        "| workload | old way | ours cold (command line) | cold / old | ours warm (server) "
        "| warm / old | the session's first profile (server) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, r in rows:
        print(
            f"| {name} | {r['old']:.2f} s | {r['cold']:.2f} s | **{r['cold'] / r['old']:.2f}x** "
            f"| {r['warm']:.2f} s | **{r['warm'] / r['old']:.2f}x** | {r['first']:.2f} s |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
