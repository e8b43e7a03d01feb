"""The server under load, measured (not a test): the soak of tests/test_soak.py (50 profile
requests with stops and restarts, edits to a 100,000-line file with 10,000 hot lines during
the runs, codeLens and hover throughout), printed as latency percentiles against the
targets, and the server's memory at the 10th and 50th request.

The client runs in this process: its own parsing of the 10,000-diagnostic messages falls
inside some measured round trips (the p99), as an editor's would on its side.

Usage: .venv/bin/python benchmarks/soak.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_soak import drive  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bottleneck-soak-") as folder:
        figures = asyncio.run(drive(Path(folder)))
    print("## Soak: 50 requests, edits to a 100,000-line file with 10,000 hot lines")
    print()
    print(figures.summary())
    print("targets: codeLens and hover p99 <= 10 ms on a job's scale; RSS growth 10th->50th < 50 MB")


if __name__ == "__main__":
    main()
