"""The autograd passes (cpu, cuda): torch's autograd profiler around the script, each op
charged to the user's line that made it, on exit.

Each pass object has ``start()``, ``stop()`` and ``finish() -> dict``; the runner calls
``finish`` however the script ended (normally, by exception, SystemExit, SIGTERM or
os._exit), so a pass always reports what it measured up to that point.

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from ..schema.contract import PYTHON_HEAVY_CALLS, PYTHON_HEAVY_RATIO
from ..schema.model import PassName
from . import device, provenance, scriptprofiler
from .attribution import Attributor, LineStats
from .autograddoc import autograd_document, compile_work_note
from .cprofilepass import CProfilePass
from .dynamo_log import DynamoLog
from .entrycount import EntryCounter
from .linemarker import (
    MemoryGuard,
    ScriptCallMarker,
    follow_threads,
    make_line_marker,
    place_warnings,
    record_function_fast,
)
from .lineranges import LineRanges
from .paths import FileClassifier
from .profilerconfig import make_profiler, records_every_thread
from .provenance import CompiledGraphs
from .rawsave import save_raw
from .units import us


class AutogradPass:
    """The autograd profiler with Python call stacks, attributed to lines on exit."""

    def __init__(
        self,
        name: str,
        torch: Any,
        files: FileClassifier,
        exact_lines: bool,
        count_entries: bool = True,
        with_cprofile: bool = False,
        event_budget: int = 0,
        save_raw: str | None = None,
        script: str = "",
        memory: bool = False,
        collectives: bool = False,
        shapes: bool = False,
    ) -> None:
        self.name = name
        self.collectives = collectives  # a distributed rank: keep its collective ops
        self.shapes = shapes  # and the bytes they sent, from the input shapes recorded
        self.script = script  # named in a raw recording
        self.torch = torch
        self.files = files
        self.device = "cuda" if name == PassName.CUDA else None
        # Lines from the line marker alone (lineranges.py) in the cpu pass; the cuda pass
        # keeps the Python tracer (its device threads and kernel links were checked on an
        # H200 with it), as does --no-exact-lines (functions from the tracer's call nodes).
        # A feature check: torch without _RecordFunctionFast (before 2.2) keeps the tracer.
        ranged = exact_lines and self.device is None and record_function_fast(torch) is not None
        self.ranges = LineRanges(files) if ranged else None
        # With the line marker's ranges, the threads the script starts are recorded too and
        # the marker follows them (``follow_threads``); the cuda pass and --no-exact-lines
        # keep the main thread's ops, as checked on a GPU. torch's ``_profiler_enabled()``
        # reads False in every thread then (it asks for this thread's profiler).
        # Not with memory: torch records no allocation event then (torch 2.13).
        capable = self.ranges is not None and records_every_thread(torch)
        self.every_thread = capable and not memory
        self.threads_need_no_memory = capable and memory  # what the note on threads says
        self.profiler, self.description = make_profiler(
            torch,
            with_stack=self.ranges is None,
            device=self.device,
            memory=memory,
            shapes=shapes,
            every_thread=self.every_thread,
        )
        self._unfollow: Callable[[], None] | None = None
        self._unwarn: Callable[[], None] | None = None  # place_warnings, while the script runs
        self._unyield: Callable[[], None] | None = None  # scriptprofiler, while we record
        self.script_profiler: scriptprofiler.Starter | None = None  # who started one, where
        # Entries into the user's functions (the "passes disagree" check) are counted as
        # cProfile counts them (entrycount.py) when another pass of the job counts them
        # (``count_entries``; else there is nothing to compare with, and on 3.10/3.11 the
        # counter costs what cProfile costs): without the tracer always; with it on
        # Python 3.12+ too, where cProfile counts every thread and the tracer's call nodes
        # only the main thread's (a threaded script read as disagreeing). On 3.10/3.11 the
        # counter is a profile hook and would take the tracer's place, and both count the
        # main thread there.
        self.counter: EntryCounter | None = None
        # Or cProfile's whole table, for the job's cprofile pass, which then needs no run of
        # its own (``with_cprofile``, job/job.py); it counts the entries too. Not beside the
        # Python tracer, which holds the same profile hook on 3.10/3.11: the job then runs
        # the cprofile pass alone.
        self.cprofile: CProfilePass | None = None
        if with_cprofile and self.ranges is not None:
            self.cprofile = CProfilePass(files, within=True)
        elif count_entries and (self.ranges is not None or sys.version_info >= (3, 12)):
            self.counter = EntryCounter(lambda code: files.is_user(code.co_filename))
        self.save_raw = save_raw
        self.raw_note = ""
        # Memory events count toward the budget: with them a torch call costs about twice
        # the profiler's memory (a loop of tiny ops: 731 MB -> 1,523 MB), so it counts twice.
        self.memory = memory
        self.event_budget = max(event_budget // 2, 1) if memory and event_budget else event_budget
        self.guard = MemoryGuard()
        self.marker = (
            make_line_marker(torch, self.event_budget, self._budget_reached, self.guard, self.ranges)
            if exact_lines
            else None
        )
        self.script_calls = ScriptCallMarker(torch, self.ranges) if exact_lines else None
        self.exact_lines = exact_lines
        # torch.compile's graphs, whose kernels go to the lines they were made from
        # (``provenance.py``), from TorchDynamo's trace while the script runs
        self.compiled: CompiledGraphs | None = None
        self.trace: DynamoLog | None = None
        if provenance.enable():
            self.compiled = CompiledGraphs(files)
            self.trace = DynamoLog(torch, files, self.compiled)
        self.started = 0.0
        self.stopped = 0.0
        self.recorded_until = 0.0
        self.running = False
        self.recording = False
        self.budget_hit = ""  # "calls" or "memory": why the recording stopped early
        self.stop_s = 0.0  # the profiler's own stop (it turns every recorded event into results)
        self.grown = 0  # bytes the process had grown by then
        self.calls_recorded = 0  # torch calls recorded by then

    def _end_recording(self) -> None:
        """Stop the profiler (once); what it recorded stays for ``finish``."""
        if not self.recording:
            return
        self.recording = False
        if self.device is not None:
            device.settle(self.torch)  # (a failed device still has CPU events)
        self.recorded_until = time.perf_counter()
        self.profiler.__exit__(None, None, None)
        self.stop_s = time.perf_counter() - self.recorded_until

    def _budget_reached(self, why: str) -> None:
        # The profiler keeps every event until it stops (16-190 KB a torch call with
        # stacks, measured on real models), so a long run stops recording; the script runs on.
        self.budget_hit = why
        self.grown = MemoryGuard.resident() - self.guard.start
        if self.cprofile is not None:
            # the job drops a table recorded in a run cut short (its stop ran in the
            # script's time): cProfile's hook goes now, not at the script's end
            self.cprofile.stop()
            self.cprofile = None
        self.calls_recorded = self.marker.calls if self.marker is not None else 0
        self._end_recording()

    def _yield_to_script(self, here: bool) -> None:
        """The script starts torch's profiler itself (``scriptprofiler.py``): end the
        recording (kept), and let the script's profiler run as without us, without our
        line ranges in it. ``here`` False: started from another thread (said in the note)."""
        self.script_profiler = scriptprofiler.starter(self.files.is_user, thread=not here)
        self._unyield = None
        if self.script_calls is not None:  # (also after the event budget ended the recording)
            self.script_calls.__exit__()
        if not self.recording:
            return
        if self.marker is not None:
            self.marker.tripped = True
        self._budget_reached("script_profiler")  # the recording ends early, as at the budget

    def start(self) -> None:
        if self.trace is not None and not self.trace.install(wrap=False):
            self.trace = None
        self.profiler.__enter__()
        self.recording = True
        self._unyield = scriptprofiler.yield_to_script(self._yield_to_script)
        if self.marker is not None:
            self.marker.__enter__()
            self._unwarn = place_warnings(self.marker)
            if self.every_thread:
                self._unfollow = follow_threads(self.marker)
        if self.script_calls is not None:
            self.script_calls.__enter__()
        self.running = True
        self.started = time.perf_counter()
        if self.counter is not None:
            self.counter.enable()
        if self.cprofile is not None:
            self.cprofile.start()

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        if self.cprofile is not None:
            self.cprofile.stop()
        if self.counter is not None:
            self.counter.disable()
        if self.trace is not None:
            self.trace.uninstall()
        self.stopped = time.perf_counter()
        if self._unyield is not None:
            self._unyield()
            self._unyield = None
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        if self.script_calls is not None:
            self.script_calls.__exit__()
        if self.marker is not None:
            try:
                self.marker.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the script may have left modes pushed
                pass
        if self._unwarn is not None:
            self._unwarn()
            self._unwarn = None
        self._end_recording()
        # Ended from another thread (the script's thread started a profiler), a pass that
        # records its own thread only is not ended: torch ends the calling thread's session,
        # and the main thread's goes on recording to the end. Ending it here, after the
        # script's profiler ran, killed the process (SIGSEGV, torch 2.13, measured): it is
        # left to the process's end, and the note says the recording was lost.

    def finish(self) -> dict[str, Any]:
        begin = time.perf_counter()
        results = self.profiler.kineto_results
        marker_site = None
        if self.marker is not None and self.ranges is None:
            code = type(self.marker).__torch_function__.__code__
            marker_site = (code.co_filename, code.co_firstlineno)
        tree = results.experimental_event_tree()
        wall_ns = int(((self.recorded_until or self.stopped) - self.started) * 1e9)
        entries = self._function_entries()
        if self.save_raw:
            self._save_raw(tree, results, marker_site, wall_ns, entries)
        attributor = Attributor(
            self.files,
            marker_site,
            device=self.device is not None,
            ranges=self.ranges.table if self.ranges is not None else None,
            compiled=self.compiled,
        )
        if entries is not None:
            attributor.take_function_entries(entries)
        if self.collectives:
            attributor.collectives = []
        attributor.consume(tree)
        rider = self.cprofile.finish() if self.cprofile is not None else None
        activities = None
        if self.device is not None:
            activities, _runtime = device.from_kineto(results.events())
        out = autograd_document(attributor, activities, wall_ns)
        if rider is not None:
            out["cprofile"] = rider  # the job makes it its cprofile pass (job/cprofile_ride.py)
        if self.raw_note:
            out.setdefault("notes", []).append(self.raw_note)
        if attributor.collectives is not None:
            out["collectives"] = collective_entries(attributor.collectives, self.shapes)
        if self.budget_hit:
            recorded = self.recorded_until - self.started
            calls = self.calls_recorded
            out["event_budget"] = {
                "reason": self.budget_hit,
                "torch_calls": calls,
                "recorded_s": round(recorded, 6),
            }
            if self.budget_hit == "script_profiler" and self.script_profiler is not None:
                why = f"{self.script_profiler.words()}: this pass ended its recording there"
                if self.script_profiler.thread and attributor.event_count == 0:
                    why += " (stopped from that thread, it lost what it had recorded of its own)"
                advice = scriptprofiler.OWN_PROFILER_ADVICE[bool(self.script_profiler.library)]
            elif self.budget_hit == "memory":
                why = (
                    f"the process had grown by {self.grown / 1e9:.1f} GB, a third of the memory "
                    "available when the pass started"
                )
                advice = "profile fewer steps"
            else:
                why = "to bound its memory"
                advice = "raise --event-budget, or profile fewer steps"
                if self.memory:
                    advice = (
                        "with memory recorded a torch call counts twice: raise --event-budget, "
                        "leave memory out of --passes, or profile fewer steps"
                    )
            after = f" after {calls} torch call{'s' if calls != 1 else ''}" if self.marker is not None else ""
            out.setdefault("notes", []).append(
                f"the profiler stopped{after} ({recorded:.1f} s into the script): "
                f"{why}; the rest ran unprofiled and shares cover the recorded part ({advice})"
            )
        if attributor.compile_events:
            out.setdefault("notes", []).append(compile_work_note(attributor))
        heavy = python_heavy_note(
            attributor.python_events, self.stop_s + time.perf_counter() - begin, self.stopped - self.started
        )
        if heavy:
            out.setdefault("notes", []).append(heavy)
        out.update(
            {
                "script_wall_s": round(self.stopped - self.started, 6),
                "event_count": attributor.event_count,
                "garbled_frames": attributor.garbled_frames,
                "exact_lines": self.exact_lines,
                "torch_calls": self.marker.calls if self.marker is not None else None,
                "postprocess_s": round(time.perf_counter() - begin, 6),
            }
        )
        return out

    def _function_entries(self) -> list[tuple[str, int, str, int]] | None:
        """(file name, first line, function, entries) of the user's functions, as the
        counter saw them; None when the tracer's call nodes count them (``Attributor``);
        none without the tracer when the pass does not count."""
        if self.counter is not None:
            return self.counter.entries()
        if self.cprofile is not None:
            return self.cprofile.entries()
        return None if self.ranges is None else []

    def _save_raw(
        self,
        tree: Any,
        results: Any,
        marker_site: tuple[str, int] | None,
        wall_ns: int,
        entries: list[tuple[str, int, str, int]] | None,
    ) -> None:
        assert self.save_raw is not None
        extra: dict[str, Any] = {}
        if self.ranges is not None:
            extra["line_ranges"] = self.ranges.header()
        if entries is not None:
            extra["function_entries"] = [list(e) for e in entries]
        if self.compiled is not None and self.compiled.by_key:
            extra["compiled_graphs"] = self.compiled.to_json()
        self.raw_note = save_raw(
            self.save_raw,
            self,
            wall_ns,
            tree,
            results.events(),
            exact_lines=self.exact_lines,
            marker_site=list(marker_site) if marker_site else None,
            **extra,
        )


MAX_COLLECTIVES = 20_000  # per rank and pass, the first ones in time


def collective_entries(
    found: list[tuple[int, int, str, LineStats, int]], sizes: bool
) -> list[dict[str, Any]]:
    """A rank's collective ops in the order they started, each with its start on the
    wall clock (the profiler's clock is the system's: ranks on one machine compare) and,
    with ``sizes`` (input shapes recorded), the bytes it sent."""
    found.sort(key=lambda c: c[0])
    return [
        {
            "name": name,
            "start_ns": start,
            "duration_us": us(dur),
            "file": line.file,
            "line": line.line,
            **({"bytes": sent} if sizes else {}),
        }
        for start, dur, name, line, sent in found[:MAX_COLLECTIVES]
    ]


def python_heavy_note(python_events: int, recording_s: float, script_s: float) -> str:
    """The note for a Python-heavy script's autograd pass ("" when it is not one)."""
    if python_events < PYTHON_HEAVY_CALLS or recording_s < PYTHON_HEAVY_RATIO * max(script_s, 0.0):
        return ""
    return (
        f"the Python tracer recorded {python_events:,} Python calls and generator resumes; stopping "
        f"the profiler and reading them took {recording_s:.1f} s after {script_s:.2f} s of script. The "
        "sample and cProfile passes give each line's wall and Python time for less, without op CPU "
        "time and memory (--passes sample,cprofile); or profile fewer steps"
    )
