"""The command line's grammar: ``bottleneck-lsp`` and its subcommands (profile, serve,
replay, diff), ``python -m bottleneck_lsp``'s, the checks of each option's value, and
where the script's own arguments begin (kept verbatim, as Python passes them)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import __version__
from .analysis.ranking import Thresholds
from .job.spec import JobSpec
from .schema.contract import PASSES, unknown_passes
from .schema.torchrun_options import LAUNCHER_OPTIONS

_JOB = JobSpec(script="")  # the defaults live in JobSpec and Thresholds
_THRESHOLDS = Thresholds()
TIMELINE_FORMATS = ("speedscope", "trace")  # made from an autograd pass's raw recording


def _passes(text: str) -> tuple[str, ...]:
    names = tuple(p.strip() for p in text.split(",") if p.strip())
    problem = unknown_passes(names)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return names


def share_value(text: str) -> float:
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
    add_output_arguments(parser)
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
        "--duration",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="profile a window of a long run: stop each pass after this long (its start-up "
        "included) and report what it recorded until then; the next pass still runs, so the "
        "job takes about one window per pass (default: every pass runs the whole script)",
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
        "sample pass's device activity) to DIR/SCRIPT.PASS.raw.json.gz, each pass in a run of its "
        "own (on a GPU: the one run, each window's to DIR/SCRIPT.cuda.windowN.raw.json.gz): attach "
        "it to a bug report; read it with `bottleneck-lsp replay`",
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
        type=share_value,
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
    parser.add_argument(
        "--separate-runs",
        action="store_true",
        help="run the script once per pass (sample, cprofile, cpu, and cuda on a GPU), as before one run: "
        "whole-run op totals and call counts, at the cost of running the script three or four times; by "
        "default it runs once, the cpu pass, cProfile (and on a GPU the cuda pass) recorded in windows "
        "of the sample pass's run",
    )
    parser.add_argument(
        "--separate-cprofile",
        action="store_true",
        help="always run the cprofile pass on its own; by default, when the sample pass found the "
        "script's time in torch's ops rather than in Python (at most 10%%, a run of 1 s or more), "
        "cProfile records in the cpu pass's run instead, one run of the script fewer, and runs "
        "alone after it when that run was slowed (more than 1.15x the sample pass's, or over "
        "50,000 profiler events a second)",
    )


def _launcher_dest(option: str) -> str:
    return "launch_" + option.lstrip("-").replace("-", "_")


def launcher_options(ns: argparse.Namespace) -> tuple[str, ...]:
    out: list[str] = []
    for option in LAUNCHER_OPTIONS:
        value = getattr(ns, _launcher_dest(option), None)
        if value is not None:
            out += [option, value]
    return tuple(out)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
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
        type=share_value,
        default=share,
        metavar="SHARE",
        help=f"show every line at or above this share (default: {share * 100:.0f}%%)",
    )
    memory = _THRESHOLDS.min_memory_share
    parser.add_argument(
        "--min-memory-share",
        type=share_value,
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
    return with_script_args(parser.parse_args(options), rest)


def with_script_args(ns: argparse.Namespace, rest: list[str] | None) -> argparse.Namespace:
    if rest is not None:
        if ns.module:
            ns.module = [ns.module[0], *rest]
            ns.args = []
        else:
            ns.args = rest
    return ns


def profile_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Profile a PyTorch script with cProfile and the autograd profiler; "
        "report hotspots on exact source lines.",
    )
    add_profile_arguments(parser)
    return parser


def command_parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """``bottleneck-lsp``'s parser, and its ``profile`` subcommand's."""
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
        help="the token's file: read when it exists (it must be private, mode 600, and the token at "
        "least 16 characters), else a new token is written there and removed at exit (default for "
        "--tcp: a new token per start, in a private folder; the path is printed)",
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
    replay.add_argument(
        "recording",
        nargs="+",
        help="the raw recording (.raw.json or .raw.json.gz); or the windows of one run, in their order "
        "(STEM.PASS.window1.raw.json.gz ...), read together as that run's pass",
    )
    replay.add_argument(
        "--root",
        metavar="DIR",
        default=None,
        help="where the recorded script's folder is on this machine (default: the recording's folder)",
    )
    add_output_arguments(replay)
    diff = sub.add_parser(
        "diff",
        help="compare two results (profile --format json) line by line",
        description="Per line, the change in wall time, Python time, op CPU time, device time and memory "
        "held at the peak between two runs, in seconds (bytes) and in share. Lines are matched by "
        "file, text and function, so edits that move them still match; lines in one run only are "
        "listed apart.",
    )
    diff.add_argument("old", help="the earlier result (JSON)")
    diff.add_argument("new", help="the later result (JSON)")
    diff.add_argument("--format", choices=("text", "json"), default="text", help="(default: text)")
    diff.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    return parser, profile
