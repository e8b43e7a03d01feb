"""Running a profiling job: the plan of passes, one runner subprocess each, in the user's
interpreter (by default one: the sample pass's run records the cpu pass and cProfile in
windows, ``one_run.py``); the result document assembled as they end.

Shared by the command line and the language server. ``Job.run`` reads as plan (which
passes, which are skipped and why), run (``processes.runner_process.RunnerProcess``: one process's life),
collect (the document, concluded after each pass for progressive presentation).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import glob
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

from .. import __version__
from ..analysis import distributed, ranking
from ..processes import crash_site, torchrun
from ..processes.fork_server import ForkServer, ForkServerError, environ, runner_folder
from ..processes.runner_process import OnOutput, RunnerProcess
from ..processes.unwanted_lines import Unwanted
from ..schema import torchrun_options
from ..schema.contract import (
    DEVICE_PASSES,
    JOB_STOPPED,
    PASSES,
    PYTHON_HEAVY_CALLS,
    PYTHON_HEAVY_RATIO,
    RAW_PASSES,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    STOPPING_STATUSES,
    TORCHLESS_PASSES,
    TRACER_S_PER_CALL,
    RunnerArgs,
    environment_file,
    no_cuda_reason,
    progress_file,
    rank_part,
)
from ..schema.model import (
    CProfileTable,
    Document,
    Launch,
    Pass,
    PassName,
    PassStatus,
    RankRun,
    RunnerPart,
    Startup,
    Tool,
)
from . import cprofile_ride, one_run, progress, sources
from .compiler_guess import guess as guess_compiler_stack
from .spec import JobSpec, validate


@dataclass
class JobEvent:
    kind: str  # "pass_start" | "pass_end" | "output" | "progress" (the one run's so far: ``doc``)
    pass_name: str = ""
    index: int = 0
    total: int = 0
    status: str = ""
    stream: str = ""
    text: str = ""
    data: bytes = b""  # output: the bytes as the script wrote them (``text`` is their UTF-8)
    # pass_end: the result so far (the passes that ended, their ranking), for progressive
    # presentation; the final document comes from run().
    doc: Document | None = None
    # pass_start: what to expect of the pass, when it stands out ("" mostly: see forecast)
    forecast: str = ""


def counts_entries(name: str, passes: tuple[str, ...] | None) -> bool:
    """Whether an autograd pass counts entries into the user's functions: for the "passes
    disagree" check (``ranking.disagreements``), which compares them with another pass's
    counts, so only when another pass that counts (cprofile, cpu, cuda) is planned."""
    counting = (PassName.CPROFILE, PassName.CPU, PassName.CUDA)
    return name in counting and any(p in counting and p != name for p in (passes or PASSES))


def forecast(name: str, doc: Document, exact_lines: bool = True) -> str:
    """Before an autograd pass that records with the Python tracer (the cuda pass, or the
    cpu pass without exact lines) of a Python-heavy script: how long recording its Python
    calls may take, from the cProfile pass's count of them (the tracer records the same
    calls). The cpu pass with exact lines records no Python call (runner/lineranges.py)."""
    if name != PassName.CUDA and (name != PassName.CPU or exact_lines):
        return ""
    counted = next((p for p in doc.passes if p.name == PassName.CPROFILE and p.status == PassStatus.OK), None)
    if counted is None or counted.event_count < PYTHON_HEAVY_CALLS:
        return ""
    expected = counted.event_count * TRACER_S_PER_CALL
    if expected < PYTHON_HEAVY_RATIO * (counted.script_wall_s or 0.0):
        return ""
    return (
        f"cProfile counted {counted.event_count:,} Python calls: recording them may add about "
        f"{expected:.0f} s to this pass"
    )


def _window(duration: float | None) -> str:
    """What the progress says before each pass of a windowed job (``--duration``)."""
    return f"stopped after {duration:g} s: a window of the run" if duration is not None else ""


def new_document(spec: JobSpec) -> Document:
    """The job's document before any pass: what ran, where, and (distributed) on which ranks."""
    assert spec.cwd is not None
    doc = Document(
        schema=SCHEMA_NAME,
        version=SCHEMA_VERSION,
        tool=Tool(name="bottleneck-lsp", version=__version__),
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        script=spec.script,
        module=spec.module,
        args=list(spec.args),
        cwd=spec.cwd,
        roots=[os.path.dirname(spec.script), *spec.roots],
        python=spec.python,
        passes=[],
        status=PassStatus.OK,
        # written only for a distributed job
        absent=frozenset(
            {"replay"}  # made by bottleneck-lsp replay only
            | ({"module"} if spec.module is None else set())
            | (set() if spec.distributed else {"launch", "ranks", "distributed"})
        ),
    )
    ranks = spec.report_ranks() if spec.distributed else None
    if ranks is not None:
        doc.ranks = [RankRun(rank=r, passes=[]) for r in ranks]
        doc.launch = Launch(nproc_per_node=spec.nproc_per_node, options=list(spec.launcher))
    return doc


