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
from typing import Any

from . import __version__, diffreport, report, sarif
from .analysis import Thresholds
from .compare import Comparison, Regression, compare, regressions
from .contract import PASSES, unknown_passes
from .jobs import Job, JobError, JobEvent, JobSpec
from .launch import LAUNCHER_OPTIONS
from .model import Document
from .result import ResultError, load_document

_JOB = JobSpec(script="")  # the defaults live in JobSpec and Thresholds
_THRESHOLDS = Thresholds()
TIMELINE_FORMATS = ("speedscope", "trace")  # made from an autograd pass's raw recording


def _passes(text: str) -> tuple[str, ...]:
    names = tuple(p.strip() for p in text.split(",") if p.strip())
    problem = unknown_passes(names)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return names


def _share(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100.0 if text.endswith("%") else 1.0)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: a share is a fraction (0.05) or a percentage (5%)")
    return value


def _number(text: str, kind: type[float] | type[int], lowest: float, above: bool, what: str) -> Any:
    """``text`` as ``kind``, at least (or, ``above``, more than) ``lowest`` and finite."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not (value > lowest if above else value >= lowest) or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: {what}")
    return value


def _count(text: str) -> int:
    """A whole number, 0 or more (``--top``, ``--event-budget``)."""
    return int(_number(text, int, 0, False, "a whole number, 0 or more"))


def _seconds(text: str) -> float:
    """A duration in seconds, more than 0 (``--timeout``)."""
    return float(_number(text, float, 0.0, True, "seconds, a number more than 0"))


MIN_REGRESSION_MS = 5.0


def _milliseconds(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("ms"))
    except ValueError:
        raise argparse.ArgumentTypeError("milliseconds: a number, such as 5 or 2.5") from None
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError("milliseconds: a number at least 0, such as 5")
    return value


def add_profile_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-m",
        dest="module",
        nargs=argparse.REMAINDER,
        metavar="MODULE",
        help="profile a module of your code as `python -m MODULE args` runs it, instead of a script "
        "(found in the working directory or PYTHONPATH; the module's arguments follow it)",
    )
    parser.add_argument("script", nargs="?", help="the Python script to profile")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    _add_output_arguments(parser)
    parser.add_argument(
        "--passes",
        type=_passes,
        default=None,
        metavar="LIST",
        help="comma-separated passes among " + ",".join(PASSES) + ", and memory (the cpu and cuda "
        "passes record allocations: memory per line) (default: sample,cprofile,cpu,memory, "
        "and cuda when a GPU is available)",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        metavar="INTERPRETER",
        help="interpreter to profile in (default: this one)",
    )
    parser.add_argument(
        "--cwd",
        default=None,
        metavar="DIR",
        help="working directory for the script (default: the current one)",
    )
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="another folder of your own code (the script's folder always counts)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="stop a pass after this long; finished passes are still reported",
    )
    parser.add_argument(
        "--event-budget",
        type=_count,
        default=_JOB.event_budget,
        metavar="N",
        help="stop recording an autograd pass after N torch calls, to bound memory "
        f"(8-190 KB a call with stacks, by model); 0: no bound (default: {_JOB.event_budget}). "
        "Apart from it, recording stops when the process grows by a third of the memory available",
    )
    parser.add_argument(
        "--no-fork",
        action="store_true",
        help="start a fresh interpreter for each pass (default: one fork server imports torch "
        "once and every pass is forked from it, on Linux and macOS)",
    )
    parser.add_argument(
        "--no-prestart",
        action="store_true",
        help="with --no-fork: start each pass's interpreter only when the previous pass has ended "
        "(default: the pass after cprofile starts while cprofile runs, and waits, so its start-up overlaps)",
    )
    parser.add_argument(
        "--save-raw",
        metavar="DIR",
        default=None,
        help="also write each profiler pass's raw events (the cpu and cuda passes', and on a GPU the "
        "sample pass's device activity) to DIR/SCRIPT.PASS.raw.json.gz: attach it to a bug report; "
        "read it with `bottleneck-lsp replay`",
    )
    parser.add_argument(
        "--baseline",
        metavar="OLD.json",
        default=None,
        help="a result (profile --format json) to compare this run with: the comparison (the totals and "
        "the lines that changed most) is printed on stderr, the report as without it",
    )
    parser.add_argument(
        "--fail-on-regression",
        type=_share,
        default=None,
        metavar="SHARE",
        help="with --baseline: exit 3 when the total, or a line holding at least --min-share of it, "
        "is slower than the baseline by more than SHARE (10%% or 0.1), each printed as an error",
    )
    parser.add_argument(
        "--min-regression-ms",
        type=_milliseconds,
        default=MIN_REGRESSION_MS,
        metavar="MS",
        help="with --fail-on-regression: a line, or the total, must also be slower by more than MS "
        "milliseconds of time; a line of a few milliseconds doubles between two runs of the same "
        f"code on sampling noise alone (default: {MIN_REGRESSION_MS:g})",
    )
    parser.add_argument(
        "--nproc-per-node",
        type=int,
        default=_JOB.nproc_per_node,
        metavar="N",
        help="a distributed job: each pass launches the script with torchrun, N processes on this node "
        "(gloo or NCCL, as the script chooses); every line shows its spread across the ranks and "
        "the straggler is named (default: 1, one process)",
    )
    parser.add_argument(
        "--parts-dir",
        metavar="DIR",
        default=None,
        help="several nodes: a folder every node sees at the same path; every rank writes its parts "
        "there and node 0 reports all ranks (the other nodes report their own)",
    )
    parser.add_argument(
        "--collective-sizes",
        action="store_true",
        help="a distributed job: record the autograd passes' input shapes, for the bytes each "
        "collective sent (the Ranks table's sent column); the recording takes more memory "
        "(1.1x to 3.1x measured, 3.1x on an LSTM language model)",
    )
    launcher = parser.add_argument_group(
        "torchrun options", "passed on to torch.distributed.run for a distributed job (default: --standalone)"
    )
    for option in LAUNCHER_OPTIONS:
        launcher.add_argument(option, dest=_launcher_dest(option), metavar="VALUE", default=None)
    parser.add_argument(
        "--no-exact-lines",
        action="store_true",
        help="skip the per-call line marker (faster on tiny-op loops; operator lines become their function)",
    )


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
        elif self.tty and event.kind == "pass_end":
            self.stream.write(f"[bottleneck] pass {event.pass_name}: {event.status}\n")
            self.stream.flush()


def _launcher_dest(option: str) -> str:
    return "launch_" + option.lstrip("-").replace("-", "_")


def _launcher(ns: argparse.Namespace) -> tuple[str, ...]:
    out: list[str] = []
    for option in LAUNCHER_OPTIONS:
        value = getattr(ns, _launcher_dest(option), None)
        if value is not None:
            out += [option, value]
    return tuple(out)


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
        if ns.format == "trace" and ns.passes is not None and not set(ns.passes) & {"cpu", "cuda"}:
            print("bottleneck-lsp: error: --format trace needs the cpu or cuda pass", file=sys.stderr)
            return 2
        if (
            ns.format == "speedscope"
            and ns.passes is not None
            and not set(ns.passes) & {"sample", "cpu", "cuda"}
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
        exact_lines=not ns.no_exact_lines,
        event_budget=ns.event_budget,
        fork=not ns.no_fork,
        prestart=not ns.no_prestart,
        save_raw=save_raw,
        nproc_per_node=ns.nproc_per_node,
        launcher=_launcher(ns),
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
    if doc.status == "cancelled" and all(p.status == "skipped" for p in doc.passes):
        print("bottleneck-lsp: stopped before any pass ran", file=sys.stderr)
        return stopped
    recorded = []
    for name in PASSES:
        made = job.recorded(name)
        if made and name in ("cpu", "cuda"):
            recorded.append(made[0])  # a distributed job's exports come from its lowest rank
        for raw in made if ns.save_raw is not None else []:
            print(f"bottleneck-lsp: raw recording of the {name} pass: {raw}", file=sys.stderr)
    comparison = compare(baseline, doc) if baseline is not None else None
    found = []
    if comparison is not None and ns.fail_on_regression is not None:
        found = regressions(comparison, ns.fail_on_regression, ns.min_share, ns.min_regression_ms / 1000)
    # the cuda pass's recording when there is one: it holds the device's work too
    if _emit(doc, ns, comparison, found, recorded[-1] if recorded else None) != 0:
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
    sys.stderr.write("\n" + diffreport.render(comparison))
    if ns.fail_on_regression is None:
        return
    for line in diffreport.regression_lines(comparison, found, ns.fail_on_regression):
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
        text = json.dumps(diffreport.to_json(comparison), indent=1) + "\n"
    else:
        text = diffreport.render(comparison)
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


def _emit(
    doc: Document,
    ns: argparse.Namespace,
    comparison: Comparison | None = None,
    found: list[Regression] | None = None,
    raw: str | None = None,
) -> int:
    """The document as the chosen format, on stdout or in ``--output``; 2 when the format
    cannot be made (a timeline format without a recording of an autograd pass)."""
    thresholds = Thresholds(min_share=ns.min_share, top=ns.top, min_memory_share=ns.min_memory_share)
    if ns.format in TIMELINE_FORMATS:
        made = _timeline(doc, ns, raw)
        if made is None:
            return 2
        text = made
    elif ns.format == "json":
        text = json.dumps(doc.to_json(), indent=1) + "\n"
    elif ns.format == "sarif":
        threshold = getattr(ns, "fail_on_regression", None)
        text = json.dumps(sarif.render(doc, thresholds, comparison, found, threshold), indent=1) + "\n"
    else:
        text = report.render(doc, thresholds, cwd=os.getcwd())
    return write_output(text, ns.output)


def _timeline(doc: Document, ns: argparse.Namespace, raw: str | None) -> str | None:
    """``--format trace`` or ``speedscope`` from the autograd pass's recording (and, for
    speedscope, the sample pass in ``doc``); None after saying why it cannot be made."""
    from . import chrometrace, speedscope
    from .replay import RecordingError
    from .timeline import from_recording

    found = None
    if raw is not None:
        try:
            replaying = getattr(ns, "command", "profile") == "replay"
            found = from_recording(raw, ns.root if replaying else None)
        except RecordingError as exc:
            print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
            return None
    cwd = os.getcwd()
    if ns.format == "trace":
        if found is None:
            print(
                "bottleneck-lsp: error: no autograd pass recorded its ops (the cpu or cuda pass "
                "must run to the end or to its event budget): no trace to write",
                file=sys.stderr,
            )
            return None
        return json.dumps(chrometrace.render(found, cwd)) + "\n"
    return json.dumps(speedscope.render(doc, found, cwd)) + "\n"


def run_replay(ns: argparse.Namespace) -> int:
    from .replay import RecordingError, replay

    problem = output_problem(ns.output, (ns.recording,))
    if problem is not None:
        print(f"bottleneck-lsp: error: {problem}", file=sys.stderr)
        return 2
    try:
        doc = replay(ns.recording, ns.root)
    except RecordingError as exc:
        print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
        return 2
    return _emit(doc, ns, raw=ns.recording)


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("text", "json", "sarif", *TIMELINE_FORMATS),
        default="text",
        help="report format: text, json (the result document), sarif (SARIF 2.1.0: hot lines, and "
        "--fail-on-regression's findings, for code scanning), speedscope (wall time per line, and "
        "the torch ops as they ran, each under its line), trace (Chrome/Perfetto trace of the "
        "autograd pass: ops and GPU work, each with its line in args) (default: text)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    top, share = _THRESHOLDS.top, _THRESHOLDS.min_share
    lines = f"show at least the N hottest lines (default: {top})"
    parser.add_argument("--top", type=_count, default=top, metavar="N", help=lines)
    parser.add_argument(
        "--min-share",
        type=_share,
        default=share,
        metavar="SHARE",
        help=f"show every line at or above this share (default: {share * 100:.0f}%%)",
    )
    memory = _THRESHOLDS.min_memory_share
    parser.add_argument(
        "--min-memory-share",
        type=_share,
        default=memory,
        metavar="SHARE",
        help=f"also show every line holding this share of the memory peak (default: {memory * 100:.0f}%%)",
    )


def split_script_argv(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[list[str], list[str] | None]:
    """``argv`` up to the script (or ``-m MODULE``), for argparse, and the script's own
    arguments after it, verbatim, as ``python script.py ARGS`` passes them: argparse would
    drop a ``--`` right after the script and end ``-m``'s arguments at one. None for the
    second when no script is found (argparse then says what is missing)."""
    options = parser._option_string_actions  # the parser's own table of its options
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in ("--", "-m"):
            return (argv[: i + 2], argv[i + 2 :]) if i + 1 < len(argv) else (argv, [])
        if not token.startswith("-") or token == "-":
            return argv[: i + 1], argv[i + 1 :]
        name = token.split("=", 1)[0]
        action = options.get(name)
        if action is None and name.startswith("--"):  # argparse takes unambiguous prefixes
            matches = {a for o, a in options.items() if o.startswith(name)}
            action = matches.pop() if len(matches) == 1 else None
        if action is None and not name.startswith("--") and name[:2] in options:
            action, token = options[name[:2]], name[:2] + "=" + name[2:]  # -oFILE
        if action is None:
            return argv, None
        takes_value = action.nargs != 0 and "=" not in token
        i += 2 if takes_value else 1
    return argv, None


def parse_profile_argv(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser`` (the profile command's) over ``argv``, the script's arguments kept verbatim."""
    options, rest = split_script_argv(parser, argv)
    return _with_script_args(parser.parse_args(options), rest)


