"""The contract between the job (host side) and the runner (inside the user's interpreter),
in one place: pass names, statuses, the runner's command line, its environment, the files
it writes, the result schema's name and version.

Standard library only: the runner imports it inside the user's interpreter.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from .model import PassName, PassStatus

SCHEMA_NAME = "bottleneck-lsp.result"
SCHEMA_VERSION = 6
# what readers accept: version 3 is version 4 without the files' line hashes
# (``Document.sources``), version 2 is version 3 without one-run windows (``Pass.windows``,
# ``Document.runs``): every field they have means the same; version 5 is version 6 without
# torch.compile's kernels on their lines (``OpLine.compiled``)
READABLE_VERSIONS = (2, 3, 4, 5, 6)
# How the notes on the one run's windows open (the sample pass's on their cost, the cpu
# pass's on what they cover): a cell's table says coverage its own way (formats/cell_table.py)
WINDOWS_NOTE = "the cpu pass recorded in"
COVERAGE_NOTE = "op CPU time and memory"
COVERAGE_NOTE_DEVICE = "device time, kernels and device memory"  # (the cuda pass's, on a GPU)

# The passes, in the order they run (``PassName``, with the statuses, is in model.py).
PASSES = tuple(PassName)
# Passes that need a CUDA device: left out when none is present (unless asked for).
DEVICE_PASSES = (PassName.CUDA,)
# Passes that run without torch (the others are skipped when torch is not importable).
TORCHLESS_PASSES = (PassName.SAMPLE, PassName.CPROFILE)
# Passes whose profiler events can be saved as a raw recording (--save-raw); the sample
# pass has events only on a GPU (device activity).
RAW_PASSES = (PassName.SAMPLE, PassName.CPU, PassName.CUDA)

# A pass ending so: the later passes are skipped (the script cannot run, or was stopped).
# A crash is not among them: it may be the pass's own (memory, a profiler fault).
STOPPING_STATUSES = frozenset(
    {PassStatus.SYNTAX_ERROR, PassStatus.TIMEOUT, PassStatus.CANCELLED, PassStatus.TERMINATED}
)
# A job whose run ended so holds part of a run only: not what a later run is compared with.
PARTIAL_STATUSES = frozenset({PassStatus.TIMEOUT, PassStatus.CANCELLED, PassStatus.TERMINATED})
# The skip reason of the passes a stopped job did not start; the job's status is then
# "cancelled" (analysis.overall_status), even when no pass had started.
JOB_STOPPED = "the job was stopped"

RUNNER_MODULE = "bottleneck_lsp.runner"
# A job's and a fork server's private folder (``processes.fork_launch.runner_folder``) is named so: what
# the runner side may remove when whoever made it is gone.
RUNNER_FOLDER_PREFIX = "bottleneck-lsp-"
FORKSERVER_MODULE = "bottleneck_lsp.runner.forkserver"  # forks runners: start-up paid once
# The user's own PYTHONPATH, kept here while the runner's folder leads the path.
ORIGINAL_PYTHONPATH = "BOTTLENECK_LSP_ORIGINAL_PYTHONPATH"
# Beside a runner's result part: made when the runner took a stop (or a timeout) and is
# writing what it measured; the parent waits for a runner that made it, not for one that did not.
STOP_TAKEN_SUFFIX = ".stopping"
# Beside it too: every thread's Python stack, written by faulthandler when the runner's exit
# held the GIL past its bound after the script ended (runner/lingering.py)
LINGER_STACKS_SUFFIX = ".stacks"


# Distributed jobs: each pass is one launch of torch's own launcher (torchrun), with the
# runner as every worker's entry point; each rank writes its part to ``rank_part(out, rank)``.
LAUNCHER_MODULE = "torch.distributed.run"
LAUNCHER_WRAPPER = "bottleneck_lsp.runner.launcher"  # torchrun, ending with its parent
# Collective ops, as the autograd profiler names them: the c10d dispatcher ops the ranks
# issue (``c10d::allreduce_``), the backends' work (``gloo:all_reduce``, ``nccl:all_reduce``)
# and the communication ranges torch records (``record_param_comms``).
COLLECTIVE_PREFIXES = ("c10d::", "gloo:", "nccl:", "record_param_comms")


def rank_part(out: str, rank: int) -> str:
    """Where rank ``rank`` of a distributed pass writes its part (``out``: the pass's)."""
    return f"{out}.rank{rank}"


# Not a pass: in a pass list, it has the autograd passes (cpu, cuda) record allocations too.
MEMORY = "memory"

# A Python-heavy autograd pass: torch's Python tracer (with_stack) records every Python call
# and generator resume, and stopping the profiler and reading them costs about 10 us each
# (measured here: docs/performance.md). Past this many calls, and this many times the
# script's own time, the pass's note says so, and the job's progress warns before it starts
# (from the cProfile pass's count, which matches the tracer's).
PYTHON_HEAVY_CALLS = 500_000
PYTHON_HEAVY_RATIO = 3.0
TRACER_S_PER_CALL = 10e-6


def unknown_passes(names: list[str] | tuple[str, ...]) -> str | None:
    """The error for pass names that do not exist, or None."""
    bad = [p for p in names if p not in PASSES and p != MEMORY]
    if not bad and any(p in PASSES for p in names):
        return None
    if not bad and MEMORY in names:
        return f"{MEMORY} is recorded by the cpu or cuda pass: add one of them (such as cpu,{MEMORY})"
    return (
        f"unknown pass {', '.join(bad) or '(none given)'}; choose from {', '.join(PASSES)} "
        f"(and {MEMORY}: the cpu and cuda passes record allocations too)"
    )


def no_cuda_reason(version: str, cuda_compiled: str | None, hip_compiled: str | None = None) -> str:
    """Why a CUDA pass cannot run with this torch: one wording, wherever it is decided."""
    if not cuda_compiled and not hip_compiled:
        return f"torch {version} was built without CUDA"
    return f"torch {version} has CUDA {cuda_compiled or hip_compiled} but found no CUDA device"


def progress_file(out: str) -> str:
    """Where the one run's runner writes what it has measured so far, each time a window
    closes (at most once a second): a ``RunnerPart`` of the sample pass with its ``windowed``
    part, replaced whole (written beside, then renamed). The job shows it as the run goes."""
    return out + ".progress.json"


def environment_file(out: str) -> str:
    """Where the first pass's runner writes the environment summary as soon as it has it,
    beside its result file ``out``: the job reads it when the runner died before writing
    its result."""
    return out + ".environment.json"


@dataclass
class RunnerArgs:
    """The runner's command line: built by the job (``argv``), read by the runner (``parse``)."""

    pass_name: str
    script: str  # the file that runs (with ``module``: the module's file, found by the job)
    out: str
    cwd: str
    module: str | None = None  # run as ``python -m module`` (runpy), not as a file
    argv0: str | None = None  # the script's sys.argv[0] (JobSpec.argv0); None: ``script``
    roots: list[str] = field(default_factory=list)
    strip_path: str | None = None  # the runner's own folder, taken off the script's sys.path
    environment: bool = False  # collect the environment summary (the first pass)
    exact_lines: bool = True
    # the autograd passes count entries into the user's functions ("passes disagree"): only
    # worth its cost (a profile hook on Python 3.10/3.11) when another pass counts too
    count_entries: bool = True
    # the cpu pass also records cProfile's table, in place of the entry counter, for the
    # job's cprofile pass (the job's choice: job/cprofile_ride.py); a pass that cannot (the
    # Python tracer holds the profile hook) records none, and the job runs cprofile alone
    with_cprofile: bool = False
    compiler_stack: bool = True  # load torch's compiler stack before the script (compilerstack.py)
    inductor: bool = False  # ... and inductor's code generator with it (a torch.compile call)
    event_budget: int = 0  # 0: no bound
    memory: bool = False  # the autograd passes also record allocations (profile_memory)
    save_raw: str | None = None  # where to write the raw recording
    wait_fd: int | None = None  # started ahead of its turn: wait for a byte on this fd
    per_rank: bool = False  # a torchrun worker: write rank_part(out, RANK), exit as the script did
    shapes: bool = False  # record input shapes: the bytes each collective sent (comms.py)
    # the sample pass also records the cpu pass in windows of its run (runner/windows.py)
    windows: bool = False
    args: list[str] = field(default_factory=list)  # the script's arguments

    def argv(self, python: str) -> list[str]:
        return [python, "-m", RUNNER_MODULE, *self.options()]

    def options(self) -> list[str]:
        """The command line after the module's name (what a fork server's child parses)."""
        cmd = ["--pass", self.pass_name, "--script", self.script, "--out", self.out, "--cwd", self.cwd]
        if self.module is not None:
            cmd += ["--module", self.module]
        if self.argv0 is not None:
            cmd += ["--argv0", self.argv0]
        if self.strip_path is not None:
            cmd += ["--strip-path", self.strip_path]
        for root in self.roots:
            cmd += ["--root", root]
        if self.environment:
            cmd.append("--environment")
        if not self.exact_lines:
            cmd.append("--no-exact-lines")
        if not self.count_entries:
            cmd.append("--no-entry-count")
        if self.with_cprofile:
            cmd.append("--with-cprofile")
        if not self.compiler_stack:
            cmd.append("--lazy-compiler-stack")
        elif self.inductor:
            cmd.append("--inductor")
        if self.event_budget:
            cmd += ["--event-budget", str(self.event_budget)]
        if self.memory:
            cmd.append("--memory")
        if self.wait_fd is not None:
            cmd += ["--wait-fd", str(self.wait_fd)]
        if self.save_raw is not None:
            cmd += ["--save-raw", self.save_raw]
        if self.per_rank:
            cmd.append("--per-rank")
        if self.shapes:
            cmd.append("--shapes")
        if self.windows:
            cmd.append("--windows")
        return [*cmd, "--", *self.args]

    @classmethod
    def parse(cls, argv: list[str]) -> RunnerArgs:
        parser = argparse.ArgumentParser(prog=f"python -m {RUNNER_MODULE}")
        parser.add_argument("--pass", dest="pass_name", choices=[p.value for p in PASSES], required=True)
        parser.add_argument("--script", required=True)
        parser.add_argument("--out", required=True)
        parser.add_argument("--cwd", required=True)
        parser.add_argument("--module", default=None)
        parser.add_argument("--argv0", default=None)
        parser.add_argument("--root", dest="roots", action="append", default=[])
        parser.add_argument("--strip-path")
        parser.add_argument("--environment", action="store_true")
        parser.add_argument("--no-exact-lines", dest="exact_lines", action="store_false")
        parser.add_argument("--no-entry-count", dest="count_entries", action="store_false")
        parser.add_argument("--with-cprofile", action="store_true")
        parser.add_argument("--lazy-compiler-stack", dest="compiler_stack", action="store_false")
        parser.add_argument("--inductor", action="store_true")
        parser.add_argument("--event-budget", type=int, default=0)
        parser.add_argument("--memory", action="store_true")
        parser.add_argument("--save-raw", default=None)
        parser.add_argument("--wait-fd", type=int, default=None)
        parser.add_argument("--per-rank", action="store_true")
        parser.add_argument("--shapes", action="store_true")
        parser.add_argument("--windows", action="store_true")
        parser.add_argument("args", nargs=argparse.REMAINDER)
        ns = parser.parse_args(argv)
        if ns.args and ns.args[0] == "--":
            ns.args = ns.args[1:]
        return cls(**vars(ns))
