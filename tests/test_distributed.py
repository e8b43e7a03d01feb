"""Distributed jobs, for real: torchrun with 2 ranks on loopback, gloo, real DDP training.

- examples/ddp_train.py plants a straggler (rank 1 does extra work on one line): the report
  names rank 1 and that line, and shows the other rank waiting in the all-reduce; the server
  shows the same in its summary, the lens and the hover.
- With the same work on every rank, the ranks' medians give the single process's top lines.
- A rank that raises ends the job: the report names the rank and the line, and no process
  of the job is left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import LanguageClient

from helpers import SCRIPTS
from lsp_helpers import CONFIGS, _live_processes, close_session, execute, our_folders, start_session

CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "ddp_train.py"
FAILS = SCRIPTS / "ddp_rank_fails.py"


def line_of(path: Path, marker: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if marker in text)


STRAGGLER_LINE = line_of(EXAMPLE, "# the straggler's extra work")
BACKWARD_LINE = next(
    i for i, text in enumerate(EXAMPLE.read_text().splitlines(), 1) if text.strip() == "loss.backward()"
)


def profile(*args: str, passes: str = "sample,cpu", timeout: int = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "profile", "--passes", passes, "--timeout", str(timeout), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


def left_behind(marker: str) -> list[tuple[int, list[str]]]:
    """Processes of a job on ``marker``: the launcher, its workers, the runners."""
    return [
        (pid, argv)
        for pid, argv, _ in _live_processes()
        if any(marker in a for a in argv) and any("bottleneck_lsp" in a for a in argv)
    ]


@pytest.mark.slow
def test_the_straggler_rank_and_its_line_are_named_and_the_others_wait() -> None:
    done = profile("--nproc-per-node", "2", str(EXAMPLE))
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    # the straggler, in words, with its line
    assert "rank 1 is the straggler: it entered " in text, text[-4000:]
    section = text[text.index("Its lines above the other ranks' median") :].splitlines()
    assert f"examples/ddp_train.py:{STRAGGLER_LINE}  +" in section[1], section[:4]
    assert f"examples/ddp_train.py:{STRAGGLER_LINE}:1: warning: rank 1 (the straggler) spent " in text
    # the ranks table: rank 0 waited in the collectives for rank 1, far longer than rank 1 did
    table = text[text.index("  Ranks (torchrun --nproc-per-node 2: 2 ranks here)") :].splitlines()
    rows = {int(r.split()[0]): r.split() for r in table[3:5]}
    wait = {rank: float(cols[7]) for rank, cols in rows.items()}  # "waiting" column, seconds
    last = {rank: int(cols[9]) for rank, cols in rows.items()}
    assert wait[0] > 5 * wait[1] and wait[0] > 0.2, table[:6]
    # its time in the collectives (gloo's work, recorded as a user-scope range) holds its wait
    inside = {rank: float(cols[5]) for rank, cols in rows.items()}  # "in them" column, seconds
    assert inside[0] >= wait[0], table[:6]
    assert last[1] > last[0], table[:6]
    assert all(cols[10] == "-" for cols in rows.values()), table[:6]  # sent: sizes not asked for
    # the hotspot table: the planted line's slowest rank is 1, the backward line's is 0 (waiting)
    hot = text[text.index("Hotspots by source line") :].splitlines()
    planted = next(r for r in hot if f"ddp_train.py:{STRAGGLER_LINE} " in r)
    backward = next(r for r in hot if f"ddp_train.py:{BACKWARD_LINE} " in r)
    assert " 1: " in planted and " 0: " in backward, hot[:10]
    assert not left_behind(str(EXAMPLE))


@pytest.mark.slow
def test_with_even_work_the_ranks_medians_match_the_single_process(tmp_path: Path) -> None:
    two = profile("--nproc-per-node", "2", "--collective-sizes", "--format", "json", "-o",
                  str(tmp_path / "two.json"), str(EXAMPLE), "--even")  # fmt: skip
    assert two.returncode == 0, two.stderr[-3000:]
    # (like with like: a distributed job runs once per pass, its compiler stack loaded first)
    one = profile(
        "--separate-runs", "--format", "json", "-o", str(tmp_path / "one.json"), str(EXAMPLE), "--even"
    )
    assert one.returncode == 0, one.stderr[-3000:]
    docs = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in ("one", "two")}
    assert "distributed" not in docs["one"] and "ranks" not in docs["one"]
    assert docs["two"]["distributed"]["world_size"] == 2 and len(docs["two"]["ranks"]) == 2
    # The training's lines (joining the group costs more with a peer to wait for: its start-up)
    top = {
        name: [r["line"] for r in doc["ranking"]["lines"] if r["function"] == "train"][:2]
        for name, doc in docs.items()
    }
    assert top["one"][0] == top["two"][0] == BACKWARD_LINE, top
    assert set(top["one"]) == set(top["two"]), top
    # every cell of the distributed ranking is the median of its per-rank values
    for row in docs["two"]["ranking"]["lines"]:
        for cell in row["columns"].values():
            values = sorted(cell["spread"]["values"])
            assert cell["spread"]["median"] == pytest.approx((values[0] + values[1]) / 2)
    assert STRAGGLER_LINE not in [r["line"] for r in docs["two"]["ranking"]["lines"]]
    # DDP all-reduces every gradient at each step: 40 steps of the model's float32 parameters
    gradients = (512 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10) * 4
    for rank in docs["two"]["ranks"]:
        cpu = next(p for p in rank["passes"] if p["name"] == "cpu")
        reduced = sum(c["bytes"] for c in cpu["collectives"] if c["name"] == "c10d::allreduce_")
        assert reduced == 40 * gradients, (rank["rank"], reduced)
    assert all(r["bytes"] > 40 * gradients for r in docs["two"]["distributed"]["ranks"])  # and DDP's start


def test_a_rank_that_raises_ends_the_job_and_is_named_with_its_line() -> None:
    done = profile("--nproc-per-node", "2", str(FAILS), passes="sample", timeout=120)
    assert done.returncode == 1, done.stderr[-3000:]
    text = done.stdout
    planted = line_of(FAILS, "# the planted failure")
    assert "Script failed on rank 1 (error in the sample pass)" in text, text[-3000:]
    assert f"ddp_rank_fails.py:{planted}:" in text
    assert ": error: rank 1: RuntimeError: rank 1 gave up" in text
    assert not left_behind(str(FAILS))


@pytest_asyncio.fixture
async def ddp_client() -> Any:
    config, caps = CONFIGS["stdio-vscode"]
    session = await config.start()
    settings = {
        "passes": ["sample", "cpu"],
        "python": sys.executable,
        "timeout": 240,
        "nprocPerNode": 2,
        "collectiveSizes": True,
    }
    await start_session(session, caps, str(ROOT / "examples"), settings)
    yield session
    await close_session(session)


@pytest.mark.slow
async def test_the_editor_shows_the_spread_and_the_straggler(ddp_client: LanguageClient) -> None:
    client = ddp_client
    uri = uris.from_fs_path(str(EXAMPLE)) or ""
    answer = await execute(client, "bottleneck.profile", {"uri": uri})
    assert answer["status"] == "ok", answer
    token = list(client.progress_reports)[-1]
    reports = client.progress_reports[token]
    assert any(
        isinstance(r, types.WorkDoneProgressReport) and "on ranks 0, 1" in (r.message or "") for r in reports
    ), reports
    summary = reports[-1].message or ""
    assert f"straggler: rank 1, ddp_train.py:{STRAGGLER_LINE} +" in summary, summary

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    titles = [
        lens.command.title
        for lens in lenses or []
        if lens.range.start.line == STRAGGLER_LINE - 1 and lens.command
    ]
    assert titles and "rank 1: 2.0x the median" in titles[0], titles
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=STRAGGLER_LINE - 1, character=8),
        )
    )
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert "Across the 2 ranks (wall" in value and "(rank 1)" in value, value
    assert "**Straggler**: rank 1 is the straggler" in value
    assert "On this line rank 1 (the straggler) spent " in value
    diagnostics = [d for d in client.diagnostics.get(uri, []) if d.range.start.line == STRAGGLER_LINE - 1]
    assert diagnostics and "rank 1: 2.0x the median" in diagnostics[0].message
    # collectiveSizes: the report's Ranks table says what each rank's all-reduces sent
    report = (await execute(client, "bottleneck.report", uri))["text"]
    ranks = report[report.index("Ranks") :].splitlines()
    rows = [line.split() for line in ranks if line.split()[:1] in (["0"], ["1"])]
    assert len(rows) == 2 and all(row[-1].endswith(("MB", "GB")) for row in rows), ranks[:8]


FOREVER = SCRIPTS / "ddp_forever.py"


def test_a_timeout_ends_every_rank() -> None:
    done = profile("--nproc-per-node", "2", str(FOREVER), passes="sample", timeout=8)
    assert done.returncode == 124, done.stderr[-3000:]
    assert "pass status: timeout" in done.stdout
    assert not left_behind(str(FOREVER))


DEAF = SCRIPTS / "ddp_deaf_rank.py"


def test_a_rank_deaf_to_sigterm_is_killed_and_the_job_still_ends() -> None:
    """A rank deadlocked where no signal handler runs outlives the launcher's SIGTERM and
    keeps its output pipes open: the job once waited for those pipes for ever (a hung CI)."""
    started = time.monotonic()
    # 20 s: time for rank 0 to end on its own even on a busy machine (CI's 2 cores)
    done = profile("--nproc-per-node", "2", str(DEAF), passes="sample", timeout=20)
    assert done.returncode == 124, done.stderr[-3000:]
    assert time.monotonic() - started < 150
    assert "pass status: timeout after 20.0 s" in done.stdout, done.stdout[-3000:]
    ranks = done.stdout[done.stdout.index("Ranks") :].splitlines()
    assert any(row.split()[:2] == ["0", "ok"] for row in ranks), "\n".join(ranks[:6])
    assert any(row.split()[:2] == ["1", "timeout"] for row in ranks), ranks[:6]
    assert not left_behind(str(DEAF))


def test_a_killed_command_line_leaves_no_rank_behind() -> None:
    before = our_folders()
    cli = subprocess.Popen(
        [CLI, "profile", "--nproc-per-node", "2", "--passes", "sample", str(FOREVER)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=SCRIPTS,
    )
    try:
        deadline = time.monotonic() + 120
        while len([p for p, argv in left_behind(str(FOREVER)) if "--per-rank" in argv]) < 2:
            assert time.monotonic() < deadline, "the ranks never started"
            time.sleep(0.2)
        time.sleep(3)  # both ranks inside the script: rank 0 blocked in the all-reduce
    finally:
        cli.kill()
        cli.wait()
    deadline = time.monotonic() + 90  # torchrun gives its workers 30 s after SIGTERM
    while left_behind(str(FOREVER)):
        assert time.monotonic() < deadline, left_behind(str(FOREVER))
        time.sleep(0.5)
    assert our_folders() - before == set()  # the job's private folder went with the launcher


def test_waiting_and_the_straggler_follow_from_the_collectives_start_times() -> None:
    """The arithmetic, on known start times: rank 1 arrives 30 ms late at 3 of 4
    all-reduces, 10 ms early at the fourth. Its lines above the others' are those of its
    work, not those where it waited: joining the group (the first to start waits longest)
    or an explicit all-reduce."""
    from bottleneck_lsp.analysis import distributed
    from bottleneck_lsp.schema.model import Cell, Collective, LineOp, Pass, RankedLine, Ranking, RankRun

    def line(number: int, text: str, line_s: float, ops: list[LineOp]) -> RankedLine:
        wall = {"wall-time": Cell(share=0.2, time_s=line_s)}
        return RankedLine(file="/x/train.py", line=number, column=1, text=text, function="f", exact=True,
                          share=0.2, time_s=line_s, columns=wall, ops=ops)  # fmt: skip

    def rank(
        r: int, starts: list[int], line_s: float, join_s: float, reduce_s: float
    ) -> tuple[RankRun, Ranking]:
        calls = [Collective(name="c10d::allreduce_", start_ns=s, duration_us=1.0) for s in starts]
        part = Pass(name="cpu", status="ok", rank=r, collectives=calls)
        reduce_ops = [
            LineOp(name="gloo:all_reduce", self_cpu_us=reduce_s * 1e6),
            LineOp(name="aten::add", self_cpu_us=5.0),
        ]
        rows = [
            line(7, "work()", line_s, [LineOp(name="aten::mm", self_cpu_us=line_s * 1e6)]),
            line(3, 'dist.init_process_group("gloo")', join_s, []),
            line(9, "dist.all_reduce(total)", reduce_s, reduce_ops),
        ]
        return RankRun(rank=r, passes=[part]), Ranking(ranked_by="wall-time", lines=rows)

    ms = 1_000_000
    zero, one = (
        rank(0, [0, 100 * ms, 200 * ms, 300 * ms], 0.1, 0.01, 0.01),
        rank(1, [30 * ms, 130 * ms, 230 * ms, 290 * ms], 0.4, 0.9, 0.5),
    )
    ranking, d = distributed.merge([zero[0], one[0]], [zero[1], one[1]])
    assert d.matched == 4 and [r.last for r in d.ranks] == [1, 3]
    assert d.ranks[0].wait_s == pytest.approx(0.090) and d.ranks[1].wait_s == pytest.approx(0.010)
    assert d.straggler is not None and d.straggler.rank == 1 and d.straggler.late_s == pytest.approx(0.030)
    assert [(e.line, e.excess_s) for e in d.straggler.lines] == [(7, pytest.approx(0.3))]
    cell = next(row for row in ranking.lines if row.line == 7).columns["wall-time"]
    assert cell.time_s == pytest.approx(0.25) and cell.spread is not None and cell.spread.max_rank == 1


def test_a_wait_for_two_buckets_in_flight_together_is_counted_once() -> None:
    """DDP issues a step's bucket all-reduces back to back: rank 0 enters both 1 ms apart,
    rank 1 both 20 ms later. Rank 0 waited from 0 to 21 ms: 21 ms of its time, not 40; its
    time in the backend's work (two overlapping ``gloo:all_reduce`` spans) is their union."""
    from bottleneck_lsp.analysis import distributed
    from bottleneck_lsp.schema.model import Cell, Collective, Pass, RankedLine, Ranking, RankRun

    ms = 1_000_000

    def rank(r: int, first: int) -> tuple[RankRun, Ranking]:
        starts = [first, first + ms]
        calls = [Collective(name="c10d::allreduce_", start_ns=s, duration_us=50.0) for s in starts]
        # the work ends when the last rank's data arrived: at 21 ms and 22 ms on both ranks
        work = [
            Collective(name="gloo:all_reduce", start_ns=s, duration_us=(22 * ms - s) / 1000) for s in starts
        ]
        wall = {"wall-time": Cell(share=1.0, time_s=0.03)}
        row = RankedLine(file="/x/t.py", line=5, column=1, text="loss.backward()", function="f", exact=True,
                         share=1.0, time_s=0.03, columns=wall)  # fmt: skip
        part = Pass(name="cpu", status="ok", rank=r, collectives=calls + work)
        return RankRun(rank=r, passes=[part]), Ranking(ranked_by="wall-time", lines=[row])

    zero, one = rank(0, 0), rank(1, 20 * ms)
    _ranking, d = distributed.merge([zero[0], one[0]], [zero[1], one[1]])
    assert [r.last for r in d.ranks] == [0, 2]
    assert d.ranks[0].wait_s == pytest.approx(0.021) and d.ranks[1].wait_s == 0.0
    assert d.ranks[0].collective_s == pytest.approx(0.022) and d.ranks[1].collective_s == pytest.approx(0.002)
    assert d.ranks[0].transfer_s == pytest.approx(0.001)


