"""Shared helpers: run real jobs with real torch on the planted scripts."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from bottleneck_lsp.jobs import Job, JobSpec

SCRIPTS = Path(__file__).parent / "scripts"


def marker_line(script: str, marker: str = "# HOT") -> int:
    """The 1-based line of a script that carries a marker comment."""
    for number, text in enumerate((SCRIPTS / script).read_text().splitlines(), start=1):
        if text.rstrip().endswith(marker):
            return number
    raise AssertionError(f"{marker} not found in {script}")


def run_job(script: str, *args: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("python", sys.executable)
    job = Job(JobSpec(script=str(SCRIPTS / script), args=tuple(args), **spec))
    return asyncio.run(job.run())