class Job:
    """One profiling job. ``await run()`` returns the result document."""

    def __init__(
        self,
        spec: JobSpec,
        on_event: Callable[[JobEvent], None] | None = None,
        forks: ForkServer | None = None,
    ) -> None:
        """``forks``: a fork server kept warm by the caller, for ``spec.python``; without
        one (and with ``spec.fork``) the job starts its own and ends it when it ends."""
        self.spec = validate(spec)
        self.on_event = on_event or (lambda event: None)
        self._forks = forks
        self._owns_forks = False
        self._fork_note = ""
        self._running: RunnerProcess | None = None
        self._waiting: RunnerProcess | None = None  # started ahead of its turn, not yet running
        self._discarded: list[RunnerProcess] = []
        self._stopped = False
        self._parts: str | None = None  # a distributed job's shared parts folder (several nodes)
        self._workdir: str | None = None  # the job's private folder, while it runs
        # Load torch's compiler stack before the script (a guess from its source, then what
        # the passes saw): see job/compiler_guess.py and runner/compilerstack.py.
        self._compiler_stack = True
        self._inductor = False  # and inductor's code generator (the script calls torch.compile)
        # The cprofile pass rides in the cpu pass's run (cprofile_ride.py); and, when it runs
        # alone after all, why
        self._riding = False  # until the cpu pass ends
        self._alone_note = ""
        # One run (one_run.py): the sample pass's run records the cpu pass in windows, and
        # cProfile within them where the cprofile pass is planned
        self._once = False
        self._once_cprofile = False
        self._once_cuda = False  # on a GPU: the cuda pass recorded in the one run's windows too
        self._windowed: RunnerPart | None = None  # what the sample pass's run recorded so
        self._windowed_device: RunnerPart | None = None  # ... and on a GPU its cuda pass
        self._runs = 0  # times the script ran

    def use_forks(self, forks: ForkServer | None) -> None:
        """Fork the passes from this server (kept warm by the caller), before ``run``."""
        if forks is not None:
            self._forks = forks

    # -- control ---------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the job: the running pass is terminated (its results kept where the
        runner can write them), later passes do not start."""
        self._stopped = True
        self._discard_waiting()
        if self._running is not None:
            self._running.terminate()

    def kill(self) -> None:
        """Kill the running pass's whole process group at once (synchronous, no grace)."""
        self._stopped = True
        self._discard_waiting()
        if self._running is not None:
            self._running.kill()
        if self._owns_forks and self._forks is not None:
            self._forks.kill()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)  # run()'s clean-up will not come

    # -- running ---------------------------------------------------------------------
    async def run(self) -> Document:
        spec = self.spec
        doc = new_document(spec)
        planned = [PassName(name) for name in spec.passes or PASSES]
        workdir = self._workdir = runner_folder()
        self._parts = _shared_parts(spec)
        try:
            await self._start_forks()
            planned = self._plan_once(planned)
            if self._once:
                # one run: what torch imports lazily for the script stays on the line that
                # made it, as one-time work (the bare run pays it there): nothing loads it first
                self._compiler_stack = False
            elif not spec.distributed:
                guessed = await asyncio.to_thread(guess_compiler_stack, spec.script, spec.roots)
                self._compiler_stack, self._inductor = guessed.stack, guessed.inductor
            await self._ready_compiler_stack()
            stop_reason = ""
            for index, name in enumerate(planned):
                if name == PassName.CPROFILE and self._riding:
                    continue  # no run of its own: the cpu pass records its table
                rider = None
                part = self._skip_reason(name, doc, stop_reason)
                if part is not None:
                    self._discard_waiting()  # a runner started for this pass: not wanted
                else:
                    part, rider = await self._run_planned(name, index, planned, doc, stop_reason)
                if name == PassName.CPU and self._riding:
                    self._place_ridden(rider, part, doc, planned, index)
                if not part.omit:
                    doc.passes.append(part)
                if self._once and name == PassName.SAMPLE:
                    self._place_windows(part, doc, planned, index, stop_reason)
                stop_reason = stop_reason or _stop_reason(part)
                if not stop_reason and ranking.runner_never_started(doc):
                    # the next passes would end the same way
                    stop_reason = f"{spec.python} never ran the runner"
                if name == PassName.SAMPLE and PassName.CPROFILE in planned[index + 1 :]:
                    # decided before the progress says how many passes are left
                    later = planned[planned.index(PassName.CPROFILE, index) + 1 :]
                    self._riding = self._may_ride(doc, later, stop_reason)
                if part.status != PassStatus.SKIPPED:
                    counted = self._counted(planned, doc, stop_reason)
                    event = JobEvent("pass_end", name, counted.index(name), len(counted), part.status)
                    event.doc = ranking.conclude(replace(doc, passes=list(doc.passes)))
                    self.on_event(event)
        finally:
            self._discard_waiting()
            for gone in self._discarded:
                await gone.reap()
            self._discarded.clear()
            if self._owns_forks and self._forks is not None:
                await self._forks.close()
            shutil.rmtree(workdir, ignore_errors=True)
            self._workdir = None
        doc.update(runs=self._runs)
        doc = ranking.conclude(doc)
        doc.update(sources=await asyncio.to_thread(sources.read, doc))  # what ``diff`` aligns
        return doc

    async def _run_planned(
        self, name: PassName, index: int, planned: list[PassName], doc: Document, stop_reason: str
    ) -> tuple[Pass, CProfileTable | None]:
        """One planned pass run (on every rank of a distributed job): the job's pass, and the
        cProfile table that rode in its run, if any."""
        spec, workdir = self.spec, self._workdir
        assert workdir is not None
        counted = self._counted(planned, doc, stop_reason)
        self.on_event(
            JobEvent(
                "pass_start",
                name,
                counted.index(name),
                len(counted),
                forecast=_window(spec.duration)
                or self._once_forecast(name)
                or forecast(name, doc, spec.exact_lines),
            )
        )
        following = planned[index + 1] if index + 1 < len(planned) else None
        forking = self._forking()
        shown = (doc, counted.index(name), len(counted)) if self._once and name == PassName.SAMPLE else None
        parts = await self._run_pass(name, workdir, index == 0, following, shown)
        self._runs += 1
        rider = parts[0].cprofile if parts else None
        self._windowed = parts[0].windowed if parts and self._once else None
        self._windowed_device = parts[0].windowed_device if parts and self._once_cuda else None
        # (given up by this pass's own start, which said why, it did not end here)
        if forking is not None and forking.gone and not self._stopped and not self._fork_note:
            self._note_fork_server_death(forking)
        for each in parts:
            crash_site.place(each, doc.roots)
        typed = [each.as_pass() for each in parts]
        part = typed[0]
        if spec.distributed:
            for run, rank_pass in zip(doc.ranks, typed, strict=True):
                run.passes.append(rank_pass)
            part = distributed.job_pass(typed)
        doc.environment = parts[0].environment or doc.environment
        if part.startup is not None and not self._stopped and not self._once:
            # (the one run has no next pass to load it for)
            await self._learn_compiler_imports(part.startup)
        if self._fork_note:
            part.add_note(self._fork_note)
            self._fork_note = ""
        if name == PassName.CPROFILE and self._alone_note:
            part.add_note(self._alone_note)
            self._alone_note = ""
        return part, rider

    def _may_ride(self, doc: Document, later: list[PassName], stop_reason: str) -> bool:
        spec = self.spec
        return (
            not spec.separate_cprofile
            and spec.duration is None  # time-boxed runs: each pass gets its own window
            and not spec.distributed
            and spec.exact_lines
            and not stop_reason
            and not self._stopped
            and cprofile_ride.may_ride(doc, later)
        )

    def _place_ridden(
        self, rider: CProfileTable | None, cpu: Pass, doc: Document, planned: list[PassName], index: int
    ) -> None:
        """The cprofile pass the cpu pass recorded goes before it in the document, as if it
        had run in its turn; or the cprofile pass runs alone next, and says why."""
        self._riding = False
        made, why = cprofile_ride.ridden(rider, cpu, doc)
        if made is not None:
            doc.passes.append(made)
            return
        planned.insert(index + 1, PassName.CPROFILE)
        self._alone_note = f"run after the cpu pass, alone: {why}"

    async def _run_pass(
        self,
        name: PassName,
        workdir: str,
        first: bool,
        following: PassName | None,
        shown: tuple[Document, int, int] | None = None,
    ) -> list[RunnerPart]:
        """One pass: its runner (the one started ahead of its turn, if any), and maybe the
        next pass's, started now to wait; then its part of the document. ``shown``: the one
        run, whose progress is shown as it goes (the document before it, the pass's place in
        the progress count)."""
        waiting, self._waiting = self._waiting, None
        if waiting is not None and waiting.name == name:
            runner = waiting
            runner.go()
        else:
            if waiting is not None:
                self._waiting = waiting
                self._discard_waiting()
            runner = await self._start(name, workdir, first)
        self._running = runner  # stop() and kill() reach it from here on
        watching = None
        if shown is not None:
            doc, at, total = shown

            def emit(so_far: Document, windows: int) -> None:
                event = JobEvent(
                    "progress", name, at, total, PassStatus.OK, text=f"{windows} window(s) recorded"
                )
                event.doc = so_far
                self.on_event(event)

            watching = asyncio.ensure_future(progress.watch(progress_file(runner.out), doc, emit))
        try:
            if name == PassName.CPROFILE and following is not None and self._may_prestart(following):
                # The next pass's interpreter starts now and waits, start-up done (torch
                # imported), until this pass ends: its 2-3 s of start-up run beside the
                # cProfile pass instead of after it. Only behind cProfile, whose Python-time
                # figures are the least sensitive to a busy core; the autograd passes always
                # run alone.
                try:
                    self._waiting = await self._start(following, workdir, False, wait=True)
                except OSError:
                    pass  # the next pass starts in its turn instead
                except BaseException:
                    runner.kill()
                    raise
            return await runner.finish(self.spec.timeout, lambda: self._stopped, self.spec.duration)
        finally:
            if watching is not None:
                watching.cancel()
                await asyncio.gather(watching, return_exceptions=True)
            self._running = None
            if runner.unwanted is not None:
                runner.unwanted.end()

    async def _start_forks(self) -> None:
        if self._forks is not None or not self.spec.fork:
            return
        try:
            self._forks = await ForkServer.start(self.spec.python)
            self._owns_forks = True
        except ForkServerError as exc:
            self._fork_note = f"each pass started its own interpreter (no fork server: {exc})"

    async def _learn_compiler_imports(self, startup: Startup) -> None:
        """The script loaded what the guess said it would not: loaded before the next pass."""
        if startup.compiler_stack_in_run_s or startup.inductor_in_run_s:
            self._compiler_stack = True
            self._inductor = self._inductor or bool(startup.inductor_in_run_s)
            await self._ready_compiler_stack()

    async def _ready_compiler_stack(self) -> None:
        """Have the fork server load torch's compiler stack, when the script needs it."""
        forks = self._forking()
        if not self._compiler_stack or forks is None:
            return
        if forks.has_compiler_stack and (forks.has_inductor or not self._inductor):
            return
        try:
            await forks.load_compiler_stack(self._inductor)
        except (ForkServerError, OSError) as exc:  # the next passes start afresh
            self._fork_note = (
                f"the next passes started their own interpreters (the fork server failed: {exc})"
            )

    def _note_fork_server_death(self, forks: ForkServer) -> None:
        """The fork server ended during the pass that just ran (the OOM killer, a signal):
        that pass says so, and the next ones start interpreters of their own."""
        how = forks.ended_how() or "it stopped forking"
        self._fork_note = (
            f"the fork server ended during this pass ({how}): the next passes start their own interpreters"
        )

    def _forking(self) -> ForkServer | None:
        if self.spec.distributed:  # the launcher starts every worker itself
            return None
        return self._forks if self._forks is not None and not self._forks.gone else None

    def _may_prestart(self, name: str) -> bool:
        return (
            self.spec.prestart and self._forking() is None and not self._stopped and name not in DEVICE_PASSES
        )

    def _discard_waiting(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            waiting.discard()
            self._discarded.append(waiting)  # reaped, its output read to the end, in run()

    def _skip_reason(self, name: PassName, doc: Document, stop_reason: str) -> Pass | None:
        def skipped(reason: str, omit: bool = False) -> Pass:
            # written with these keys only (a skipped pass is not changed after this)
            return Pass.given(
                name=name, status=PassStatus.SKIPPED, skip_reason=reason, **({"omit": True} if omit else {})
            )

        env = doc.environment
        if self._left_out(name, doc, bool(stop_reason)):
            # A device pass the user did not ask for, where there is no device (or, the job
            # ending early, none known): not part of the run at all.
            torch = env.torch if env is not None else None
            reason = no_cuda_reason(torch.version, torch.cuda_compiled, torch.hip_compiled) if torch else ""
            return skipped(reason or "no device known", omit=True)
        if self._stopped:
            return skipped(JOB_STOPPED)
        if stop_reason:
            return skipped(stop_reason)
        if name not in TORCHLESS_PASSES and env is not None and env.torch is None:
            return skipped(f"torch is not importable in {self.spec.python}: {env.torch_error}")
        if name in DEVICE_PASSES and env is not None and env.torch is not None:
            torch = env.torch
            if not torch.cuda_available:  # asked for explicitly: say why it did not run
                return skipped(no_cuda_reason(torch.version, torch.cuda_compiled, torch.hip_compiled))
        return None

    def _left_out(self, name: str, doc: Document, ending: bool) -> bool:
        """A device pass that was not asked for, where there is no device (as the passes so
        far, or else the fork server, found), or, when the job ends early (stopped, the
        script failed), none was found yet."""
        if name not in DEVICE_PASSES or self.spec.passes is not None:
            return False
        env = doc.environment
        available: bool | None = None
        if env is not None and env.torch is not None:
            available = env.torch.cuda_available
        elif env is None and (forks := self._forking()) is not None:
            said = forks.startup.get("cuda_available")  # the fork server asked torch (NVML)
            available = said if isinstance(said, bool) else None
        if available is None:  # no fork server, before the first pass: no torch asked yet
            return ending or self._stopped or not _device_files()
        return not available

    def _place_windows(
        self, sample: Pass, doc: Document, planned: list[PassName], index: int, stop_reason: str
    ) -> None:
        """The passes the one run recorded in windows, after the sample pass; where its run
        recorded none, they are skipped and say why, and cProfile, which needs no torch,
        runs alone next where torch did not import (a script of plain Python)."""
        windowed, self._windowed = self._windowed, None
        if windowed is not None:
            on_device, self._windowed_device = self._windowed_device, None
            doc.passes.extend(one_run.placed(windowed, sample, on_device))
            if self._once_cuda and on_device is None:
                doc.passes.append(
                    self._skip_reason(PassName.CUDA, doc, stop_reason)
                    or Pass.given(
                        name=PassName.CUDA,
                        status=PassStatus.SKIPPED,
                        skip_reason="the one run's windows recorded no device activity",
                    )
                )
            return
        env = doc.environment
        no_torch = env is not None and env.torch is None and sample.status != PassStatus.SYNTAX_ERROR
        reason = (
            stop_reason
            or _stop_reason(sample)
            or (f"{self.spec.python} never ran the runner" if ranking.runner_never_started(doc) else "")
            or f"the script's one run (the sample pass) recorded no window (status {sample.status})"
        )
        for name in (PassName.CPROFILE, PassName.CPU, PassName.CUDA):
            if name == PassName.CPROFILE and not self._once_cprofile:
                continue
            if name == PassName.CUDA and not self._once_cuda:
                continue
            if name == PassName.CPROFILE and no_torch and not stop_reason:
                planned.insert(index + 1, PassName.CPROFILE)  # its own run: it needs no torch
                continue
            skipped = self._skip_reason(name, doc, stop_reason) or Pass.given(
                name=name, status=PassStatus.SKIPPED, skip_reason=reason
            )
            doc.passes.append(skipped)

    def _once_forecast(self, name: PassName) -> str:
        """What the progress says before the one run ("" for any other pass)."""
        if not self._once or name != PassName.SAMPLE:
            return ""
        parts = ["the cpu pass", *(["cProfile"] if self._once_cprofile else [])]
        parts += ["the cuda pass"] if self._once_cuda else []
        inside = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        return f"the script's one run, {inside} recorded in windows of it"

    def _plan_once(self, planned: list[PassName]) -> list[PassName]:
        """The passes that run the script: the cpu pass (and cProfile, unless
        --separate-cprofile) recorded in the sample pass's run where one run applies."""
        spec = self.spec
        if not one_run.planned(spec, planned, self._gpu_likely()):
            return planned
        self._once = True
        self._once_cprofile = PassName.CPROFILE in planned and not spec.separate_cprofile
        self._once_cuda = PassName.CUDA in planned and self._gpu_likely()
        carried = (
            PassName.CPU,
            *((PassName.CPROFILE,) if self._once_cprofile else ()),
            *((PassName.CUDA,) if self._once_cuda else ()),
        )
        return [name for name in planned if name not in carried]

    def _gpu_likely(self) -> bool:
        """Whether torch may find a GPU here: as the fork server's torch said, else the
        machine's device files (``_device_files``)."""
        forks = self._forking()
        said = forks.startup.get("cuda_available") if forks is not None else None
        return said if isinstance(said, bool) else _device_files()

    def _counted(self, planned: list[PassName], doc: Document, stop_reason: str) -> list[PassName]:
        """The passes progress counts ("pass 2/3"): the planned ones less those left out,
        and less the cprofile pass that rides in the cpu pass's run; one planned again (the
        cprofile pass, alone after all) counts where it runs."""
        ridden = self._riding or any(p.within is not None for p in doc.passes)
        return [
            n
            for i, n in enumerate(planned)
            if n not in planned[i + 1 :]
            and not self._left_out(n, doc, bool(stop_reason))
            and not (n == PassName.CPROFILE and ridden)
        ]

    def _runner_args(
        self, name: str, workdir: str, out: str, first: bool, wait_fd: int | None = None
    ) -> RunnerArgs:
        spec = self.spec
        assert spec.cwd is not None
        forks = self._forking()
        windows = self._once and name == PassName.SAMPLE
        return RunnerArgs(
            pass_name=name,
            script=spec.script,
            argv0=spec.argv0,
            module=spec.module,
            out=out,
            cwd=spec.cwd,
            roots=list(spec.roots),
            strip_path=forks.workdir if forks is not None else workdir,
            environment=first,
            exact_lines=spec.exact_lines,
            count_entries=counts_entries(name, spec.passes),
            with_cprofile=(name == PassName.CPU and self._riding) or (windows and self._once_cprofile),
            compiler_stack=self._compiler_stack,
            inductor=self._inductor,
            event_budget=spec.event_budget,
            memory=spec.memory and (name in (PassName.CPU, PassName.CUDA) or windows),
            windows=windows,
            save_raw=self.raw_path(name),
            wait_fd=wait_fd,
            per_rank=spec.distributed,
            shapes=spec.collective_sizes and spec.distributed and name in (PassName.CPU, PassName.CUDA),
            args=list(spec.args),
        )

    def raw_path(self, name: str) -> str | None:
        """Where the pass writes its raw recording (``--save-raw``), or None."""
        if self.spec.save_raw is None or name not in RAW_PASSES:
            return None
        stem = os.path.splitext(os.path.basename(self.spec.script))[0]
        return os.path.join(self.spec.save_raw, f"{stem}.{name}.raw.json.gz")

    def recorded(self, name: str) -> list[str]:
        """The raw recordings the pass wrote: one, or one per rank (``stem.pass.rankN.raw.json.gz``,
        the lowest rank first), those that exist."""
        raw = self.raw_path(name)
        if raw is None:
            return []
        if not self.spec.distributed:
            return [raw] if os.path.exists(raw) else []
        stem = raw[: -len(".raw.json.gz")]
        ranks = [f"{stem}.rank{r}.raw.json.gz" for r in self.spec.local_ranks()]
        return [path for path in ranks if os.path.exists(path)]

    async def _start(self, name: PassName, workdir: str, first: bool, wait: bool = False) -> RunnerProcess:
        spec = self.spec
        assert spec.cwd is not None
        out = os.path.join(self._parts or workdir, f"{name}.json")
        if self._parts is not None:
            # The last run's parts go before the nodes meet for this pass (no rank writes
            # before they meet): each node's own, and on node 0 every rank's.
            _clear_parts(out, spec.report_ranks())

        def forward(stream: str, text: str, data: bytes) -> None:
            self.on_event(JobEvent("output", name, stream=stream, text=text, data=data))

        # memory recorded: torch's allocator warning kept out of the output (unwanted_lines.py)
        args = self._runner_args(name, workdir, out, first)
        unwanted = Unwanted(lambda text, data: forward("stderr", text, data)) if args.memory else None

        def output(stream: str, text: str, data: bytes) -> None:
            if unwanted is not None and stream == "stderr":
                if data:  # (the decoder's last characters come again from the bytes)
                    unwanted.feed(data)
                return
            forward(stream, text, data)

        runner = await self._launch(name, workdir, out, first, wait, output)
        runner.unwanted = unwanted
        return runner

    async def _launch(
        self, name: PassName, workdir: str, out: str, first: bool, wait: bool, output: OnOutput
    ) -> RunnerProcess:
        spec = self.spec
        assert spec.cwd is not None
        forks = self._forking()
        if forks is not None:
            try:
                options = self._runner_args(name, workdir, out, first).options()
                return await RunnerProcess.fork(name, forks, options, out, output)
            except (ForkServerError, OSError) as exc:  # this pass starts afresh (and later ones, if it died)
                self._fork_note = f"this pass started its own interpreter (the fork server failed: {exc})"
        if spec.distributed:
            launched = await RunnerProcess.start(
                name,
                lambda _fd: torchrun.argv(
                    spec.python,
                    spec.nproc_per_node,
                    spec.launcher,
                    self._runner_args(name, workdir, out, first).options(),
                    os.path.join(workdir, "torchelastic"),
                ),
                out,
                spec.cwd,
                environ(workdir),
                output,
            )
            launched.ranks = spec.local_ranks()
            launched.gather = spec.report_ranks()
            launched.gather_wait_s = GATHER_WAIT_S
            return launched
        return await RunnerProcess.start(
            name,
            lambda wait_fd: self._runner_args(name, workdir, out, first, wait_fd).argv(spec.python),
            out,
            spec.cwd,
            environ(workdir),
            output,
            wait=wait,
        )


# Node 0 waits this long, once its own ranks have ended, for the other nodes' parts.
GATHER_WAIT_S = 120.0


def _shared_parts(spec: JobSpec) -> str | None:
    """The job's folder in the shared parts folder: the same path on every node, named by
    what the nodes share (the rendezvous and the script)."""
    if spec.parts_dir is None:
        return None
    import hashlib

    pairs = torchrun_options.values(spec.launcher)
    meeting = [pairs.get(k, "") for k in ("--master-addr", "--master-port", "--rdzv-endpoint", "--rdzv-id")]
    key = hashlib.sha256("\0".join([*meeting, spec.script]).encode()).hexdigest()[:16]
    folder = os.path.join(spec.parts_dir, f"job-{key}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _clear_parts(out: str, ranks: list[int]) -> None:
    """A shared folder keeps the last run's parts: they go before the pass."""
    for rank in ranks:
        part = rank_part(out, rank)
        for path in (part, part + ".pid", environment_file(part)):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def _device_files() -> bool:
    """Whether this machine may have a GPU for torch, judged without torch (``--no-fork``,
    before the first pass): its device files (NVIDIA's, ROCm's) on Linux, and
    CUDA_VISIBLE_DEVICES not emptied. Never on macOS or Windows (no CUDA there)."""
    if not sys.platform.startswith("linux"):
        return False
    if os.environ.get("CUDA_VISIBLE_DEVICES", "x").strip() in ("", "-1"):
        return False
    return bool(glob.glob("/dev/nvidia[0-9]*")) or os.path.exists("/dev/kfd")


def _stop_reason(part: Pass) -> str:
    if part.status in STOPPING_STATUSES:
        return f"the {part.name} pass ended with status {part.status}"
    if part.status == PassStatus.EXIT:
        return f"the script exited with status {part.exit_code} in the {part.name} pass"
    return ""