@pytest.mark.slow
def test_two_nodes_sharing_a_parts_folder_are_reported_whole_on_node_0(tmp_path: Path) -> None:
    """Two "nodes" on loopback (two commands, --nnodes 2, one rank each): node 0's report
    holds both ranks, node 1's its own and says so."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])

    def node(n: int) -> subprocess.Popen[str]:
        options = [
            "--nnodes",
            "2",
            "--node-rank",
            str(n),
            "--master-addr",
            "127.0.0.1",
            "--master-port",
            port,
        ]
        out = ["--format", "json", "-o", str(tmp_path / f"node{n}.json")]
        return subprocess.Popen(
            [CLI, "profile", "--passes", "sample,cpu", "--timeout", "240", *options, "--nproc-per-node", "1",
             "--parts-dir", str(tmp_path / "parts"), *out, str(EXAMPLE)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip

    nodes = [node(0), node(1)]
    for started in nodes:
        _out, err = started.communicate(timeout=600)
        assert started.returncode == 0, err[-3000:]
    zero, one = (json.loads((tmp_path / f"node{n}.json").read_text()) for n in (0, 1))
    assert [r["rank"] for r in zero["ranks"]] == [0, 1] and zero["distributed"]["world_size"] == 2
    assert all(p["status"] == "ok" for run in zero["ranks"] for p in run["passes"])
    planted = next(r for r in zero["ranking"]["lines"] if r["line"] == STRAGGLER_LINE)
    spread = planted["columns"]["wall-time"]["spread"]
    assert spread["max_rank"] == 1 and spread["values"][0] == 0.0 and spread["values"][1] > 0
    assert zero["distributed"]["matched"] > 0 and not zero["distributed"]["notes"]
    assert [r["rank"] for r in one["ranks"]] == [1]
    assert "covers 1 of the job's 2 ranks" in one["distributed"]["notes"][0]


SIZES = r"""
import json, os, sys
import torch
import torch.distributed as dist
from bottleneck_lsp.runner import comms

