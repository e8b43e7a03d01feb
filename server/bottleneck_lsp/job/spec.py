"""What a profiling job is asked to do (``JobSpec``, shared by the command line and the
language server) and its check before anything runs (``validate``: a clear ``JobError``
for the user, the spec made absolute and complete for ``job.job.Job``)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace

from ..notebook.cell_paths import is_notebook
from ..notebook.document import NotebookError, read_notebook
from ..paths.module_path import ModuleLookupError, find_module_file, search_path
from ..paths.project_root import project_root
from ..processes.fork_launch import find_python
from ..schema import torchrun_options
from ..schema.contract import MEMORY, PASSES, unknown_passes

MAX_NPROC_PER_NODE = 64


class JobError(Exception):
    """The job cannot start: a clear message for the user, nothing was run."""


@dataclass(frozen=True)
class JobSpec:
    script: str  # with ``module``: found by validate (the module's file)
    args: tuple[str, ...] = ()
    python: str = sys.executable
    cwd: str | None = None
    roots: tuple[str, ...] = ()
    passes: tuple[str, ...] | None = None  # None: sample, cprofile, cpu, and cuda when available
    timeout: float | None = None  # per pass, seconds
    # per pass, seconds: each pass is stopped then and what it recorded is its result (a
    # window of a long run); the next pass still runs
    duration: float | None = None
    exact_lines: bool = True
    event_budget: int = 250_000  # torch calls recorded per autograd pass; 0: no bound
    fork: bool = True  # fork every pass from one fork server: start-up paid once (processes/fork_server.py)
    # cProfile always in a run of its own; False: in the cpu pass's run where that costs
    # little (job/cprofile_ride.py)
    separate_cprofile: bool = False
    # One run per pass (sample, cprofile, cpu), as before one run: whole-run op totals, at
    # the cost of running the script three times. False: the sample pass's run records the
    # cpu pass in windows and cProfile within them (runner/windows.py, job/one_run.py).
    separate_runs: bool = False
    prestart: bool = True  # without a fork server: start the pass after cprofile while cprofile runs
    save_raw: str | None = None  # a folder: each profiler pass writes its raw recording there (RAW_PASSES)
    # the autograd passes record allocations (memory per line); with ``passes`` given, it is
    # whether they name "memory"
    memory: bool = True
    # A distributed job: each pass launches the script with torchrun, this many processes
    # per node, with these torchrun options (torchrun_options.LAUNCHER_OPTIONS); 1 and none: one process.
    nproc_per_node: int = 1
    launcher: tuple[str, ...] = ()
    # Several nodes: a folder every node sees at this path, where every rank writes its
    # parts; node 0 gathers them all (the others report their own ranks).
    parts_dir: str | None = None
    # A distributed job's autograd passes record input shapes, for the bytes each collective
    # sent: memory-hungry on some models (docs/performance.md), so asked for.
    collective_sizes: bool = False
    # Run as ``python -m module`` (a dotted name, found under the working directory or
    # PYTHONPATH: paths/module_path.py), not as the file ``script``.
    module: str | None = None
    # What the script's sys.argv[0] reads: the name as typed on the command line, as
    # ``python script.py`` gives it (set by validate); None: the script's absolute path.
    argv0: str | None = None

    @property
    def distributed(self) -> bool:
        return self.nproc_per_node > 1 or bool(self.launcher)

    def local_ranks(self) -> list[int]:
        """The ranks this node's launcher starts (static rendezvous: node rank x count)."""
        node, _count = torchrun_options.nodes(self.launcher)
        return [node * self.nproc_per_node + i for i in range(self.nproc_per_node)]

    def report_ranks(self) -> list[int]:
        """The ranks this node's document holds: all of them on node 0 with a shared parts
        folder, else its own."""
        node, count = torchrun_options.nodes(self.launcher)
        if self.parts_dir is not None and node == 0:
            return list(range(count * self.nproc_per_node))
        return self.local_ranks()


def _resolve_python(python: str) -> str:
    found = find_python(python)
    if found is None:
        raise JobError(f"Python interpreter not found or not executable: {python}")
    return found


def validate(spec: JobSpec) -> JobSpec:
    """Check the request before anything runs; raise JobError with a clear message."""
    cwd = os.path.abspath(spec.cwd) if spec.cwd else os.getcwd()
    if not spec.cwd and spec.module is None and is_notebook(spec.script):
        cwd = os.path.dirname(os.path.abspath(spec.script))  # as Jupyter runs it: in its folder
    if not os.path.isdir(cwd):
        raise JobError(f"Working directory not found: {spec.cwd}")
    spec, roots = _module_file(spec, cwd)
    script = os.path.abspath(spec.script)
    argv0 = None
    if spec.module is None and not os.path.isabs(spec.script) and cwd == os.getcwd():
        argv0 = spec.script  # relative to where the script starts, as typed
    _check_script(spec.script, script)
    roots = _roots_of(spec, script, roots)
    passes, memory = _passes_of(spec)
    _check_numbers(spec)
    launcher, distributed = _launcher_of(spec)
    if is_notebook(script):
        _check_notebook(script, distributed)
    parts_dir = _parts_dir(spec, cwd, distributed)
    save_raw = _save_raw_dir(spec, cwd)
    return replace(  # every other field as given
        spec,
        script=script,
        argv0=argv0,
        args=tuple(spec.args),
        python=_resolve_python(spec.python),
        cwd=cwd,
        roots=roots,
        passes=passes,
        event_budget=max(spec.event_budget, 0),
        save_raw=save_raw,
        memory=memory,
        launcher=launcher,
        parts_dir=parts_dir,
        # A launcher starts every worker itself: no fork server, no runner started ahead.
        fork=spec.fork and not distributed,
        prestart=spec.prestart and not distributed,
    )


