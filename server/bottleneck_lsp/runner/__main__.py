"""Entry point: ``python -m bottleneck_lsp.runner --pass NAME --script S --out F -- args``
(the command line: ``contract.RunnerArgs``).

Runs one pass over one script and writes the pass's part of the result document to
``--out`` (JSON, written atomically). Exit status 0; in a child the script forked, the
script's own. A runner that dies writes nothing: the job reports the pass as crashed.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import time
from typing import Any

from ..notebook.cell_paths import is_notebook
from ..schema.contract import (
    STOP_TAKEN_SUFFIX,
    RunnerArgs,
    environment_file,
    no_cuda_reason,
    progress_file,
    rank_part,
)
from ..schema.model import Node, PassName, PassStatus, Prestarted, RunnerPart, Startup
from . import compilerstack, compiletime, environment, lingering, notebook_run, processgroups, script, strays
from .paths import FileClassifier


def _write(path: str, part: Node) -> None:
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(part.to_json(), handle, separators=(",", ":"), allow_nan=False)
    os.replace(tmp, path)


def _write_text(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


class _Run:
    """One pass over the script; ``conclude`` runs exactly once however it ends."""

    def __init__(self, ns: RunnerArgs, parent: int) -> None:
        self.ns = ns
        self.parent = parent
        self.started = time.perf_counter()
        self.part = RunnerPart.given(name=PassName(ns.pass_name), status=PassStatus.OK, exit_code=0)
        self.profiler: Any = None
        self.files: FileClassifier | None = None
        self.lazy: compilerstack.LazyLoad | None = None  # watching for torch's compiler imports
        self.done = False
        self.pid = os.getpid()
        self.threads: script.ThreadCounter | None = None  # threads the script started
        self.written = False  # the results are on disk (``conclude``)

    def forked_child(self) -> bool:
        """True in a child the script forked (``os.fork()``) that ran on to the end of the
        script: it exits as plain Python's would, and the results are its parent's."""
        return os.getpid() != self.pid

    def conclude(self) -> None:
        """Write the results (once). A stop sent again (``script.install_exit_hooks``) may
        interrupt it before ``ignore_term``: call it through ``conclude_surely``."""
        if self.done or self.forked_child():
            return
        # From here on a SIGTERM must not interrupt writing; the parent's SIGKILL
        # after its grace period is the backstop, and the parent waits that long only
        # once it sees the results coming (``stopping``).
        script.ignore_term()
        self.done = True
        _stopping(self.ns)
        if self.profiler is not None:
            try:
                self.profiler.stop()
                measured = self.profiler.finish()
                notes = measured.pop("notes", [])
                windowed = measured.pop("windowed", None)
                on_device = measured.pop("windowed_device", None)
                self.part.update_json(measured, "the pass's results")  # checked: all or nothing
                self.part.update(notes=[*self.part.notes, *notes])
                if windowed is not None:
                    self._windowed(windowed, on_device)
            except Exception as exc:  # noqa: BLE001 - report, never lose the rest
                self.part.add_note(f"profiler results lost: {type(exc).__name__}: {exc}")
        if self.lazy is not None:
            self.lazy.uninstall()
            if self.lazy.seconds:
                self._report_lazy(self.lazy)
        compiled_at = getattr(self.profiler, "compiled_at", None)
        ours = getattr(self.profiler, "profiler_compiles", None)
        compiled = compiletime.compile_note(
            compiled_at() if compiled_at is not None else None,
            ours=ours() if ours is not None else compiletime.NONE,
        )
        if compiled is not None:
            self.part.add_note(compiled)
        children = getattr(self, "children", None)
        if children is not None and children.count:
            self.part.update(child_processes=children.count)
            self.part.add_note(
                f"the script started {children.count} child process(es) (workers, pools); "
                "only this process was profiled: their time is not covered"
            )
        threads = self.threads
        unseen = _unseen_in_threads(self.ns.pass_name, self.profiler)
        if threads is not None and threads.count and unseen:
            self.part.add_note(
                f"the script started {threads.count} thread(s); {unseen} "
                "(the sample pass lists the lines other threads ran)"
            )
        self.part.update(
            wall_s=round(time.perf_counter() - self.started, 6), peak_rss_mb=round(_peak_rss_mb(), 1)
        )
        _write(self.ns.out, self.part)
        self.written = True
        # What the script started in sessions of its own, the parent's kill of this
        # group at the pass's end would miss (the rest of the group goes then)
        strays.end_strays()

    def _windowed(self, measured: dict[str, Any], on_device: dict[str, Any] | None) -> None:
        """The cpu pass recorded in windows of this run (and on a GPU the cuda pass, in the
        same windows): their parts, beside this one's."""
        part = self.part
        for name, found, field in (
            (PassName.CPU, measured, "windowed"),
            (PassName.CUDA, on_device, "windowed_device"),
        ):
            if found is None:
                continue
            windowed = RunnerPart.given(name=name, status=part.status, exit_code=part.exit_code)
            try:
                windowed.update_json(found, "the windows' results")
            except Exception as exc:  # noqa: BLE001 - report, never lose the rest
                part.add_note(f"the windows' {name} results lost: {type(exc).__name__}: {exc}")
                continue
            part.update(**{field: windowed})

    def _set_aside(self, begin: bool) -> None:
        aside = getattr(self.profiler, "set_aside", None)
        if aside is not None:
            aside(begin)

    def _report_lazy(self, lazy: compilerstack.LazyLoad) -> None:
        """What torch imported lazily while the script ran: a note saying where and how
        long, and the seconds in ``startup`` (from which the job loads it before the next
        passes): the compiler stack; what a ``torch.compile`` call imports, when it imported
        inductor's code generator. Another backend's call imports only aot_autograd and the
        repro hooks (0.15 s here): noted, and imported again by the next passes."""
        stack = compilerstack.MODULE
        if stack in lazy.seconds:
            self._note_lazy(lazy, (stack,), "its compiler stack (torch._dynamo)", "compiler_stack_in_run_s")
        if compilerstack.COMPILE_FX in lazy.seconds:
            what = "what torch.compile needs (inductor's code generator)"
            self._note_lazy(lazy, compilerstack.COMPILE_CALL, what, "inductor_in_run_s")
        elif lazy.seconds_of(compilerstack.HOOKS) is not None:
            what = "its ahead-of-time autograd (torch._functorch.aot_autograd)"
            self._note_lazy(lazy, compilerstack.HOOKS, what, None)

    def _note_lazy(
        self, lazy: compilerstack.LazyLoad, names: tuple[str, ...], what: str, field: str | None
    ) -> None:
        seconds = lazy.seconds_of(names) or 0.0
        if field is not None and self.part.startup is not None:
            self.part.startup.update(**{field: round(seconds, 6)})
        where = ""
        found = lazy.where_of(names)
        if found is not None and self.files is not None:
            path = self.files.resolve(found[0]) or found[0]
            where = f" at {os.path.basename(path)}:{found[1]}"
        aside = (
            "kept on that line as one-time work (the bare run pays it there too)"
            if self.ns.windows
            else "set aside: no line is charged for it"
            if self.ns.pass_name == PassName.SAMPLE
            else "in this pass's time"
        )
        self.part.add_note(
            f"torch loaded {what} while the script ran{where}: "
            f"{seconds:.2f} s of one-time import work, {aside}"
        )

    def hard_exit(self, status: int) -> None:
        self.part.update(status=PassStatus.EXIT if status else PassStatus.OK, exit_code=status)
        self.part.add_note(f"the script called os._exit({status})")
        self.conclude_surely()

    def wait_for_go(self, fd: int) -> bool:
        """Started ahead of its turn (while the previous pass runs): start-up is done, so
        wait for the parent's go before anything of the script runs. End of file: the
        pass is not wanted (the parent also kills the group then)."""
        begin = time.perf_counter()
        try:
            go = os.read(fd, 1)
        finally:
            os.close(fd)
        if not go:
            self.done = True  # nothing to report
            return False
        self.part.update(prestarted=Prestarted(waited_s=round(time.perf_counter() - begin, 6)))
        self.started = time.perf_counter()  # the pass's wall time counts from its turn
        return True

    def _prepare_cuda(self, torch: Any, required: bool) -> bool:
        """Initialise CUDA before the script runs (start-up, never charged to a line).
        False when no device activity can be recorded; for a pass that needs it
        (``required``) the part then says why it was skipped."""
        part = self.part
        if not torch.cuda.is_available():
            if required:
                reason = no_cuda_reason(
                    torch.__version__, torch.version.cuda, getattr(torch.version, "hip", None)
                )
                part.update(status=PassStatus.SKIPPED, skip_reason=reason)
            return False
        if not _records_kernels(torch):
            reason = (
                f"torch {torch.__version__} cannot record CUDA kernels here (its profiler lists no "
                "CUDA activity: built without CUPTI/Kineto); device time is not measured"
            )
            part.add_note(reason)
            if not required:
                return False
        begin = time.perf_counter()
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        if part.startup is not None:
            part.startup.update(cuda_init_s=round(time.perf_counter() - begin, 6))
        return True

    def run(self) -> None:
        ns = self.ns
        script_path = os.path.abspath(ns.script)
        roots = [os.path.dirname(script_path), *ns.roots]
        script.prepare_process(script_path, ns.args, ns.cwd, ns.strip_path, ns.module, ns.argv0)
        # Resolve relative file names against the places they were relative to when the
        # script started: it may chdir or edit sys.path as it runs.
        self.files = FileClassifier(roots, search_dirs=[*sys.path, os.getcwd()])
        self.children = script.ChildCounter()
        # only where the pass does not see other threads (threading left as it was elsewhere)
        if _unseen_in_threads(ns.pass_name):
            self.threads = script.ThreadCounter(self.files)
        part = self.part
        script.install_exit_hooks(self.hard_exit, lambda: _on_term(self.parent, ns))
        # The environment first, whatever the script is: a report always opens with it,
        # also when the script does not compile or the runner dies (its own file).
        torch, import_s, lazy_s, torch_error = environment.import_torch(ns.compiler_stack, ns.inductor)
        startup = Startup.given(
            import_torch_s=round(import_s, 6) if torch is not None else None,  # no torch: no start-up
            import_torch_lazy_s=round(lazy_s, 6),
            cuda_init_s=None,
        )
        part.update(startup=startup, warm=environment.PRELOADED is not None)  # warm: a fork server's
        if torch is not None:  # no gloo/NCCL join may wait for the GIL (processgroups.py)
            processgroups.keep_destroyed_groups(torch)
        if ns.environment:
            summary = environment.summarize(torch, torch_error)
            part.update(environment=summary)
            _write(environment_file(ns.out), summary)
        notebook: notebook_run.CompiledNotebook | None = None
        try:
            if is_notebook(script_path):
                notebook = notebook_run.compile_notebook(script_path, self.files.claim)
                for note in notebook.notes:
                    part.add_note(note)
            else:
                code = script.compile_script(script_path)
        except script.ScriptSyntaxError as exc:
            part.update(status=PassStatus.SYNTAX_ERROR, exit_code=1, error=exc.info)
            self.conclude()
            return
        if ns.wait_fd is not None and not self.wait_for_go(ns.wait_fd):
            return
        if ns.pass_name == PassName.CPROFILE:
            from .cprofilepass import CProfilePass

            self.profiler = CProfilePass(self.files)
        elif ns.pass_name == PassName.SAMPLE:
            from .samplepass import SamplePass

            # With a GPU the light pass also records the device's activity (the verdict).
            on_device = torch is not None and self._prepare_cuda(torch, required=False)
            self.profiler = SamplePass(
                self.files, torch if on_device else None, save_raw=ns.save_raw, script=script_path
            )
            if torch is not None:
                self.profiler.listen_to_compile(torch)
            if ns.windows and torch is not None:
                # (on a GPU the windows record the device too: the cuda pass, job/one_run.py)
                self.profiler.record_windows(
                    torch, ns.memory, ns.with_cprofile, progress_file(ns.out), device=on_device
                )
        elif torch is None:
            part.update(status=PassStatus.SKIPPED, skip_reason=f"torch is not importable: {torch_error}")
            self.conclude()
            return
        else:
            if ns.pass_name == PassName.CUDA and not self._prepare_cuda(torch, required=True):
                self.conclude()
                return
            from .autogradpass import AutogradPass

            self.profiler = AutogradPass(
                ns.pass_name,
                torch,
                self.files,
                exact_lines=ns.exact_lines,
                count_entries=ns.count_entries,
                with_cprofile=ns.with_cprofile,
                event_budget=ns.event_budget,
                save_raw=ns.save_raw,
                script=script_path,
                memory=ns.memory,
                collectives=ns.per_rank,
                shapes=ns.shapes,
            )
        if torch is not None and ns.windows and not ns.compiler_stack and compilerstack.loaded():
            part.add_note(
                "torch's compiler stack was loaded before this run (an earlier profile's fork "
                "server loaded it): the line that makes torch load it does not show that one-time "
                "import here (a fresh start does: restart the server, or the command line)"
            )
        if torch is not None and compilerstack.unloaded():
            self.lazy = compilerstack.LazyLoad(
                lambda name: self.files is not None and self.files.is_user(name),
                lambda: self._set_aside(True),
                lambda: self._set_aside(False),
            ).install()
        # A crash (segmentation fault, abort) prints where the script was (processes/crash_site.py)
        faulthandler.enable(all_threads=False)
        self.profiler.start()
        try:
            if ns.module:
                script.run_module_as_main(ns.module)
            elif notebook is not None:
                notebook_run.run_notebook(notebook)
            else:
                script.run_as_main(code, script_path)
        except SystemExit as exc:
            status = script.exit_code_of(exc)
            part.update(status=PassStatus.EXIT if status else PassStatus.OK, exit_code=status)
            if status and not isinstance(exc.code, int) and exc.code is not None:
                print(exc.code, file=sys.stderr)
        except script.Terminated:
            part.update(status=PassStatus.TERMINATED, exit_code=None)
        except BaseException as exc:  # noqa: BLE001 - the script's own failure
            self.profiler.stop()
            error = script.describe_exception(exc, self.files)
            part.update(status=PassStatus.ERROR, exit_code=1, error=error)
            if ns.per_rank:  # which rank failed first: the others may fail because of it
                error.update(at_ns=time.time_ns())
            sys.stderr.write(error.traceback)
        finally:
            self.conclude_surely()

    def conclude_surely(self) -> None:
        """``conclude``, again if a stop interrupted it before it ignored the next ones."""
        while True:
            try:
                self.conclude()
                return
            except script.Terminated:
                continue


