"""The autograd recording in windows of the one run: ops, op CPU time and memory per line
(the cpu pass's columns) recorded in short windows of the same execution the sampler
covers whole, so that the script runs once, at about its own speed.

How windows are chosen (docs/performance.md, "One run"):
- a window opens only at a *safe point*: the timer's tick (``sampler.py``'s SIGALRM
  handler, in the main thread between bytecodes) interrupted code with no frame of torch's
  mode dispatch (``overrides.py``, ``_python_dispatch.py``, ``_ops.py``, tensor
  subclasses, any mode's ``__torch_function__`` or ``__torch_dispatch__``), of the line
  marker or of TorchDynamo on the stack, torch.compile not compiling, and no node of a
  backward running (the autograd engine restores the thread's profiler state and mode
  stack after each node: a window opened in a compiled backward recorded nothing). The line marker
  goes under the modes the script pushed, and comes out from under them, which keeps their
  order: the script's ``with mode:`` pops its own.
  Pushing or popping the line marker's mode elsewhere (a tick inside torch's dispatch to a
  mode's handler) breaks torch's mode stack ("trying to pop from empty mode stack",
  measured); a window closes at a safe point too;
- a window closes after ``WINDOW_S`` of wall time or ``WINDOW_CALLS`` torch calls (half
  with memory events, which cost about as much again), whichever comes first (the first:
  ``FIRST_WINDOW_S``, ``FIRST_WINDOW_CALLS``); after ``WINDOW_S`` a later window waits,
  up to ``LONGEST_WINDOW_S``, for the script to be back on the line it opened on (a loop's
  step that takes longer than ``WINDOW_S`` is then recorded whole: every line of it, not
  the same part of it each time); the events
  of one window are read into the per-line totals (``attribution.Attributor``) when it
  closes, before the next one opens, so the memory recording takes stays that of one
  window however long the run;
- the next window opens once the time spent so far on windows after the first (recording
  and reading them), with the next one's expected cost (the last one's), is at most
  ``SHARE`` of the run's time after the first: windows are
  spread over the whole run, each phase of the script (loading, training, evaluation)
  getting windows in proportion to its time, and a phase that fills a window's call budget
  fast (many small torch calls) spends no more than its share;
- a window's clock, and its cost, stop while torch.compile compiles (the script's own
  one-time work, its ops left out of the columns) and while torch imports its compiler
  stack: a window open across a compile records the compiled code's calls after it;
- the first window opens just before the script's first line and lasts up to
  ``FIRST_WINDOW_S``: a short
  script (the tests' planted ones, a quick experiment) is recorded whole, as by a pass of
  its own; a long one spends that second once;
- the sampler samples the windows too (the wall time column is the run's, the windows'
  slowdown of the lines they recorded included, at most about ``SHARE`` of it), and sets
  the reading of each window aside (``ThreadSampler.pause``): that is our work.

When recording stops for good (the script starts torch's profiler itself, the process
grew too much), nothing of ours stays on: no mode, no profiler, no hook.

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from . import compiletime, device, scriptprofiler
from .attribution import Attributor
from .autograddoc import autograd_document, compile_work_note, line_entry
from .cprofilepass import CProfilePass
from .device import Activity
from .linemarker import MemoryGuard, ScriptCallMarker, backward_check, make_line_marker, place_warnings
from .lineranges import LineRanges
from .paths import FileClassifier
from .profilerconfig import make_profiler
from .rawsave import save_raw
from .sampler import ThreadSampler
from .units import us

SHARE = 0.10  # of the run's time, at most, spent recording windows and reading them
FIRST_WINDOW_S = 1.0  # the first window's wall time, at most: a short script is recorded whole
WINDOW_S = 0.3  # the others' (each closes at the first safe point after)
# ... or, back on the line it opened on, at the latest after this (a loop's whole step)
LONGEST_WINDOW_S = 1.0
# torch calls the first window records, at most (half with memory): reading a window is the
# one run's largest cost (10,865 calls with memory took 0.85 s to read, tiny_ops.py's whole body
# being 0.40 s), so a few thousand; a short script's few hundred are recorded whole
FIRST_WINDOW_CALLS = 4_000
# ... and each later one: reading a window takes about 16 us an event, 5 events a torch call
# with memory (measured: 10,169 calls, 50,845 events read in 0.83 s), and the next window
# waits until the time spent, its own expected cost included, is SHARE of the run: small
# windows, more often (with 2,000 calls with memory, a 6 s run of tests/scripts/phases.py
# afforded 2 windows), but room for a loop's whole step (pytorch/examples' dcgan: 1,333
# calls with memory; 1,000 cut it short)
WINDOW_CALLS = 4_000

# Files whose frames on the stack make a tick unsafe for pushing or popping a mode:
# torch's dispatch to function modes, TorchDynamo, and the line marker itself
_UNSAFE = (
    os.path.join("torch", "overrides.py"),
    os.path.join("torch", "utils", "_python_dispatch.py"),
    os.path.join("torch", "_ops.py"),
    os.path.join("torch", "_subclasses", ""),
    os.path.join("torch", "_dynamo", ""),
    os.path.join("bottleneck_lsp", "runner", "linemarker.py"),
)

CALIBRATION_CALLS = 400
_BUDGET = 1 << 60  # the line marker's: each window starts counting short of it

# A mode's handler on the stack (the script's own modes and tensor subclasses): torch pops
# that mode while its handler runs and pushes it back after
_HANDLERS = frozenset({"__torch_function__", "__torch_dispatch__"})


class Windows:
    """The cpu pass's recording, in windows of the sample pass's run."""

    def __init__(
        self,
        torch: Any,
        files: FileClassifier,
        sampler: ThreadSampler,
        memory: bool = False,
        with_cprofile: bool = False,
        device: str | None = None,
    ) -> None:
        self.torch = torch
        self.files = files
        self.sampler = sampler
        self.memory = memory
        # On a GPU ("cuda"): the windows record the device's activity too (the cuda pass's
        # columns: device time, kernels and the CPU's waits per line), and the sample pass's
        # whole-run device recording pauses while a window records (torch runs one profiler
        # at a time): ``pause_device`` before a window opens, ``resume_device`` after it
        # stopped recording
        self.device = device
        self.activities: list[Activity] = []  # the windows' device work and runtime calls
        self.pause_device: Callable[[], None] | None = None
        self.resume_device: Callable[[], None] | None = None
        # ``save_raw`` (a GPU's one run with ``--save-raw``, ``job/one_run.py``): each window's
        # raw recording, STEM.PASS.windowN.raw.json.gz (``replay`` reads them together)
        self.raw_stem: str | None = None
        self.script = ""  # (named in a raw recording)
        self.name = "cuda" if device is not None else "cpu"
        self.description = ""
        self.raw_written: list[str] = []
        self.raw_failed = ""
        self.ranges = LineRanges(files)
        self.per_call = 2 if memory else 1  # memory events cost about as much again
        self.first_calls = FIRST_WINDOW_CALLS // self.per_call
        self.later_calls = WINDOW_CALLS // self.per_call
        self.guard = MemoryGuard()
        # its count starts each window this many calls short of the budget (``_open``)
        self.marker = make_line_marker(torch, _BUDGET, self._full, self.guard, self.ranges)
        self.counted_from = 0
        self.script_calls = ScriptCallMarker(torch, self.ranges)
        self.attributor = Attributor(files, None, device=device is not None, ranges=self.ranges.table)
        self.cprofile = CProfilePass(files, within=True) if with_cprofile else None
        self.compiling = compiletime.tracing_check(torch)
        # torch.compile compiling (a lazy backward's compile too): the open window's clock stops
        self.compile_clock = compiletime.compiling_flag(torch) or self.compiling
        self.compiled_at = 0.0  # the last tick that found it compiling (0: none since)
        self.in_backward = backward_check(torch)
        self.profiler: Any = None  # the open window's
        self.hooked = False  # the marker's mode pushed (and what goes with it)
        self.opened = 0.0
        self.open_line: tuple[str, int] | None = None  # the script's line the open window opened on
        self.closing = ""  # why the open window closes at the next safe point
        self.ended = ""  # why no window opens any more ("" while they may)
        self.run_started = 0.0
        self.run_stopped = 0.0
        self.next_open = 0.0
        self.spent = 0.0  # seconds of the run spent in windows and reading them
        self.first_spent = 0.0  # of which in the first
        self.read_s = 0.0  # of which reading them
        self.spans: list[tuple[float, float, int]] = []  # (opened into the run, seconds, torch calls)
        self.calls = 0
        self.busy = False  # opening or closing a window, or ended
        self.stopped_at = 0.0  # when the open window's recording ended (``_stop_recording``)
        self.read_done = 0.0  # ... and its reading
        self.window_calls = 0  # ... and the torch calls it recorded
        self.importing = False  # torch imports its compiler stack for the script (``one_time``)
        self.import_began = 0.0
        self.per_call_s = 0.0  # what recording costs a torch call (``calibrate``)
        self.script_profiler: scriptprofiler.Starter | None = None
        self._unwarn: Callable[[], None] | None = None
        self._unyield: Callable[[], None] | None = None
        self.on_close: Callable[[], None] | None = None  # after each window is read (progress)

    # -- the run ---------------------------------------------------------------------
    def calibrate(self, folder: str) -> None:
        """Before the script runs: what recording costs a torch call here (``per_call_s``),
        a tiny op timed bare and in a throwaway window of this configuration, from code
        that passes for the user's (a file name in ``folder``, the script's). The sample
        pass takes that cost out of the wall time the lines spent in the windows
        (``SamplePass.finish``): a loop of tiny ops ran 5x slower there (2.6 us -> 14 us a
        call with memory, measured) and read as a hot line. Also pays kineto's first start
        here, not in the script's time."""
        name = os.path.join(folder, "<bottleneck-lsp calibration>.py")
        self.files.claim(name)
        code = compile("for _ in range(n):\n    x = x + 1\n", name, "exec")
        scope: dict[str, Any] = {"x": self.torch.zeros(2), "n": CALIBRATION_CALLS}
        try:
            exec(code, scope)  # warm
            begin = time.perf_counter()
            exec(code, scope)
            bare = time.perf_counter() - begin
            profiler, _ = make_profiler(self.torch, with_stack=False, device=self.device, memory=self.memory)
            profiler.__enter__()
            self._push_marker()
            if self.cprofile is not None:
                self.cprofile.profiler.enable()
            begin = time.perf_counter()
            exec(code, scope)
            recorded = time.perf_counter() - begin
            if self.cprofile is not None:
                self.cprofile.profiler.disable()
            self._pop_marker()
            profiler.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - uncalibrated: nothing is taken out
            return
        finally:
            self.files.unclaim(name)
        if self.cprofile is not None:  # a fresh table: the calibration's calls are not the script's
            self.cprofile = CProfilePass(self.files, within=True)
        self.per_call_s = max(recorded - bare, 0.0) / CALIBRATION_CALLS

    def start(self) -> None:
        """The script starts now (before the sampler: its ticks call ``tick``)."""
        self.run_started = time.perf_counter()
        self.next_open = self.run_started
        self._unyield = scriptprofiler.yield_to_script(self._yield_to_script)
        if self.cprofile is not None:
            self.cprofile.start()  # (its fork hook, and its start time)
            self.cprofile.profiler.disable()
        # The first window opens now, before the script's first line (a safe point: none of
        # its code runs yet), so that a short script's first op is in it (one holding the
        # GIL, such as a large torch.randn, delayed the first tick past it)
        self._open()

    def tick(self, frame: FrameType) -> None:
        """The sampler's timer, in the main thread: open or close a window when one is due
        and this is a safe point. Nothing of ours fails the script: a failure ends the
        windows (said in a note)."""
        if self.busy:  # (a tick handled while a window opens or closes)
            return
        self.busy = True
        rider = self.cprofile if self.hooked else None
        if rider is not None:  # our look is not the script's work
            rider.profiler.disable()
        try:
            self._tick(frame)
        except Exception as exc:  # noqa: BLE001 - the script runs on, unrecorded
            self.ended = self.ended or f"the windows failed: {type(exc).__name__}: {exc}"
            try:
                if self.profiler is not None or self.hooked:
                    self._close()
            except Exception:  # noqa: BLE001
                self.profiler = None
                self.hooked = False
        finally:
            self.busy = False
            if rider is not None and self.hooked and self.profiler is not None and not self.importing:
                if not self.compiling():  # (cProfile would slow torch.compile's work by half again)
                    rider.profiler.enable()

    def one_time(self, begin: bool) -> None:
        """torch imports what it loads lazily, from ``begin=True`` to ``begin=False`` (over a
        second of Python): cProfile stops counting (it would slow the import by half again),
        and the open window's clock stops (a short script's first window still records it
        whole: its compile, its first steps); no window opens meanwhile."""
        now = time.perf_counter()
        self.importing = begin
        if begin:
            self.import_began = now
            if self.hooked and self.cprofile is not None and not self.busy:
                self.cprofile.profiler.disable()
        elif self.hooked and self.profiler is not None:
            self.opened += now - self.import_began

    def _tick(self, frame: FrameType) -> None:
        now = time.perf_counter()
        if self.profiler is None and not self.hooked:
            if not self.ended and not self.importing and now >= self.next_open and self._safe(frame):
                self._open(self._user_line(frame))
            return
        if self.profiler is not None and self.compile_clock():
            # torch.compile's work is the script's own (a bare run pays it too), its ops left
            # out of the columns: the window's clock and cost stop meanwhile, so that a window
            # open across a compile still records the compiled code's calls after it
            if self.compiled_at:
                self.opened += now - self.compiled_at
            self.compiled_at = now
        else:
            self.compiled_at = 0.0
        limit = WINDOW_S if self.spans else FIRST_WINDOW_S
        if (
            not self.closing
            and not self.importing
            and now - self.opened >= limit
            and self._step_done(now, frame)
        ):
            self.closing = "time"  # (its clock stops while torch imports: ``one_time``)
        if self.closing:
            if self._safe(frame):
                self._close()
            else:
                self._request_stop()

    def timer_taken(self) -> None:
        """The script took SIGALRM for itself (``sampler.py``): no tick will open or close a
        window again. The open window's recording ends now (kept); the line marker leaves
        here when this is a safe point, else it passes calls through unmarked until the end."""
        if self.ended:
            return
        self.ended = "timer"
        if self.profiler is None and not self.hooked:
            return
        import sys

        if self._safe(sys._getframe(1)):
            self._close()
            return
        if self.in_backward():  # (the marker ends the recording after the backward)
            self._request_stop()
            return
        self._stop_recording()

    def stop(self) -> None:
        """The script ended (or is ending): the open window closes wherever it is."""
        self.ended = self.ended or "end"  # (first: a tick while this runs opens nothing)
        self.busy = True
        if self._unyield is not None:
            self._unyield()
            self._unyield = None
        if self.profiler is not None or self.hooked:
            self._close()
        self.run_stopped = time.perf_counter()

    # -- windows -------------------------------------------------------------------
    def _safe(self, frame: FrameType) -> bool:
        """No frame of torch's mode dispatch, of TorchDynamo or of the line marker on the
        stack, torch.compile not compiling, and no backward's node running
        (``linemarker.backward_check``)."""
        if self.compiling() or self.in_backward():
            return False
        here: FrameType | None = frame
        user = False  # the script's code is running (not the runner's, before or after it)
        while here is not None:
            code = here.f_code
            if code.co_name in _HANDLERS or any(part in code.co_filename for part in _UNSAFE):
                return False
            user = user or self.files.is_user(code.co_filename)
            here = here.f_back
        return user

    def _user_line(self, frame: FrameType | None) -> tuple[str, int] | None:
        """The script's innermost line in the stack of ``frame`` (the line marker's walk)."""
        found = self.ranges.innermost(frame)
        return None if found is None else (found.f_code.co_filename, found.f_lineno)

    def _step_done(self, now: float, frame: FrameType) -> bool:
        """A later window that has recorded ``WINDOW_S`` closes when the script is back on
        the line it opened on (it went round a loop's step: every line of the step recorded
        once), or after ``LONGEST_WINDOW_S``; the first, and one opened on no line of the
        script's, at once."""
        if not self.spans or self.open_line is None or now - self.opened >= LONGEST_WINDOW_S:
            return True
        return self._user_line(frame) == self.open_line

    def _push_marker(self) -> None:
        """The line marker goes *under* the function modes the script has pushed (as in a
        pass of its own, where it is pushed before the script runs): the script's ``with
        mode:`` that began before the window pops its own mode when it ends, not ours."""
        binding = self.torch._C
        try:
            above = [binding._pop_torch_function_stack() for _ in range(binding._len_torch_function_stack())]
        except AttributeError:  # a torch without them: on top
            self.marker.__enter__()
            return
        binding._push_on_torch_function_stack(self.marker)
        for mode in reversed(above):
            binding._push_on_torch_function_stack(mode)

    def _pop_marker(self) -> None:
        """The line marker out of the function modes, wherever the script's pushes and pops
        left it; the script's modes stay in their order."""
        binding = self.torch._C
        try:
            depth = binding._len_torch_function_stack()
        except AttributeError:
            self.marker.__exit__(None, None, None)
            return
        above = []
        for _ in range(depth):
            mode = binding._pop_torch_function_stack()
            if mode is self.marker:
                break
            above.append(mode)
        for mode in reversed(above):
            binding._push_on_torch_function_stack(mode)

    def _open(self, line: tuple[str, int] | None = None) -> None:
        self.open_line = line
        if self.pause_device is not None:
            self.pause_device()
        self.profiler, self.description = make_profiler(
            self.torch, with_stack=False, device=self.device, memory=self.memory
        )
        # (torch's allocator then logs "Memory block of unknown size ..." at the first and
        # every 1000th free of memory from before: the host drops those lines,
        # processes/unwanted_lines.py)
        with scriptprofiler.ours():  # (not the script's: neither this pass nor the sample pass yields)
            self.profiler.__enter__()
        marker = self.marker
        limit = self.later_calls if self.spans else self.first_calls
        marker.calls = self.counted_from = _BUDGET - limit
        marker.tripped = False
        self._push_marker()
        self._unwarn = place_warnings(marker)
        self.script_calls.__enter__()
        self.hooked = True
        if self.cprofile is not None:
            self.cprofile.profiler.enable()
        self.closing = ""
        self.stopped_at = self.read_done = 0.0
        self.window_calls = 0
        self.compiled_at = 0.0
        self.opened = time.perf_counter()

    def _full(self, why: str) -> None:
        """The line marker's call, between two torch calls: the window's calls reached their
        budget (or ``_request_stop`` asked), or the process grew too much. The recording
        ends here; the marker leaves at the next safe point, passing calls through until then."""
        self.closing = self.closing or why
        if why == "memory":
            self.ended = "memory"
        try:
            self._stop_recording()
        except Exception as exc:  # noqa: BLE001 - inside the script's torch call: never into it
            self.ended = self.ended or f"the windows failed: {type(exc).__name__}: {exc}"
            self.profiler = None

    def _request_stop(self) -> None:
        """A window is due to close and this tick was no safe point (nearly every tick of a
        loop of tiny ops lands in the line marker's handler: 3,000 calls more were recorded,
        and read, after the budget): the marker's next call ends the recording (its count
        moved to the budget's last call, the window's count kept)."""
        if self.profiler is None:
            return
        shift = _BUDGET - 1 - self.marker.calls
        if shift > 0:
            self.marker.calls += shift
            self.counted_from += shift

    def _stop_recording(self) -> None:
        """The open window's recording ends now, and is read (kept); its line marker stays,
        passing calls through, until a safe point takes it out (``_close``). Not at a tick
        inside torch's dispatch: from the marker between two calls (no op of its own in
        flight: kineto's recording may stop there, only the mode stack must wait), from
        ``_close``, or where the script starts its own profiler or takes the timer."""
        profiler = self.profiler
        if profiler is None:
            return
        self.stopped_at = time.perf_counter()
        self.window_calls = self.marker.calls - self.counted_from
        self.marker.tripped = True
        if self.cprofile is not None:
            self.cprofile.profiler.disable()
        self.profiler = None
        self.sampler.pause()  # reading it is our work, not the script's
        try:
            if self.device is not None:
                device.settle(self.torch)  # (the window's kernels, done and recorded)
            profiler.__exit__(None, None, None)
            self._read(profiler)
        finally:
            if self.resume_device is not None and self.ended not in ("end", "script_profiler"):
                self.resume_device()
            self.sampler.resume()
            self.read_done = time.perf_counter()

    def _unhook(self) -> None:
        if not self.hooked:
            return
        self.hooked = False
        if self.cprofile is not None:
            self.cprofile.profiler.disable()
        self.script_calls.__exit__()
        if self._unwarn is not None:
            self._unwarn()
            self._unwarn = None
        try:
            self._pop_marker()
        except Exception:  # noqa: BLE001 - never fail the script for it
            pass

    def _close(self) -> None:
        self._stop_recording()  # (still recording: here)
        closing = time.perf_counter()
        self._unhook()
        done = time.perf_counter()
        calls, stopped = self.window_calls, self.stopped_at or closing
        read_done = self.read_done or stopped
        self.calls += calls
        self.spans.append((self.opened - self.run_started, stopped - self.opened, calls))
        self.read_s += read_done - stopped
        # ours: recording, reading, taking the marker out (not the calls it passed through)
        self.spent += (read_done - self.opened) + (done - closing)
        if len(self.spans) == 1:
            # the first window is the short script's whole recording: the later ones are
            # spaced by their own cost only (a long run pays the first one once)
            self.first_spent = self.spent
        # the next one once the later windows so far, and the next one's expected cost (this
        # one's; the first's for a recording of at most WINDOW_S), are at most SHARE of the
        # run since the first: the second window too waits for the run to pay for it (it once
        # opened right after the first, and a 1.4 s script paid 0.25 s more for it)
        recorded = stopped - self.opened
        scale = min(1.0, WINDOW_S / recorded) if len(self.spans) == 1 and recorded > 0 else 1.0
        expected = (read_done - self.opened) * scale
        since = self.run_started + self.first_spent
        self.next_open = max(done, since + (self.spent - self.first_spent + expected) / SHARE)
        self.closing = ""
        if self.on_close is not None:
            self.on_close()

    def _read(self, profiler: Any) -> None:
        try:
            tree = profiler.kineto_results.experimental_event_tree()
            # (torch builds the flat event list anew at each call: once, where it is read)
            events = profiler.kineto_results.events() if self.raw_stem or self.device else []
            if self.raw_stem is not None:
                self._save_raw(tree, events)
            self.attributor.consume(tree)
            if self.device is not None:
                # its device work on the lines of the ops that launched it, by this
                # window's correlation ids (another window's may repeat them)
                activities, _runtime = device.from_kineto(events)
                self.attributor.add_device_events(activities)
                self.attributor.end_recording()
                self.activities.extend(activities)
        except Exception as exc:  # noqa: BLE001 - a lost window, said in the note
            self.ended = self.ended or f"reading a window failed: {type(exc).__name__}: {exc}"

    def _save_raw(self, tree: Any, events: Any) -> None:
        """This window's raw recording, beside the others (its span as the script's time)."""
        path = f"{self.raw_stem}.{self.name}.window{len(self.raw_written) + 1}.raw.json.gz"
        extra: dict[str, Any] = {"line_ranges": self.ranges.header(), "exact_lines": True}
        compiled = self.attributor.compiled
        if compiled is not None and compiled.by_key:
            extra["compiled_graphs"] = compiled.to_json()
        span_ns = int(((self.stopped_at or time.perf_counter()) - self.opened) * 1e9)
        said = save_raw(path, self, span_ns, tree, events, **extra)
        if said.startswith("raw recording written"):
            self.raw_written.append(path)
        else:
            self.raw_failed = self.raw_failed or said

    def _yield_to_script(self, here: bool) -> None:
        """The script starts torch's profiler itself: the open window's recording ends now
        (kept), the marker leaves at the next safe point or the end, and no window opens
        again (``scriptprofiler.py``)."""
        self._unyield = None
        self.script_profiler = scriptprofiler.starter(self.files.is_user, thread=not here)
        self.ended = "script_profiler"
        self._stop_recording()  # (its calls pass through unmarked until it leaves)
        if self.hooked:
            self.closing = "script_profiler"

    # -- results -------------------------------------------------------------------
    def _covered(self) -> dict[str, Any]:
        """The part's ``windows``: what the windows so far cover."""
        recorded = sum(span for _, span, _ in self.spans)
        run_s = (self.run_stopped or time.perf_counter()) - self.run_started
        return {
            "count": len(self.spans),
            "recorded_s": round(recorded, 6),
            "run_s": round(run_s, 6),
            "spent_s": round(self.spent, 6),
            "torch_calls": self.calls,
            "per_call_us": round(self.per_call_s * 1e6, 3),
            "spans": [[round(at, 6), round(span, 6), calls] for at, span, calls in self.spans[:MAX_SPANS]],
        }

    def so_far(self) -> dict[str, Any]:
        """The cpu pass's part as the windows read so far have it, for the run's progress:
        op CPU time per line (the most first, ``PROGRESS_LINES``), without memory (its
        accounting is done once, at the end). Reads only: ``finish`` is unchanged by it."""
        a = self.attributor
        lines = sorted((s for s in a.lines.values() if s.self_ns > 0), key=lambda s: s.self_ns, reverse=True)
        return {
            "lines": [line_entry(a, s) for s in lines[:PROGRESS_LINES]],
            "totals": {"self_cpu_us": us(a.total_self_ns), "self_device_us": 0.0},
            "script_wall_s": round(time.perf_counter() - self.run_started, 6),
            "exact_lines": True,
            "windows": self._covered(),
        }

    def finish(self) -> dict[str, Any]:
        """The cpu pass's part, measured in the windows; and cProfile's table, recorded in
        them, under ``cprofile`` (the job makes it the cprofile pass)."""
        begin = time.perf_counter()
        a = self.attributor
        recorded = sum(span for _, span, _ in self.spans)
        out = autograd_document(a, None, int(recorded * 1e9))
        out["windows"] = self._covered()
        notes = out.setdefault("notes", [])
        if a.compile_events:
            notes.append(compile_work_note(a))
        if self.script_profiler is not None:
            notes.append(
                f"{self.script_profiler.words()}: no window was recorded after that "
                f"({scriptprofiler.OWN_PROFILER_ADVICE[bool(self.script_profiler.library)]})"
            )
        elif self.ended == "timer":
            notes.append(
                "the script took SIGALRM for itself, whose ticks open and close the windows: no window "
                "was recorded after that (--separate-runs records the cpu pass in a run of its own)"
            )
        elif self.ended == "memory":
            notes.append("the windows stopped: the process had grown by a third of the memory available")
        elif self.ended.startswith(("reading", "the windows failed")):
            notes.append(self.ended)
        if self.raw_written or self.raw_failed:
            notes.append(self._raw_note())
        if self.cprofile is not None:
            self.cprofile.stopped = self.run_stopped or time.perf_counter()
            table = self.cprofile.finish()
            table["script_wall_s"] = round(recorded, 6)
            out["cprofile"] = table
        out.update(self._run_fields())
        out.update(
            {
                "garbled_frames": a.garbled_frames,
                "postprocess_s": round(time.perf_counter() - begin + self.read_s, 6),
            }
        )
        return out

    def _run_fields(self) -> dict[str, Any]:
        """What the cpu and cuda parts of the windows both say of the run."""
        return {
            "script_wall_s": round((self.run_stopped or time.perf_counter()) - self.run_started, 6),
            "event_count": self.attributor.event_count,
            "exact_lines": True,
            "torch_calls": self.calls,
        }

    def _raw_note(self) -> str:
        said = ""
        if self.raw_written:
            first = self.raw_written[0]
            said = (
                f"raw recordings of {len(self.raw_written)} window(s) written to "
                f"{first[: first.rindex('.window')]}.window*.raw.json.gz (replay reads them together)"
            )
        return "; ".join(x for x in (said, self.raw_failed) if x)

    def finish_device(self) -> dict[str, Any]:
        """On a GPU, after ``finish``: the cuda pass's part, from the same windows (device
        time, kernels and the CPU's waits per line; memory on the device), its shares of
        the recorded time."""
        a = self.attributor
        recorded = sum(span for _, span, _ in self.spans)
        for stats in (*a.lines.values(), a.unattributed):
            stats.memory = None  # (``finish`` accounted the CPU's: now the device's)
        out = autograd_document(a, self.activities, int(recorded * 1e9), charged=True)
        out["windows"] = self._covered()
        out.update(self._run_fields())
        return out


MAX_SPANS = 1000  # windows listed one by one in the document (all are counted)
PROGRESS_LINES = 200  # lines in the progress's part