def _module_file(spec: JobSpec, cwd: str) -> tuple[JobSpec, tuple[str, ...]]:
    """For ``-m``: the module's file as the script, its package the first root."""
    roots = tuple(os.path.abspath(r) for r in spec.roots)
    if spec.module is None:
        return spec, roots
    try:
        found = find_module_file(spec.module, search_path(cwd, os.environ.get("PYTHONPATH")))
    except ModuleLookupError as exc:
        raise JobError(str(exc)) from None
    # The whole package is the user's code, not only the module's folder.
    return replace(spec, script=found.file), (found.base, *(r for r in roots if r != found.base))


def _check_script(given: str, script: str) -> None:
    """A regular file that can be read."""
    if not os.path.exists(script):
        raise JobError(f"Script not found: {given}")
    if os.path.isdir(script):
        raise JobError(f"Script is a folder, not a file: {given}")
    if not os.path.isfile(script):  # opening a FIFO would wait for a writer
        raise JobError(f"Script is not a regular file (a pipe, a socket or a device): {given}")
    try:
        # Opening tells what os.access cannot: root reads anything, a socket nothing.
        with open(script, "rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise JobError(f"Script is not readable: {given} ({exc.strerror or exc})") from None


def _check_notebook(script: str, distributed: bool) -> None:
    """A notebook that can run: nbformat 4, Python, some code; one process."""
    try:
        notebook = read_notebook(script)
    except NotebookError as exc:
        raise JobError(str(exc)) from None
    if not notebook.code_cells:
        raise JobError(f"{os.path.basename(script)} has no code cells: nothing to profile")
    if distributed:
        raise JobError(
            "A notebook runs as one process: --nproc-per-node and torchrun's options are for scripts"
        )


def _roots_of(spec: JobSpec, script: str, roots: tuple[str, ...]) -> tuple[str, ...]:
    """The folders of the user's code: those given, a linked script's real folder, its project."""
    real_folder = os.path.dirname(os.path.realpath(script))
    if spec.module is None and real_folder != os.path.dirname(script) and real_folder not in roots:
        # A link to a script elsewhere: python puts the target's folder first on sys.path,
        # and so do the passes (runner/script.py); what it imports from there is the user's
        roots = (*roots, real_folder)
    project = project_root(script)
    if project is not None and project not in roots and project != os.path.dirname(script):
        roots = (*roots, project)  # the script's project: its other folders are the user's too
    return roots


def _passes_of(spec: JobSpec) -> tuple[tuple[str, ...] | None, bool]:
    """The passes in their order, and whether memory is recorded (``memory`` among them)."""
    if spec.passes is None:
        return None, spec.memory
    problem = unknown_passes(spec.passes)
    if problem:
        raise JobError(problem[0].upper() + problem[1:])
    return tuple(p for p in PASSES if p in spec.passes), MEMORY in spec.passes


def _check_numbers(spec: JobSpec) -> None:
    if spec.timeout is not None and spec.timeout <= 0:
        raise JobError(f"Timeout must be positive, got {spec.timeout}")
    if spec.duration is not None and spec.duration <= 0:
        raise JobError(f"Duration must be positive, got {spec.duration}")
    if not 1 <= spec.nproc_per_node <= MAX_NPROC_PER_NODE:
        raise JobError(
            f"--nproc-per-node must be between 1 and {MAX_NPROC_PER_NODE}, got {spec.nproc_per_node}"
        )


def _launcher_of(spec: JobSpec) -> tuple[tuple[str, ...], bool]:
    """torchrun's options, checked, and whether the job is distributed."""
    try:
        launcher = torchrun_options.check_options(tuple(spec.launcher))
        torchrun_options.nodes(launcher)
    except torchrun_options.LaunchError as exc:
        raise JobError(str(exc)[0].upper() + str(exc)[1:]) from None
    distributed = spec.nproc_per_node > 1 or bool(launcher)
    if spec.collective_sizes and not distributed:
        raise JobError("--collective-sizes is for a distributed job (--nproc-per-node, --nnodes)")
    return launcher, distributed


def _parts_dir(spec: JobSpec, cwd: str, distributed: bool) -> str | None:
    if not spec.parts_dir:
        return None
    if not distributed:
        raise JobError("--parts-dir is for a distributed job (--nproc-per-node, --nnodes)")
    parts_dir = os.path.abspath(os.path.join(cwd, spec.parts_dir))
    try:
        os.makedirs(parts_dir, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise JobError(f"Cannot create the parts folder: {spec.parts_dir} ({exc.strerror or exc})") from None
    return parts_dir


def _save_raw_dir(spec: JobSpec, cwd: str) -> str | None:
    if not spec.save_raw:
        return None
    save_raw = os.path.abspath(os.path.join(cwd, spec.save_raw))
    try:
        os.makedirs(save_raw, exist_ok=True)
    except OSError as exc:
        raise JobError(
            f"Cannot create the folder for raw recordings: {spec.save_raw} ({exc.strerror or exc})"
        ) from None
    if not os.access(save_raw, os.W_OK | os.X_OK):
        raise JobError(f"The folder for raw recordings is not writable: {spec.save_raw}")
    return save_raw