def _unseen_in_threads(pass_name: str, profiler: Any = None) -> str:
    """What a pass does not see of the threads the script started ("" when it sees them):
    the autograd passes record every thread's ops where ``profiler.every_thread`` (the cpu
    pass with the line marker, on a torch that can), the starting thread's otherwise."""
    if pass_name in (PassName.CPU, PassName.CUDA) and not getattr(profiler, "every_thread", False):
        unseen = "torch's profiler records the ops of the script's main thread (and autograd's), not theirs"
        if getattr(profiler, "threads_need_no_memory", False):
            unseen += "; without memory among the passes, this pass records theirs too"
        return unseen
    if pass_name == PassName.CPROFILE and sys.version_info < (3, 12):
        return "cProfile counts the main thread's calls only before Python 3.12"
    return ""


def _peak_rss_mb() -> float:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)


def _records_kernels(torch: Any) -> bool:
    """Whether this torch's profiler can record CUDA kernel events (CUPTI through Kineto):
    a feature, not a version. Unknown (an API this torch lacks): assume it can."""
    try:
        from torch.profiler import ProfilerActivity

        return ProfilerActivity.CUDA in torch.autograd._supported_activities()
    except (ImportError, AttributeError):
        return True


def _die_with_parent(parent: int | None = None) -> int:
    """Linux: get SIGTERM when the process that started us dies (a CLI killed with
    SIGKILL, a crashed server), so that no runner outlives it (see
    ``_end_group_if_orphaned``). ``parent``: who started us, when known (a fork server's
    child may already have been handed to another parent). Returns the parent's pid."""
    parent = os.getppid() if parent is None else parent
    if not sys.platform.startswith("linux"):
        return parent
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    return parent