os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[1])
dist.init_process_group("gloo", rank=0, world_size=1)
with torch.autograd.profiler.profile(record_shapes=True) as prof:
    dist.all_reduce(torch.ones(1000))  # 4,000 bytes
    dist.broadcast(torch.ones(10, 10, dtype=torch.float64), 0)  # 800
    dist.all_gather([torch.empty(75, dtype=torch.int64)], torch.ones(75, dtype=torch.int64))  # 600
sent = [(node.name, comms.message_bytes(node.name, node.extra_fields))
        for node in prof.kineto_results.experimental_event_tree() if node.name.startswith("c10d::")]
dist.destroy_process_group()
print(json.dumps(sent))
"""


def test_a_collective_sends_the_bytes_of_its_input_tensors() -> None:
    """Read from the shapes torch records, on a real gloo group (a world of one)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = subprocess.run(
        [sys.executable, "-c", SIZES, str(port)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    sent = json.loads(done.stdout.splitlines()[-1])
    assert sent == [["c10d::allreduce_", 4000], ["c10d::broadcast_", 800], ["c10d::allgather_", 600]]


# -- no hang at exit (issue 44) ------------------------------------------------------------------
COMMON = SCRIPTS / "ddp_common_shape.py"


@pytest.mark.parametrize(
    ("script", "passes"),
    [
        (COMMON, "sample,cprofile,cpu"),
        (SCRIPTS / "ddp_no_destroy.py", "sample,cpu,memory"),
        (SCRIPTS / "ddp_dataloader.py", "cprofile,cpu"),
    ],
    ids=["common-shape", "no-destroy", "dataloader-workers"],
)
def test_ddp_scripts_end_in_every_pass_with_no_process_left(script: Path, passes: str) -> None:
    """Before the fix, 2-5 profiled runs in 10 of the common shape hung at exit in each pass:
    the main thread freed the process group (from DDP's reducer, as main() returned) and
    joined gloo's thread, which waited for the GIL to drop a Python object held in the
    thread-local state of its last work item (runner/processgroups.py). Each pass here is
    two more chances for it; the timeout makes a hang fail the test in minutes."""
    done = profile("--nproc-per-node", "2", str(script), passes=passes, timeout=90)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    text = done.stdout
    statuses = [line for line in text.splitlines() if line.startswith("pass status:")]
    assert len(statuses) == len(passes.replace(",memory", "").split(",")), statuses
    assert all(s.startswith("pass status: ok") for s in statuses), statuses
    assert "did not exit" not in text  # nothing held the exit: the runner had nothing to end
    for rank in (0, 1):  # each rank ran the script to its end
        assert f"rank {rank} done" in done.stderr + text, done.stderr[-3000:]
    assert not left_behind(str(script))


def test_ddp_of_the_common_shape_names_its_straggler_rank_and_line() -> None:
    done = profile("--nproc-per-node", "2", str(COMMON), "--straggler", timeout=90)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    planted = line_of(COMMON, "# the straggler's extra work")
    assert "rank 1 is the straggler: it entered " in done.stdout, done.stdout[-4000:]
    assert f"ddp_common_shape.py:{planted}:1: warning: rank 1 (the straggler) spent " in done.stdout
    assert not left_behind(str(COMMON))
