"""The CUDA path without a GPU: raw recordings made on an NVIDIA H200 (torch 2.11.0+cu130,
CUDA 13.0), replayed through the same attribution, analysis and presentation as a live
run; and the recording itself, written by a live CPU pass and read back unchanged."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.analysis.ranking import Thresholds
from bottleneck_lsp.analysis.result import validate
from bottleneck_lsp.formats import report
from bottleneck_lsp.job.replay import RecordingError, replay
from bottleneck_lsp.lsp import annotations
from bottleneck_lsp.lsp.summary import summary_line
from bottleneck_lsp.runner.device import union_ns
from helpers import SCRIPTS, part_of, recorded_op, typed

FIXTURES = Path(__file__).parent / "fixtures"
GPU_BOUND = FIXTURES / "cuda_gpu_bound.raw.json.gz"
CPU_BOUND = FIXTURES / "cuda_cpu_bound.raw.json.gz"
REPO = Path(__file__).parent.parent
# The fixed passes on an H200 (session 29): live reports and raw recordings of one run
H200_RUN = REPO / "benchmarks" / "device" / "h200-2026-12-04"


CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def replay_json(path: Path, cwd: Path | None = None, root: Path | None = None) -> dict[str, Any]:
    """``bottleneck-lsp replay FILE --format json``, as a user runs it (in ``cwd``; ``root``:
    the recorded script's folder on this machine)."""
    where = ("--root", str(root)) if root is not None else ()
    done = cli("replay", str(path), *where, "--format", "json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doc: dict[str, Any] = typed(json.loads(done.stdout))
    assert validate(doc) == []
    return doc


def raw_device_total_us(path: Path) -> float:
    """The recorded device time, summed straight from the recording (not through our code)."""
    with gzip.open(path, "rt") as handle:
        events = json.load(handle)["events"]
    return sum(e["duration_ns"] for e in events if "CPU" not in e["device_type"]) / 1000.0


def top_line(part: dict[str, Any], key: str) -> dict[str, Any]:
    line: dict[str, Any] = max(part["lines"], key=lambda item: item[key])
    return line


def test_gpu_bound_recording_puts_the_matmul_line_first_and_reads_gpu_bound() -> None:
    doc = replay_json(GPU_BOUND)
    cuda = part_of(doc, "cuda")
    assert cuda is not None and cuda["status"] == "ok"
    top = top_line(cuda, "device_share")
    assert (Path(top["file"]).name, top["line"]) == ("cuda_gpu_bound.py", 9)
    assert top["device_share"] >= 0.9
    assert top["text"].startswith("y = x @ w")  # the local copy of the script was found
    assert top["device_count"] == 40 and "gemm" in top["kernels"][0]["name"]
    assert doc["verdict"]["bound"] == "gpu"
    # The CPU waited on the device at torch.cuda.synchronize() (line 12), nowhere near as
    # much anywhere else: that is where a GPU-bound script waits.
    waits = {line["line"]: line["wait_us"] for line in cuda["lines"]}
    assert max(waits, key=lambda k: waits[k]) == 12
    assert waits[12] > 0.9 * cuda["totals"]["wait_us"]


def test_cpu_bound_recording_puts_the_launch_loop_first_and_reads_cpu_bound() -> None:
    doc = replay_json(CPU_BOUND)
    cuda = part_of(doc, "cuda")
    assert cuda is not None
    by_device = top_line(cuda, "device_share")
    assert by_device["line"] == 5 and by_device["device_share"] >= 0.85
    by_cpu = top_line(cuda, "cpu_share")
    # 83.6% measured: line 7's single first reduction (aten::sum) took 14.6 ms of CPU time
    # once, in that recording (see docs/raw-recording.md).
    assert by_cpu["line"] == 5 and by_cpu["cpu_share"] >= 0.8
    assert doc["verdict"]["bound"] == "cpu"
    assert doc["verdict"]["device_busy_fraction"] < 0.2


@pytest.mark.parametrize("path", [GPU_BOUND, CPU_BOUND], ids=["gpu_bound", "cpu_bound"])
def test_device_table_adds_up_to_the_recorded_kernel_total(path: Path) -> None:
    doc = replay(str(path)).to_json()
    cuda = part_of(doc, "cuda")
    assert cuda is not None
    recorded = raw_device_total_us(path)
    assert recorded > 0
    table = sum(op["self_device_us"] for op in cuda["ops"])
    assert abs(table - recorded) <= 0.01 * recorded
    assert abs(cuda["totals"]["self_device_us"] - recorded) <= 0.01 * recorded
    lines = sum(line["self_device_us"] for line in cuda["lines"]) + cuda["unattributed"]["self_device_us"]
    assert abs(lines - recorded) <= 0.01 * recorded
    summary = cuda["device"]
    assert summary["busy_s"] <= summary["wall_s"]
    assert summary["busy_s"] <= summary["device_time_s"] + 1e-6


def test_replayed_text_report_names_the_device_line_first_and_the_verdict() -> None:
    done = cli("replay", str(GPU_BOUND))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    text.encode("ascii")
    assert "autograd profiler output (CUDA mode)" in text
    assert "GPU-bound: the device was busy" in text and "measured in the CUDA pass (traced" in text
    first = next(line for line in text.splitlines() if ": warning: " in line)
    assert first.startswith(f"{FIXTURES / 'cuda_gpu_bound.py'}:9:") or ("cuda_gpu_bound.py:9:" in first)
    assert "99.8% of device time (107 ms, 40 kernels)" in first and "launched by aten::mm" in first
    assert "cuda_gpu_bound.py:12:1: warning: the CPU waited 99 ms here on the device" in text


def test_editor_annotations_from_a_replayed_document_carry_device_figures_and_the_verdict() -> None:
    doc = replay(str(GPU_BOUND))
    items = annotations.build(doc, Thresholds())
    by_line = {a.line + 1: a for a in items if a.row}
    assert next(a for a in items if a.row).line + 1 == 9  # GPU-bound: ranked by device time
    hot = by_line[9]
    text = annotations.diagnostic(hot, Thresholds())
    assert text is not None
    diag = default_converter().structure(json.loads(text), types.Diagnostic)
    assert diag.code == ranking.DEVICE
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.message.startswith("99.8% of device time (107 ms, 40 kernels): sm80_xmma_gemm")
    assert "launched by aten::mm" in diag.message and "; 65.3% of op CPU time" in diag.message
    lens = annotations.lens_title(hot)
    assert lens.startswith("99.8% device · 107 ms · sm80_xmma_gemm") and lens.endswith("op CPU 65%")
    hover = annotations.hover([hot], doc)
    assert "| device (ranked by) | 99.8% | 107.0 ms |" in hover and "Device work launched here" in hover
    assert "**GPU-bound**: the device was busy 55%" in hover and "Measured in the cuda pass." in hover
    wait = by_line[12]  # no device time of its own, but the CPU waits there
    assert annotations.lens_title(wait) == "waits 99 ms on the device"
    wait_diag = annotations.diagnostic(wait, Thresholds())
    assert (
        wait_diag is not None
        and "the CPU waited 99 ms here on the device" in json.loads(wait_diag)["message"]
    )
    summary = summary_line(doc, items)
    assert "top line cuda_gpu_bound.py:9" in summary and "of device time" in summary
    assert summary.endswith("GPU-bound (device busy 55%)")


def test_a_sample_pass_recording_decides_the_verdict_untraced(tmp_path: Path) -> None:
    """On a GPU the sample pass records device events only; its verdict is not marked traced.
    (Events: the H200 recording's own, written as that pass writes them.)"""
    with gzip.open(GPU_BOUND, "rt") as handle:
        events = json.load(handle)["events"]
    span = max(e["start_ns"] + e["duration_ns"] for e in events) - min(e["start_ns"] for e in events)
    path = tmp_path / "cuda_gpu_bound.sample.raw.json"
    path.write_text(
        json.dumps(
            {
                "format": "bottleneck-raw-recording/2",
                "pass": "sample",
                "script": "/elsewhere/cuda_gpu_bound.py",
                "roots": ["/elsewhere"],
                "files": {},
                "script_wall_ns": span,
                "recorded_on": {"torch": "2.11.0+cu130", "device": "NVIDIA H200"},
                "tree": [],
                "events": events,
            }
        )
    )
    doc = replay_json(path)
    assert doc["verdict"]["pass"] == "sample" and doc["verdict"]["traced"] is False
    assert doc["verdict"]["bound"] == "gpu"
    text = cli("replay", str(path)).stdout
    assert "Sampled time per line (sample pass" in text and "device: busy 107.2 ms of 0.22 s" in text
    assert "measured in the sample pass" in text


def test_a_live_cpu_pass_recorded_and_replayed_gives_the_same_lines(tmp_path: Path) -> None:
    script = SCRIPTS / "backward.py"
    out = tmp_path / "live.json"
    raw_dir = str(tmp_path / "raw")
    done = subprocess.run(
        [
            CLI,
            "profile",
            "--passes",
            "cprofile,cpu",  # cProfile counts too: the cpu pass counts entries to compare
            "--save-raw",
            raw_dir,
            "--format",
            "json",
            "-o",
            str(out),
            str(script),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    raw = tmp_path / "raw" / "backward.cpu.raw.json.gz"
    assert f"raw recording of the cpu pass: {raw}" in done.stderr
    assert raw.stat().st_mode & 0o077 == 0  # the user's own
    live = next(p for p in json.loads(out.read_text())["passes"] if p["name"] == "cpu")
    replayed = replay(str(raw)).to_json()  # on this machine: the recorded root is found as it is
    again = replayed["passes"][0]
    assert again["totals"] == live["totals"]
    assert again["function_calls"] == live["function_calls"] != []  # the counter's, kept
    assert [(x["file"], x["line"], x["self_cpu_us"], x["forward_lines"]) for x in again["lines"]] == [
        (x["file"], x["line"], x["self_cpu_us"], x["forward_lines"]) for x in live["lines"]
    ]
    # Elsewhere (--root): the same lines under the other folder.
    moved = replay(str(raw), root=str(tmp_path)).to_json()
    assert [Path(x["file"]).parent for x in moved["passes"][0]["lines"]] == [tmp_path] * len(live["lines"])
    assert moved["script"] == str(tmp_path / "backward.py")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"not json at all", "is not JSON"),
        (b'{"format": "something-else/1"}', "is not a raw recording"),
        (b'{"format": "bottleneck-raw-recording/99", "tree": [], "events": []}', "version 99"),
        (b'{"format": "bottleneck-raw-recording/2", "tree": {}, "events": []}', "'tree' is not a list"),
        (gzip.compress(b'{"format": "bottleneck-raw-recording/2"')[:-6], "cannot read"),
    ],
    ids=["text", "other-format", "future-version", "bad-tree", "truncated-gzip"],
)
def test_bad_recordings_get_a_clear_message_and_exit_2(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "bad.raw.json"
    path.write_bytes(content)
    with pytest.raises(RecordingError, match=expected.replace("(", r"\(")):
        replay(str(path))
    done = cli("replay", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith("bottleneck-lsp: error: ") and "Traceback" not in done.stderr
    assert cli("replay", str(tmp_path / "missing.raw.json.gz")).returncode == 2


def test_busy_time_is_the_union_of_intervals() -> None:
    assert union_ns([]) == 0
    assert union_ns([(0, 10), (5, 15), (20, 30)]) == 25
    assert union_ns([(20, 30), (0, 100)]) == 100
    assert union_ns([(0, 10), (10, 20)]) == 20


def test_replayed_report_section_matches_the_live_renderer() -> None:
    doc = replay(str(CPU_BOUND))
    text = report.render(doc, Thresholds())
    assert "CPU-bound: the device was busy" in text
    assert "Device: 8003 events (8002 kernels, 1 memcpy, 0 memset)" in text


def _ccall(name: str, line: int, start: int, end: int, *children: dict[str, Any]) -> dict[str, Any]:
    return {
        "tag": "PyCCall",
        "name": name,
        "start_time_ns": start,
        "end_time_ns": end,
        "duration_time_ns": end - start,
        "start_tid": 1,
        "extra_fields": {
            "caller": {"file_name": "train.py", "line_number": line, "function_name": "<module>"}
        },
        "children": list(children),
    }


def _hand_made(path: Path, tree: list[dict[str, Any]], events: list[dict[str, Any]]) -> Path:
    """A cuda pass's recording of ``train.py`` beside it, 10 ms long, written to ``path``."""
    script = path.parent / "train.py"
    header = {"format": "bottleneck-raw-recording/2", "pass": "cuda", "script": str(script)}
    path.write_text(
        json.dumps(
            {
                **header,
                "roots": [str(path.parent)],
                "files": {"train.py": str(script)},
                "script_wall_ns": 10_000_000,
                "tree": tree,
                "events": events,
            }
        )
    )
    return path


def test_backward_kernels_go_to_the_backward_line_linked_to_their_forward_line(tmp_path: Path) -> None:
    """The linking rule on a hand-made tree (a real one: the training loop's test below): a
    kernel launched by an op inside a backward op on the autograd thread is charged to the
    ``.backward()`` line and, through the backward op's sequence number, to the forward
    line that created the graph node."""
    (tmp_path / "train.py").write_text("import torch\n\ny = a @ b\n\ny.sum().backward()\n")
    tree = [
        _ccall("torch.mm", 3, 100, 900, recorded_op("aten::mm", 200, 800, seq=7, corr=100)),
        _ccall("torch._C._EngineBase.run_backward", 5, 1000, 5000),
        recorded_op(
            "autograd::engine::evaluate_function: MmBackward0",
            1500,
            2500,
            recorded_op("aten::mm", 1600, 2400, corr=200, tid=2),
            seq=7,
            corr=150,
            tid=2,
        ),
    ]
    kernel = {"device_type": "CUDA", "name": "void gemm_kernel<float>(float*)", "device_index": 0}
    events = [
        {**kernel, "linked_correlation_id": 100, "start_ns": 850, "duration_ns": 500_000},
        {**kernel, "linked_correlation_id": 200, "start_ns": 2450, "duration_ns": 1_000_000},
        {**kernel, "linked_correlation_id": 0, "start_ns": 4000, "duration_ns": 250_000},
    ]
    path = _hand_made(tmp_path / "train.cuda.raw.json", tree, events)
    cuda = replay(str(path)).to_json()["passes"][0]
    lines = {line["line"]: line for line in cuda["lines"]}
    assert lines[3]["self_device_us"] == 500.0 and not lines[3]["backward"]
    backward = lines[5]
    assert backward["backward"] and backward["self_device_us"] == 1000.0
    assert backward["forward_lines"] == [
        {"file": str(tmp_path / "train.py"), "line": 3, "backward_cpu_us": 1.0, "backward_device_us": 1000.0}
    ]
    assert cuda["unattributed"]["self_device_us"] == 250.0
    assert cuda["unattributed"]["ops"][0]["name"] == "(device work outside any op)"
    assert cuda["totals"]["self_device_us"] == 1750.0


def test_the_windows_of_one_run_replay_together_each_kernel_on_its_own_windows_op(tmp_path: Path) -> None:
    """A GPU's one run records the device in windows, one recording each; replayed
    together (``replay A.window1 A.window2``) as the run read them: each window's kernels go
    to the ops of that window, whose correlation ids a later window may repeat (torch's
    count starts again with each recording). A kernel of the second window whose op is in
    none of its recording (launched before the window opened) goes to no line, not to the op
    of the first window that had its correlation id."""
    (tmp_path / "train.py").write_text("import torch\n\ny = a @ b\n\nz = a @ b\n")
    kernel = {"device_type": "CUDA", "name": "void gemm_kernel<float>(float*)", "device_index": 0}
    paths = []
    for number, (line, ns) in enumerate(((3, 500_000), (5, 2_000_000)), start=1):
        tree = [_ccall("torch.mm", line, 100, 900, recorded_op("aten::mm", 200, 800, corr=100))]
        events = [{**kernel, "linked_correlation_id": 100, "start_ns": 850, "duration_ns": ns}]
        if number == 1:
            tree.append(_ccall("torch.mm", line, 1000, 1900, recorded_op("aten::mm", 1100, 1800, corr=101)))
            events.append({**kernel, "linked_correlation_id": 101, "start_ns": 1850, "duration_ns": 100_000})
        else:  # launched before this window: its op (and id 101) were not recorded in it
            events.append({**kernel, "linked_correlation_id": 101, "start_ns": 50, "duration_ns": 300_000})
        paths.append(str(_hand_made(tmp_path / f"train.cuda.window{number}.raw.json", tree, events)))
    doc = replay(paths[0], None, paths[1:])
    cuda = doc.to_json()["passes"][0]
    assert {line["line"]: line["self_device_us"] for line in cuda["lines"]} == {3: 600.0, 5: 2000.0}
    assert cuda["script_wall_s"] == 0.02 and cuda["device"]["device_time_s"] == 0.0029
    assert cuda["notes"][0].startswith(
        "replayed from train.cuda.window1.raw.json and 1 more window(s) of its run"
    )
    # what the user reads first: the second window's line
    said = [ln for ln in report.render(doc, cwd=str(tmp_path)).splitlines() if ln.startswith("train.py:")]
    assert said[0].startswith("train.py:5:"), said[:2]
    sample = tmp_path / "train.sample.raw.json"
    sample.write_text(json.dumps({**json.loads(Path(paths[0]).read_text()), "pass": "sample"}))
    with pytest.raises(RecordingError, match="not a window of the same pass"):
        replay(paths[0], None, [str(sample)])


def test_a_live_one_runs_windows_recorded_and_replayed_give_the_same_lines(tmp_path: Path) -> None:
    """The windows' own raw recordings (a GPU's one run with --save-raw; here the cpu
    pass's windows, driven as the runner drives them, in a process of its own: pytest's
    timeout holds SIGALRM here): replayed together, they give the lines the run read."""
    script = tmp_path / "loop.py"
    script.write_text(
        "import time\nimport torch\n\nx = torch.randn(64, 64)\nend = time.perf_counter() + 9.0\n"
        "while time.perf_counter() < end:\n    y = (x @ x).relu()\n    z = y.sum()\n    time.sleep(0.005)\n"
    )
    driver = (
        "import json, sys, torch\n"
        "from bottleneck_lsp.runner.paths import FileClassifier\n"
        "from bottleneck_lsp.runner.samplepass import SamplePass\n"
        "folder, script, out = sys.argv[1:]\n"
        "sample = SamplePass(FileClassifier([folder]), None, save_raw=folder + '/loop.sample.raw.json.gz', "
        "script=script)\n"
        "sample.record_windows(torch, memory=False, with_cprofile=False)\n"
        "code = compile(open(script).read(), script, 'exec')\n"
        "sample.start()\n"
        "try:\n    exec(code, {'__name__': '__main__'})\nfinally:\n    sample.stop()\n"
        "json.dump(sample.finish()['windowed'], open(out, 'w'))\n"
    )
    out = tmp_path / "windowed.json"
    done = subprocess.run(
        [sys.executable, "-c", driver, str(tmp_path), str(script), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    windowed = json.loads(out.read_text())
    count = windowed["windows"]["count"]
    # (the second opens once the run paid for the first: 4.7 s in, measured; 9 s leaves room)
    assert count >= 2, windowed["windows"]
    recordings = [str(tmp_path / f"loop.cpu.window{n}.raw.json.gz") for n in range(1, count + 1)]
    assert all(os.path.exists(path) for path in recordings), sorted(os.listdir(tmp_path))
    assert any(n.startswith(f"raw recordings of {count} window(s) written to ") for n in windowed["notes"])
    cpu = replay(recordings[0], str(tmp_path), recordings[1:]).to_json()["passes"][0]
    assert {ln["line"]: ln["self_cpu_us"] for ln in cpu["lines"]} == {
        ln["line"]: ln["self_cpu_us"] for ln in windowed["lines"]
    }
    assert {ln["line"] for ln in cpu["lines"]} >= {7, 8}


def test_a_recordings_line_ranges_and_entries_are_read_as_data() -> None:
    """Entries of the wrong shape (a bool for a line, a missing field) are left out, not
    believed; a recording without them has none."""
    from bottleneck_lsp.runner.lineranges import Site, read_entries, read_header

    table = read_header({"§0": ["a.py", 3, "f", False], "§1": ["a.py", True, "f", False], "§2": ["a.py", 3]})
    assert table == {"§0": Site("a.py", 3, "f", False)}
    assert read_header(["not", "a", "table"]) == {}
    assert read_entries([["a.py", 1, "f", 2], ["a.py", 1, "f", "2"], "x"]) == [("a.py", 1, "f", 2)]
    assert read_entries(None) is None


def _memory_rows(text: str) -> list[str]:
    """The report's memory table: its peak sentence and its rows (bytes at peak, share...)."""
    return [
        line
        for line in text.splitlines()
        if line.startswith("Peak: ") or re.match(r"^ +[0-9.]+ [KMG]?B +[0-9.]+% ", line)
    ]


def test_a_training_loops_cuda_pass_recorded_on_an_h200_replays_as_its_live_report_read() -> None:
    """examples/train.py --device cuda, recorded on the H200 by the passes as they are now
    (forked, memory on): replayed here, the lines, the backward links, the device shares
    and the memory table are what the live report printed there."""
    live = (H200_RUN / "train_cuda.report.txt").read_text()
    raw = H200_RUN / "raw" / "train.cuda.raw.json.gz"
    # --root: the script's folder here (the recording names the H200's checkout)
    done = cli("replay", str(raw), "--root", str(REPO / "examples"), cwd=REPO)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    first = next(line for line in text.splitlines() if ": warning: " in line)
    assert first.startswith("examples/train.py:42:9: warning: 49.7% of device time (4.98 ms, 290 kernels)")
    assert first.endswith("backward of line 23, 41, 24")
    assert "Memory by source line (cuda pass, cuda:0)" in text
    rows = _memory_rows(text)
    assert len(rows) >= 5 and rows == _memory_rows(live)
    assert "71.3 MB   55.0%" in rows[1] and rows[1].endswith("examples/train.py:42  loss.backward()")
    # The live hotspot table's device column (the cuda pass's), line by line
    doc = replay_json(raw, REPO, REPO / "examples")
    cuda = part_of(doc, "cuda")
    assert cuda is not None and cuda["status"] == "ok"
    replayed = {line["line"]: f"{100 * line['device_share']:.1f}%" for line in cuda["lines"]}
    table = live.split("Hotspots by source line", 1)[1].split("Ranked by", 1)[0]
    live_device = {
        int(cols[7].rsplit(":", 1)[1]): cols[3]
        for cols in (row.split() for row in table.splitlines())
        if len(cols) > 7 and cols[7].startswith("examples/train.py:")
    }
    assert len(live_device) >= 6
    assert {line: share for line, share in live_device.items() if share != "-"} == {
        line: replayed[line] for line, share in live_device.items() if share != "-"
    }
    backward = next(line for line in cuda["lines"] if line["line"] == 42)
    assert [f["line"] for f in backward["forward_lines"]][:3] == [23, 41, 24]


def test_a_sample_pass_recorded_on_an_h200_gives_the_live_reports_verdict() -> None:
    live = (H200_RUN / "train_cuda.report.txt").read_text()
    verdict = next(line for line in live.splitlines() if line.startswith(("CPU-bound: ", "GPU-bound: ")))
    raw = H200_RUN / "raw" / "train.sample.raw.json.gz"
    done = cli("replay", str(raw), "--root", str(REPO / "examples"), cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert verdict in done.stdout.splitlines()
    assert "measured in the sample pass (device activity only" in done.stdout
    assert "Running with Python 3.12.3 (recorded elsewhere)" in done.stdout
    doc = replay_json(raw, REPO, REPO / "examples")
    assert doc["verdict"]["pass"] == "sample" and doc["verdict"]["traced"] is False
    assert doc["verdict"]["bound"] == "cpu"


def _split_node(node: dict[str, Any], at: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A recorded tree node's part before ``at`` and its part from ``at`` on (a node that
    spans it, a Python call around both, is in both, each with its children's part)."""
    if node["end_time_ns"] <= at:
        return node, None
    if node["start_time_ns"] >= at:
        return None, node
    assert node["tag"] != "TorchOp", node["name"]  # the split falls between two ops
    parts = [_split_node(child, at) for child in node.get("children", [])]
    before = {**node, "children": [p for p, _ in parts if p is not None]}
    after = {**node, "children": [p for _, p in parts if p is not None]}
    return before, after


def _renumbered(node: dict[str, Any], by: int) -> dict[str, Any]:
    corr = node.get("correlation_id", 0)
    return {
        **node,
        "correlation_id": corr - by if corr else 0,
        "children": [_renumbered(child, by) for child in node.get("children", [])],
    }


def test_a_real_h200_recording_cut_into_two_windows_replays_as_the_whole(tmp_path: Path) -> None:
    """The GPU one run's windows, replayed from the training loop's real H200 recording cut
    in two at an iteration's start (each window's ops, launches and the kernels they
    launched; the second window's correlation ids renumbered to repeat the first's, as a
    new recording may): each kernel goes to its own window's op, and the report's first
    line, the device shares and the backward links are the whole recording's."""
    raw = H200_RUN / "raw" / "train.cuda.raw.json.gz"
    with gzip.open(raw, "rt") as handle:
        whole = json.load(handle)
    # the split: the 6th step's optimizer.zero_grad() (examples/train.py:40), after warm-up
    starts: list[int] = []

    def zero_grads(node: dict[str, Any]) -> None:
        caller = node.get("extra_fields", {}).get("caller") or {}
        if caller.get("line_number") == 40 and caller.get("file_name", "").endswith("train.py"):
            starts.append(node["start_time_ns"])
        for child in node.get("children", []):
            zero_grads(child)

    for root in whole["tree"]:
        zero_grads(root)
    assert len(starts) >= 8, len(starts)
    at = sorted(starts)[5]
    parts = [_split_node(root, at) for root in whole["tree"]]
    trees = [[p for p, _ in parts if p is not None], [p for _, p in parts if p is not None]]
    # events: a kernel, a launch, a runtime call go with the op they are linked to (the
    # kernel's linked correlation id is its op's), the rest by when they started
    window_of: dict[int, int] = {}

    def ops_of(node: dict[str, Any], window: int) -> None:
        if node.get("correlation_id"):
            window_of[node["correlation_id"]] = window
        for child in node.get("children", []):
            ops_of(child, window)

    for window, tree in enumerate(trees):
        for root in tree:
            ops_of(root, window)
    events: list[list[dict[str, Any]]] = [[], []]
    for event in whole["events"]:
        linked = window_of.get(event["linked_correlation_id"]) if event["linked_correlation_id"] else None
        events[linked if linked is not None else int(event["start_ns"] >= at)].append(event)
    assert all(any(e["device_type"] != "CPU" for e in part) for part in events)
    # torch's correlation ids (ops', launches', kernels': one count) start again, here at
    # the first window's first
    by = min(i for i, w in window_of.items() if w == 1) - min(i for i, w in window_of.items() if w == 0)
    assert by > 0
    events[1] = [
        {
            **e,
            "correlation_id": e["correlation_id"] - by if e["correlation_id"] else 0,
            "linked_correlation_id": e["linked_correlation_id"] - by if e["linked_correlation_id"] else 0,
        }
        for e in events[1]
    ]
    trees[1] = [_renumbered(root, by) for root in trees[1]]
    began = min(root["start_time_ns"] for root in whole["tree"])
    walls = [at - began, whole["script_wall_ns"] - (at - began)]
    paths = []
    for number in (1, 2):
        path = tmp_path / f"train.cuda.window{number}.raw.json.gz"
        window = {
            **whole,
            "tree": trees[number - 1],
            "events": events[number - 1],
            "script_wall_ns": walls[number - 1],
        }
        with gzip.open(path, "wt") as handle:
            json.dump(window, handle)
        paths.append(str(path))

    done = cli("replay", *paths, "--root", str(REPO / "examples"), cwd=REPO)
    assert done.returncode == 0, done.stderr
    first = next(line for line in done.stdout.splitlines() if ": warning: " in line)
    assert first.startswith("examples/train.py:42:9: warning: 49.7% of device time (4.98 ms, 290 kernels)"), (
        first
    )
    assert first.endswith("backward of line 23, 41, 24"), first
    windowed = part_of(
        typed(
            json.loads(
                cli("replay", *paths, "--root", str(REPO / "examples"), "--format", "json", cwd=REPO).stdout
            )
        ),
        "cuda",
    )
    alone = part_of(replay_json(raw, REPO, REPO / "examples"), "cuda")
    assert windowed is not None and alone is not None
    assert windowed["notes"][0].startswith(
        "replayed from train.cuda.window1.raw.json.gz and 1 more window(s)"
    )

    def device_lines(part: dict[str, Any]) -> dict[int, tuple[float, int, float, list[int]]]:
        return {
            line["line"]: (
                line["self_device_us"],
                line["device_count"],
                line["wait_us"],
                [f["line"] for f in line["forward_lines"]],
            )
            for line in part["lines"]
            if line["self_device_us"] > 0
        }

    assert device_lines(windowed) == device_lines(alone)
    assert len(device_lines(alone)) >= 5
    assert windowed["totals"]["self_device_us"] == alone["totals"]["self_device_us"]