def _stopping(ns: RunnerArgs) -> None:
    """Tell the parent that a stop was taken and the results are on their way (the file
    ``STOP_TAKEN_SUFFIX`` names): it then waits its whole grace for them. A runner that
    never says so (the signal never reached our handler) is killed sooner. One runner's
    own; a rank's stop is its launcher's business."""
    if ns.per_rank:
        return
    try:
        os.close(os.open(ns.out + STOP_TAKEN_SUFFIX, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass


def _on_term(parent: int, ns: RunnerArgs) -> None:
    _stopping(ns)
    _end_group_if_orphaned(parent, ns.out)


def _end_group_if_orphaned(parent: int, out: str) -> None:
    """When the CLI or server that started us is gone, nobody will read the results or
    end what the script left running: the job's private folder (where ``out`` is) goes,
    and the runner's process group (it leads one) ends at once, the script's workers with
    it. Ending as the interpreter does could wait forever: its exit joins workers that are
    not daemons. A forked pass whose fork server died while the CLI or server lives on ends
    the same way, and leaves the folder: the job's next passes start afresh there."""
    if os.getppid() != parent and os.getpgid(0) == os.getpid():
        import shutil

        if _HOST is None or not strays.alive(_HOST):
            shutil.rmtree(os.path.dirname(os.path.abspath(out)), ignore_errors=True)
        os.killpg(os.getpid(), signal.SIGKILL)


def _as_rank(ns: RunnerArgs) -> int | None:
    """A torchrun worker (``--per-rank``) writes its own part and recording, named by its
    rank; None outside a distributed job."""
    if not ns.per_rank:
        return None
    rank = int(os.environ.get("RANK", "0"))
    ns.out = rank_part(ns.out, rank)
    # The launcher starts each worker in a session of its own: this tells the job whose
    # group to kill, should the worker outlive the launcher.
    _write_text(ns.out + ".pid", str(os.getpid()))
    if ns.save_raw and ns.save_raw.endswith(".raw.json.gz"):
        ns.save_raw = ns.save_raw[: -len(".raw.json.gz")] + f".rank{rank}.raw.json.gz"
    return rank


# A forked pass: the CLI or language server that started its fork server, which reads its
# results (the fork server is its parent)
_HOST: int | None = None
# The pass of this process: its exit is bounded once it wrote its results (``_quick_exit``)
_ENDED: _Run | None = None
_REAL_EXIT = os._exit  # before ``script.install_exit_hooks`` puts its own in its place


def main(argv: list[str] | None = None, parent: int | None = None, host: int | None = None) -> int:
    global _HOST
    _HOST = host
    ns = RunnerArgs.parse(sys.argv[1:] if argv is None else argv)
    rank = _as_rank(ns)
    parent = _die_with_parent(parent)
    if os.getppid() != parent:  # it died before the parent-death signal was set
        _end_group_if_orphaned(parent, ns.out)
        return 0
    run = _Run(ns, parent)
    global _ENDED
    _ENDED = run
    if rank is not None:
        run.part.update(rank=rank)
    try:
        run.run()
    except script.Terminated:
        run.part.update(status=PassStatus.TERMINATED, exit_code=None)
        run.conclude_surely()
    if run.forked_child():
        return int(run.part.exit_code or 0)
    _end_group_if_orphaned(parent, ns.out)  # a SIGTERM while the results were written was ignored
    if rank is not None and run.part.status in (PassStatus.ERROR, PassStatus.EXIT, PassStatus.SYNTAX_ERROR):
        # The launcher must see a failed rank fail, so that it ends the others (waiting in a
        # collective for it) instead of leaving them to the backend's timeout.
        return int(run.part.exit_code or 1)
    return 0


def _quick_exit(code: int) -> None:
    """Exit as the interpreter would, minus tearing down torch's modules (0.6-0.8 s
    measured here): the same two steps the interpreter takes first (threading's shutdown,
    which stops executors' workers and joins non-daemon threads, then the atexit handlers,
    pools and workers included), then the process ends at once. The results are written;
    should those steps not end (a thread the script left waiting), ``lingering`` describes
    what holds them and ends the process after its grace."""
    import atexit
    import threading

    run = _ENDED
    out = run.ns.out if run is not None and run.written and not run.forked_child() else None
    if run is not None and out is not None:
        lingering.watch(run.part, out, run.files, _write, _REAL_EXIT, code)
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if out is not None:
        lingering.cancel(out)
    _REAL_EXIT(code)


if __name__ == "__main__":
    _quick_exit(main())