def _with_script_args(ns: argparse.Namespace, rest: list[str] | None) -> argparse.Namespace:
    if rest is not None:
        if ns.module:
            ns.module = [ns.module[0], *rest]
            ns.args = []
        else:
            ns.args = rest
    return ns


def _profile_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Profile a PyTorch script with cProfile and the autograd profiler; "
        "report hotspots on exact source lines.",
    )
    add_profile_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(
        prog="bottleneck-lsp", description="Line-level PyTorch profiling: CLI and language server."
    )
    parser.add_argument("--version", action="version", version=f"bottleneck-lsp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    profile = sub.add_parser("profile", help="profile a script and print the report")
    add_profile_arguments(profile)
    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    where = serve.add_mutually_exclusive_group()
    where.add_argument(
        "--tcp",
        metavar="[HOST:]PORT",
        help="listen on TCP instead of stdio (host defaults to 127.0.0.1; port 0: any free one); "
        "clients must send the token the server writes to a file only you can read",
    )
    where.add_argument(
        "--socket",
        metavar="PATH",
        help="listen on a Unix socket created 0600 (only you can connect): the way for local "
        "clients on a shared machine",
    )
    serve.add_argument(
        "--token-file",
        metavar="FILE",
        help="the token's file: read when it exists (it must be private, mode 600), else written "
        "there (default for --tcp: a new token per start, in a private folder; the path is printed)",
    )
    serve.add_argument(
        "--no-auth",
        action="store_true",
        help="accept connections without a token (DANGEROUS on a shared machine: any local user "
        "could run code as you)",
    )
    serve.add_argument("--log-level", default="WARNING", help="server log level on stderr (default: WARNING)")
    replay = sub.add_parser(
        "replay",
        help="report on a raw recording (profile --save-raw), without torch or a GPU",
        description="Read a raw recording (gzip or not) written by `profile --save-raw`, run the same "
        "attribution and analysis, and print that pass's report or the result document.",
    )
    replay.add_argument("recording", help="the raw recording (.raw.json or .raw.json.gz)")
    replay.add_argument(
        "--root",
        metavar="DIR",
        default=None,
        help="where the recorded script's folder is on this machine (default: the recording's folder)",
    )
    _add_output_arguments(replay)
    diff = sub.add_parser(
        "diff",
        help="compare two results (profile --format json) line by line",
        description="Per line, the change in wall time, op CPU time and device time between two runs, "
        "in seconds and in share. Lines are matched by file, text and function, so edits that move "
        "them still match; lines in one run only are listed apart.",
    )
    diff.add_argument("old", help="the earlier result (JSON)")
    diff.add_argument("new", help="the later result (JSON)")
    diff.add_argument("--format", choices=("text", "json"), default="text", help="(default: text)")
    diff.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    rest = None
    if argv[:1] == ["profile"]:
        options, rest = split_script_argv(profile, argv[1:])
        argv = ["profile", *options]
    ns = parser.parse_args(argv)
    if ns.command == "profile":
        ns = _with_script_args(ns, rest)
    if ns.command == "serve":
        from .lsp.server import serve as run_server

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
    parser = _profile_parser("python -m bottleneck_lsp")
    return run_profile(parse_profile_argv(parser, sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
