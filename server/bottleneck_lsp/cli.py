"""Command line: ``bottleneck-lsp profile ...``, ``bottleneck-lsp serve ...``.

``python -m bottleneck_lsp script.py [args]`` is the drop-in for the removed
``python -m torch.utils.bottleneck``: the same as ``bottleneck-lsp profile``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from .analysis import ranking
from .analysis.compare import Comparison, Regression, compare, regressions
from .analysis.ranking import Thresholds
from .analysis.result import ResultError, load_document
from .cli_args import (
    TIMELINE_FORMATS,
    command_parser,
    launcher_options,
    parse_profile_argv,
    profile_parser,
    split_script_argv,
    with_script_args,
)
from .formats import diff_report, report, sarif, wording
from .job.job import Job, JobEvent
from .job.spec import JobError, JobSpec
from .schema.contract import PASSES
from .schema.model import Document, PassName, PassStatus


class _Progress:
    """A line per pass on stderr, only when stderr is a terminal; the script's own
    output goes to stderr so that stdout holds only the report."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.tty = stream.isatty()

    def __call__(self, event: JobEvent) -> None:
        if event.kind == "output":
            raw = getattr(self.stream, "buffer", None)
            if raw is not None:  # the script's bytes as it wrote them, binary or not
                self.stream.flush()
                raw.write(event.data)
                raw.flush()
            else:
                self.stream.write(event.text)
                self.stream.flush()
        elif self.tty and event.kind == "pass_start":
            ahead = f" ({event.forecast})" if event.forecast else ""
            self.stream.write(
                f"[bottleneck] pass {event.index + 1}/{event.total}: {event.pass_name}{ahead} ...\n"
            )
            self.stream.flush()
        elif self.tty and event.kind == "progress" and event.doc is not None:
            # The one run, as its windows close: the hot line so far
            rows = ranking.hotspots(event.doc)
            top = f"; top line so far {wording.top_line(rows[0])}" if rows else ""
            self.stream.write(f"[bottleneck] pass {event.pass_name}: running, {event.text}{top}\n")
            self.stream.flush()
        elif self.tty and event.kind == "pass_end":
            # Before the later passes: the hot line as the passes so far have it (the sample pass,
            # first, runs at about the script's own speed), as the editor shows it then
            rows = (
                ranking.hotspots(event.doc) if event.doc is not None and event.index + 1 < event.total else []
            )
            top = (
                f"; top line so far {wording.top_line(rows[0])}"
                if rows and event.status == PassStatus.OK
                else ""
            )
            self.stream.write(f"[bottleneck] pass {event.pass_name}: {event.status}{top}\n")
            self.stream.flush()


def run_profile(ns: argparse.Namespace) -> int:
    args = list(ns.args)
    if ns.module is not None:  # -m MODULE args...: what follows the name is the module's
        if not ns.module:
            print("bottleneck-lsp: error: -m needs a module name, such as -m pkg.train", file=sys.stderr)
            return 2
        ns.module, args = ns.module[0], ns.module[1:]
    elif ns.script is None:
        print("bottleneck-lsp: error: give the script to profile (or -m MODULE)", file=sys.stderr)
        return 2
    problem = output_problem(ns.output, (ns.script or "",))
    if problem is not None:
        print(f"bottleneck-lsp: error: {problem}", file=sys.stderr)
        return 2
    if ns.fail_on_regression is not None and ns.baseline is None:
        print("bottleneck-lsp: error: --fail-on-regression needs --baseline", file=sys.stderr)
        return 2
    baseline = None
    if ns.baseline is not None:
        try:
            baseline = load_document(ns.baseline)
        except ResultError as exc:
            print(f"bottleneck-lsp: error: --baseline: {exc}", file=sys.stderr)
            return 2
    save_raw, scratch = ns.save_raw, None
    if ns.format in TIMELINE_FORMATS:
        if (
            ns.format == "trace"
            and ns.passes is not None
            and not set(ns.passes) & {PassName.CPU, PassName.CUDA}
        ):
            print("bottleneck-lsp: error: --format trace needs the cpu or cuda pass", file=sys.stderr)
            return 2
        if (
            ns.format == "speedscope"
            and ns.passes is not None
            and not set(ns.passes) & {PassName.SAMPLE, PassName.CPU, PassName.CUDA}
        ):
            # cProfile's totals per function make no timeline: the file would hold nothing
            print(
                "bottleneck-lsp: error: --format speedscope needs the sample, cpu or cuda pass",
                file=sys.stderr,
            )
            return 2
        if save_raw is None:  # the timeline is read from the autograd pass's raw recording
            save_raw = scratch = tempfile.mkdtemp(prefix="bottleneck-lsp-raw-")
    try:
        return _profile(ns, args, baseline, save_raw)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


