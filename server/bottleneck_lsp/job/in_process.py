"""One piece of code profiled in this very process, once: the ``%%bottleneck`` magic's cell,
which lives in a running kernel and cannot be run again in a child per pass.

The same one run as a script's (``runner/samplepass.py`` with the cpu pass in windows,
``runner/windows.py``): the sampler covers the whole cell, the autograd profiler records
ops and memory per line in windows of it; the parts are put together as a job puts a
script's together (``one_run.placed``) and concluded into one document. Not for the
language server: it never runs user code in its own process.
"""

from __future__ import annotations

import os
import sys
import time
import types
from dataclasses import dataclass
from typing import Any

from ..analysis import ranking
from ..runner import script
from ..runner.paths import FileClassifier
from ..runner.samplepass import SamplePass
from ..schema.model import Document, PassName, PassStatus, RunnerPart
from . import one_run
from .job import new_document
from .spec import JobSpec

__all__ = ["CellRun", "profile_code"]


@dataclass
class CellRun:
    document: Document
    error: BaseException | None  # what the code raised (re-raised by the caller, after the table)


def profile_code(code: types.CodeType, namespace: dict[str, Any], name: str, folder: str) -> CellRun:
    """Execute ``code`` (compiled under ``name``) in ``namespace`` once, sampled whole and
    recorded in windows; ``folder``: where the user's own files are (the notebook's)."""
    files = FileClassifier([folder], search_dirs=[*sys.path, os.getcwd()])
    files.claim(name)
    torch = _torch()
    sample = SamplePass(files, None, script=os.path.join(folder, name))
    if torch is not None:
        sample.record_windows(torch, memory=True, with_cprofile=False)
    part = RunnerPart.given(name=PassName.SAMPLE, status=PassStatus.OK, exit_code=0)
    error: BaseException | None = None
    started = time.perf_counter()
    sample.start()
    try:
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - the cell's own failure: results so far, then re-raised
        error = exc
        if isinstance(exc, KeyboardInterrupt):  # the kernel's interrupt
            part.update(status=PassStatus.TERMINATED, exit_code=None)
        else:
            part.update(status=PassStatus.ERROR, exit_code=1, error=script.describe_exception(exc, files))
    finally:
        sample.stop()
    measured = sample.finish()
    notes = measured.pop("notes", [])
    windowed = measured.pop("windowed", None)
    part.update_json(measured, "the cell's results")
    part.update(notes=[*part.notes, *notes], wall_s=round(time.perf_counter() - started, 6))
    doc = new_document(JobSpec(script=os.path.join(folder, name), cwd=os.getcwd(), python=sys.executable))
    sampled = part.as_pass()
    doc.passes.append(sampled)
    if windowed is not None:
        cpu = RunnerPart.given(name=PassName.CPU, status=part.status, exit_code=part.exit_code)
        cpu.update_json(windowed, "the windows' results")
        doc.passes.extend(one_run.placed(cpu, sampled))
    doc.update(runs=1)
    return CellRun(ranking.conclude(doc), error)


def _torch() -> Any:
    """torch, where the kernel can import it (the sampler alone otherwise)."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - no torch: lines by the sampler only
        return None
    return torch
