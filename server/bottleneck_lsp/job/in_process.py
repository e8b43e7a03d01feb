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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..analysis import ranking
from ..runner import compilerstack, compiletime, script
from ..runner.paths import FileClassifier
from ..runner.samplepass import SamplePass
from ..schema.model import Document, PassName, PassStatus, RunnerPart
from . import one_run
from .job import new_document
from .spec import JobSpec

__all__ = ["CellRun", "profile_code"]

_NONE: Mapping[str, str] = {}


@dataclass
class CellRun:
    document: Document
    error: BaseException | None  # what the code raised (re-raised by the caller, after the table)


def profile_code(
    code: types.CodeType, namespace: dict[str, Any], name: str, folder: str, cells: Mapping[str, str] = _NONE
) -> CellRun:
    """Execute ``code`` (compiled under ``name``) in ``namespace`` once, sampled whole and
    recorded in windows; ``folder``: where the user's own files are (the notebook's);
    ``cells``: the names the kernel's cells were compiled under, with their labels
    (``In[3]``): their functions' lines are the user's too, and the notes name them so."""
    files = FileClassifier([folder], search_dirs=[*sys.path, os.getcwd()])
    for cell in (name, *cells):
        files.claim(cell)
    torch = _torch()
    sample = SamplePass(files, None, script=os.path.join(folder, name))
    undo: list[Callable[[], None]] = []  # the kernel's inductor settings, put back after the cell
    if torch is not None:
        # torch.compile in the cell: its graph breaks and recompiles, its kernels on the lines
        # they were made from (the cell's compiles carry inductor's provenance), its time
        sample.listen_to_compile(torch, undo)
        sample.record_windows(torch, memory=True, with_cprofile=False)
    compiled_before = compiletime.timings()  # (the kernel's compiles before this cell)
    lazy = None
    if torch is not None and compilerstack.unloaded():
        # the cell's line that makes torch load its compiler stack keeps that one-time work
        lazy = compilerstack.LazyLoad(
            files.is_user, lambda: sample.set_aside(True), lambda: sample.set_aside(False)
        ).install()
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
        if lazy is not None:
            lazy.uninstall()
        for put_back in reversed(undo):
            put_back()
    measured = sample.finish()
    notes = measured.pop("notes", [])
    windowed = measured.pop("windowed", None)
    part.update_json(measured, "the cell's results")
    part.update(notes=[*part.notes, *notes], wall_s=round(time.perf_counter() - started, 6))
    where = [(cells.get(path, path), line, seconds) for path, line, seconds in sample.compiled_at()]
    compiled = compiletime.compile_note(where, compiled_before, ours=sample.profiler_compiles())
    if compiled is not None:
        part.add_note(compiled)
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