STOP_SIGNALS: dict[int, str] = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


async def _run_stoppable(job: Job, stopped_by: list[int]) -> Document:
    """The job, where a first Ctrl-C (SIGINT) or SIGTERM (``timeout 600 bottleneck-lsp
    ...``, a batch system's end of time) stops it as the editor's stop does: the running
    pass ends (its ``finally`` blocks run) and what the passes so far measured is reported;
    a second one quits at once (KeyboardInterrupt, or SIGTERM's default). ``stopped_by``
    gets the signal that stopped it."""
    loop = asyncio.get_running_loop()
    handled: list[int] = []

    def first(signum: int) -> None:
        for each in handled:  # the next one: Python's KeyboardInterrupt, SIGTERM's default
            loop.remove_signal_handler(each)
        stopped_by.append(signum)
        name = STOP_SIGNALS[signum]
        print(
            f"\nbottleneck-lsp: {'' if signum == signal.SIGINT else name + ': '}stopping; "
            f"the passes so far are reported ({name} again to quit at once)",
            file=sys.stderr,
        )
        job.stop()

    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) == signal.SIG_IGN:
            # ignored when we started (a shell's background job, nohup-like wrappers): the
            # user's Ctrl-C at the terminal is not for us, as for any program
            continue
        try:
            loop.add_signal_handler(signum, first, signum)
            handled.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such API
            pass
    try:
        return await job.run()
    finally:
        for signum in handled:
            try:
                loop.remove_signal_handler(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass


def _profile(ns: argparse.Namespace, args: list[str], baseline: Document | None, save_raw: str | None) -> int:
    spec = JobSpec(
        script=ns.script or "",
        module=ns.module,
        args=tuple(args),
        python=ns.python,
        cwd=ns.cwd,
        roots=tuple(ns.root),
        passes=ns.passes,
        timeout=ns.timeout,
        duration=ns.duration,
        exact_lines=not ns.no_exact_lines,
        separate_cprofile=ns.separate_cprofile,
        separate_runs=ns.separate_runs,
        event_budget=ns.event_budget,
        fork=not ns.no_fork,
        prestart=not ns.no_prestart,
        save_raw=save_raw,
        nproc_per_node=ns.nproc_per_node,
        launcher=launcher_options(ns),
        parts_dir=ns.parts_dir,
        collective_sizes=ns.collective_sizes,
    )
    try:
        job = Job(spec, on_event=_Progress(sys.stderr))
    except JobError as exc:
        print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
        return 2
    try:
        stopped_by: list[int] = []
        doc = asyncio.run(_run_stoppable(job, stopped_by))
    except KeyboardInterrupt:
        print("bottleneck-lsp: interrupted", file=sys.stderr)
        return 130
    # as a shell reports a process its signal ended: 128 + the signal (130 for Ctrl-C)
    stopped = 128 + stopped_by[0] if stopped_by else 130
    if doc.status == PassStatus.CANCELLED and all(p.status == PassStatus.SKIPPED for p in doc.passes):
        print("bottleneck-lsp: stopped before any pass ran", file=sys.stderr)
        return stopped
    recorded = []
    for name in PASSES:
        made = job.recorded(name)
        if made and name in (PassName.CPU, PassName.CUDA):
            recorded.append(made[0])  # a distributed job's exports come from its lowest rank
        for raw in made if ns.save_raw is not None else []:
            print(f"bottleneck-lsp: raw recording of the {name} pass: {raw}", file=sys.stderr)
    comparison = compare(baseline, doc) if baseline is not None else None
    found = []
    if comparison is not None and ns.fail_on_regression is not None:
        found = regressions(comparison, ns.fail_on_regression, ns.min_share, ns.min_regression_ms / 1000)
    # the cuda pass's recording when there is one: it holds the device's work too
    if _emit(doc, Output.of(ns), comparison, found, recorded[-1] if recorded else None) != 0:
        return 2
    code = doc.exit_code if doc.exit_code is not None else 1
    if code == 130 and stopped_by:
        code = stopped
    if comparison is not None:
        _gate(comparison, found, ns)
        if code == 0 and found:
            code = 3
    return code


def _gate(comparison: Comparison, found: list[Regression], ns: argparse.Namespace) -> None:
    """The comparison with the baseline on stderr, and the regressions as errors."""
    sys.stderr.write("\n" + diff_report.render(comparison))
    if ns.fail_on_regression is None:
        return
    for line in diff_report.regression_lines(comparison, found, ns.fail_on_regression):
        print(line, file=sys.stderr)
    if not found:
        print(
            f"bottleneck-lsp: no regression beyond {ns.fail_on_regression * 100:.0f}% "
            f"(and {ns.min_regression_ms:g} ms) since the baseline",
            file=sys.stderr,
        )


def run_diff(ns: argparse.Namespace) -> int:
    problem = output_problem(ns.output, (ns.old, ns.new))
    if problem is not None:
        print(f"bottleneck-lsp: error: {problem}", file=sys.stderr)
        return 2
    try:
        old, new = load_document(ns.old), load_document(ns.new)
    except ResultError as exc:
        print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
        return 2
    comparison = compare(old, new)
    if ns.format == "json":
        text = json.dumps(diff_report.to_json(comparison), indent=1) + "\n"
    else:
        text = diff_report.render(comparison)
    return write_output(text, ns.output)


def output_problem(path: str | None, protected: tuple[str, ...] = ()) -> str | None:
    """Why ``-o PATH`` cannot take the report, checked before any work (None: it can)."""
    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"-o {path}: is a folder; give a file name"
    if not os.path.isdir(folder):
        return f"-o {path}: its folder {folder} does not exist"
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        return f"-o {path}: cannot be written (permission denied)"
    for other in protected:
        if other and os.path.exists(path) and os.path.exists(other) and os.path.samefile(path, other):
            return f"-o {path}: is the script being profiled; the report would overwrite it"
    return None


def write_output(text: str, path: str | None) -> int:
    """The report on stdout, or in ``path``; when that fails at the last moment (a full
    disk), it goes to stdout instead, with the reason on stderr, and 2 is returned."""
    if path:
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            return 0
        except OSError as exc:
            print(
                f"bottleneck-lsp: error: cannot write the report to {path} ({exc.strerror or exc}): "
                "it follows on stdout",
                file=sys.stderr,
            )
            sys.stdout.write(text)
            sys.stdout.flush()
            return 2
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


@dataclass(frozen=True)
class Output:
    """What the output code needs of the command line: the format, where it goes, the
    thresholds, the gate's share (SARIF names it), and a replay's root (a recording's paths
    are mapped onto it)."""

    format: str
    path: str | None
    thresholds: Thresholds
    fail_on_regression: float | None = None
    recording_root: str | None = None

    @classmethod
    def of(cls, ns: argparse.Namespace, recording_root: str | None = None) -> Output:
        return cls(
            format=ns.format,
            path=ns.output,
            thresholds=Thresholds(min_share=ns.min_share, top=ns.top, min_memory_share=ns.min_memory_share),
            fail_on_regression=getattr(ns, "fail_on_regression", None),  # profile's option, not replay's
            recording_root=recording_root,
        )


def _emit(
    doc: Document,
    out: Output,
    comparison: Comparison | None = None,
    found: list[Regression] | None = None,
    raw: str | None = None,
) -> int:
    """The document as the chosen format, on stdout or in ``--output``; 2 when the format
    cannot be made (a timeline format without a recording of an autograd pass)."""
    if out.format in TIMELINE_FORMATS:
        made = _timeline(doc, out, raw)
        if made is None:
            return 2
        text = made
    elif out.format == "json":
        text = json.dumps(doc.to_json(), indent=1) + "\n"
    elif out.format == "sarif":
        scanned = sarif.render(doc, out.thresholds, comparison, found, out.fail_on_regression)
        text = json.dumps(scanned, indent=1) + "\n"
    else:
        text = report.render(doc, out.thresholds, cwd=os.getcwd())
    return write_output(text, out.path)


def _timeline(doc: Document, out: Output, raw: str | None) -> str | None:
    """``--format trace`` or ``speedscope`` from the autograd pass's recording (and, for
    speedscope, the sample pass in ``doc``); None after saying why it cannot be made."""
    from .analysis.recorded import RecordingError
    from .analysis.timeline import from_recording
    from .formats import chrome_trace, speedscope

    found = None
    if raw is not None:
        try:
            found = from_recording(raw, out.recording_root)
        except RecordingError as exc:
            print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
            return None
    cwd = os.getcwd()
    if out.format == "trace":
        if found is None:
            print(
                "bottleneck-lsp: error: no autograd pass recorded its ops (the cpu or cuda pass "
                "must run to the end or to its event budget): no trace to write",
                file=sys.stderr,
            )
            return None
        return json.dumps(chrome_trace.render(found, cwd)) + "\n"
    return json.dumps(speedscope.render(doc, found, cwd)) + "\n"


def run_replay(ns: argparse.Namespace) -> int:
    from .analysis.recorded import RecordingError
    from .job.replay import replay

    problem = output_problem(ns.output, tuple(ns.recording))
    if problem is not None:
        print(f"bottleneck-lsp: error: {problem}", file=sys.stderr)
        return 2
    first, *windows = ns.recording
    try:
        doc = replay(first, ns.root, windows)
    except RecordingError as exc:
        print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
        return 2
    return _emit(doc, Output.of(ns, recording_root=ns.root), raw=first)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser, profile = command_parser()
    rest = None
    if argv[:1] == ["profile"]:
        options, rest = split_script_argv(profile, argv[1:])
        argv = ["profile", *options]
    ns = parser.parse_args(argv)
    if ns.command == "profile":
        ns = with_script_args(ns, rest)
    if ns.command == "serve":
        from .lsp.serve import serve as run_server

        if ns.no_auth and ns.token_file:
            parser.error("--no-auth and --token-file contradict each other")
        if (ns.no_auth or ns.token_file) and not (ns.tcp or ns.socket):
            parser.error("--no-auth and --token-file apply to --tcp or --socket (stdio needs no token)")
        return run_server(ns.tcp, ns.log_level, ns.socket, ns.token_file, ns.no_auth)
    if ns.command == "replay":
        return run_replay(ns)
    if ns.command == "diff":
        return run_diff(ns)
    return run_profile(ns)


def dropin_main(argv: list[str] | None = None) -> int:
    """``python -m bottleneck_lsp script.py [args]`` (or ``-m module [args]``)."""
    parser = profile_parser("python -m bottleneck_lsp")
    return run_profile(parse_profile_argv(parser, sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
