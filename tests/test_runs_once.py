"""One run (issue 46): the script runs once by default, the cpu pass and cProfile recorded
in windows of the sample pass's run (runner/windows.py); what the user sees says so."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bottleneck_lsp.schema.model import PassName
from helpers import SCRIPTS, marker_line, part_of, run_job


def profile(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bottleneck_lsp.cli", "profile", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_default_profile_runs_the_script_once(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    result = profile(str(SCRIPTS / "appends.py"), str(log))
    assert result.returncode == 0, result.stderr[-2000:]
    assert log.read_text() == "ran\n"  # its side effect, once
    out = result.stdout
    opening = " ".join(out.split("Environment Summary")[0].split())  # (wrapped at 80 columns)
    assert re.search(
        r"Your script ran once: sampled .* for its whole run, with the autograd profiler", opening
    )
    assert re.search(r"op CPU: all torch ops' self CPU time \(cpu pass\), recorded in \d+ windows?", out)
    hot = marker_line("appends.py")
    first = next(line for line in out.splitlines() if re.match(r"\S+:\d+:\d+: (warning|note): ", line))
    assert re.match(rf"\S*appends\.py:{hot}:\d+: warning: .*of op CPU time", first), first
    assert "Memory block of unknown size" not in result.stderr  # torch's, about our windows

    separate = tmp_path / "separate.log"
    again = profile("--separate-runs", "--format", "json", str(SCRIPTS / "appends.py"), str(separate))
    assert again.returncode == 0, again.stderr[-2000:]
    assert separate.read_text() == "ran\n" * 3  # one run per pass: sample, cprofile, cpu
    doc = json.loads(again.stdout)
    assert doc["runs"] == 3 and all("windows" not in p for p in doc["passes"])


def test_the_document_says_what_the_windows_cover(tmp_path: Path) -> None:
    doc = run_job("appends.py", str(tmp_path / "log"))
    assert doc["runs"] == 1
    assert [p["name"] for p in doc["passes"]] == ["sample", "cprofile", "cpu"]
    cpu = part_of(doc, PassName.CPU)
    assert cpu is not None and cpu["status"] == "ok"
    windows = cpu["windows"]
    assert windows["count"] >= 1 and 0 < windows["recorded_s"] <= windows["run_s"]
    assert cpu["lines"][0]["line"] == marker_line("appends.py")
    cprofile = part_of(doc, PassName.CPROFILE)
    assert cprofile is not None and cprofile["within"] == "sample"
    assert any(f["function"] == "<module>" and f["user"] for f in cprofile["functions"])
    assert "recorded in" in doc["ranking"]["denominators"]["cpu-op-time"]


def test_windows_spread_over_the_phases_of_a_run(tmp_path: Path) -> None:
    """A loading phase of many small torch calls fills a window's call budget; the windows
    after it still reach the training phase, whose line leads the op CPU column."""
    loaded = tmp_path / "loaded"
    doc = run_job("phases.py", "6", str(loaded))
    cpu = part_of(doc, PassName.CPU)
    assert cpu is not None
    windows = cpu["windows"]
    # 2 or 3 on these machines: each later window waits until the run has paid for it (10%)
    assert windows["count"] >= 2, windows
    # a window opened in the training phase (the 2 s of loading ended this far into the run;
    # CI saw windows at 0.0, 1.9 and 2.2 s of 6 s: the budget does not promise a late one)
    load_end = float(loaded.read_text())
    assert any(span[0] > load_end for span in windows["spans"]), (load_end, windows)
    assert windows["recorded_s"] < 0.6 * windows["run_s"], windows
    lines = [line["line"] for line in cpu["lines"]]
    assert lines[0] == marker_line("phases.py", "# TRAIN"), cpu["lines"][:3]
    assert marker_line("phases.py", "# LOAD") in lines


@pytest.mark.parametrize("script", ["own_mode.py"])
def test_the_scripts_own_modes_survive_the_windows(script: str) -> None:
    """Ticks land inside the script's TorchFunctionMode handler and while it pushes modes of
    its own: the windows wait for a safe point, and torch's mode stack stays whole."""
    result = profile("--format", "json", str(SCRIPTS / script))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "empty mode stack" not in result.stderr
    doc = json.loads(result.stdout)
    assert doc["status"] == "ok"
    cpu = part_of(doc, PassName.CPU)
    assert cpu is not None and cpu["windows"]["count"] >= 1
    # (the torch calls' innermost line of the user's files: the handler's call, as in a pass of its own)
    assert marker_line(script, "# CALL") in [line["line"] for line in cpu["lines"]]


def test_a_script_that_takes_sigalrm_ends_the_windows_and_runs_as_without_us() -> None:
    """The windows open and close at the sampler's SIGALRM ticks: a script that takes the
    signal for itself gets it, and the windows end there, said in a note."""
    result = profile("--format", "json", str(SCRIPTS / "alarm_user.py"))
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads(result.stdout)
    sample = part_of(doc, PassName.SAMPLE)
    assert sample is not None and "alarm fired" in sample["output_tail"]["stdout"]
    cpu = part_of(doc, PassName.CPU)
    assert cpu is not None and cpu["status"] == "ok"
    assert any(n.startswith("the script took SIGALRM for itself") for n in cpu["notes"]), cpu["notes"]


def test_one_time_import_work_stays_on_the_line_that_made_it() -> None:
    """torch imports its compiler stack at the first optimizer (over a second): the bare run
    pays it on that line, and so does the one run (nothing loads it first), as one-time work."""
    name = "hidden_compiler_stack.py"
    loads = marker_line(name, "# LOADS")
    result = profile(str(SCRIPTS / name))
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    first = next(line for line in out.splitlines() if re.match(r"\S+:\d+:\d+: (warning|note): ", line))
    assert re.match(
        rf"\S*{name}:{loads}:\d+: warning: [\d.]+% of wall time .*, \d+ ms of the line's \d+ ms while "
        r"torch imported its compiler stack \(one-time work\)",
        first,
    ), first
    assert "import: the same sampled wall time: the part while torch imported its compiler stack" in out
    assert f"while the script ran at {name}:{loads}: " in out and "kept on that line as one-time work" in out

    doc = run_job(name)
    sample = part_of(doc, PassName.SAMPLE)
    assert sample is not None and sample["startup"]["import_torch_lazy_s"] == 0.0  # not loaded first
    line = next(entry for entry in sample["samples"]["lines"] if entry["line"] == loads)
    assert 0.2 < line["importing_s"] <= line["wall_s"]
    assert line["importing_s"] >= 0.5 * sample["startup"]["compiler_stack_in_run_s"]


def test_the_whole_runs_memory_peak_is_placed_on_its_line() -> None:
    """A line that takes 320 MB for a moment late in the run, wherever the windows were: the
    process's peak RSS is read at every charge of the sampler, and the line that raised it
    is marked for it."""
    name = "late_peak.py"
    peak_line = marker_line(name, "# PEAK")
    result = profile(str(SCRIPTS / name))
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert re.search(
        rf"Whole run: the process's peak RSS was [\d.]+ MB \([\d.]+ MB when the script started\), "
        rf"last raised at \S*{name}:{peak_line}, [\d.]+ s in",
        out,
    ), out
    marked = next(line for line in out.splitlines() if re.match(rf"\S*{name}:{peak_line}:\d+: ", line))
    assert re.search(
        r": warning: .*raised the process's peak RSS by 3\d\d\.\d MB \(\d+\.\d% of the peak\)", marked
    )

    doc = run_job(name)
    sample = part_of(doc, PassName.SAMPLE)
    assert sample is not None
    peak = sample["samples"]["peak_rss"]
    assert peak["line"] == peak_line and peak["bytes"] - peak["start_bytes"] > 250e6
    line = next(entry for entry in sample["samples"]["lines"] if entry["line"] == peak_line)
    assert line["rss_raised_bytes"] > 250e6
    steady = next(
        entry for entry in sample["samples"]["lines"] if entry["line"] == marker_line(name, "# STEADY")
    )
    assert steady.get("rss_raised_bytes", 0) < 0.2 * line["rss_raised_bytes"]  # (its windows' buffers too)


def test_the_drop_in_prints_the_function_table_of_the_sampled_stacks() -> None:
    """The old tool's cProfile section, from the sampler's stacks over the whole run (py-spy's
    top's columns): main, outer, inner by total time; inner's time its own."""
    name = "nested_calls.py"
    result = subprocess.run(
        [sys.executable, "-m", "bottleneck_lsp", str(SCRIPTS / name)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    section = result.stdout.split("Functions by sampled time (whole run, from the sampler's stacks")[1]
    section = section.split("cProfile output")[0]
    rows = {}
    for line in section.splitlines():
        found = re.match(
            r"\s*([\d.]+) ms\s+([\d.]+)%\s+([\d.]+) ms\s+([\d.]+)%\s+(\S+) \((\S+):(\d+)\)$", line
        )
        if found and found[6].endswith(name):
            rows[found[5]] = (float(found[2]), float(found[4]))
    assert {"main", "outer", "inner"} <= set(rows), section
    own, total = rows["inner"]
    assert total >= 50 and own >= 0.8 * total  # its matmul and exp: C calls it made
    # outer's own: its loop's jump back, where ticks that arrived in inner's last C call are
    # handled (docs/fidelity.md's limits: 6-19% here); far under inner's own
    assert rows["outer"][0] < own / 3 and rows["main"][1] >= rows["outer"][1] >= total, section
    assert "isfile" not in section and "Thread.start" not in section  # (our start-up's)


def test_windows_open_and_close_outside_a_backwards_python() -> None:
    """Most ticks land in a custom ``backward``'s Python, run by the autograd engine, which
    restores the thread's profiler state and mode stack after each node: a window opened
    there recorded nothing more (a compiled backward's windows lost their kernels). Every
    window records the steps it spans, and the backward's ops are on the line that ran it."""
    doc = run_job("python_backward.py", "8")
    cpu = part_of(doc, PassName.CPU)
    assert cpu is not None and cpu["status"] == "ok"
    spans = cpu["windows"]["spans"]
    # a later window spans 0.3 s of steps of 10-25 ms here, each making 7 torch calls: 37 to
    # 100 calls measured (a window opened in the backward recorded 2 to 5); one opened in the
    # loop's last half second is cut short by its end (CI saw one at 8.006 s: 3 calls)
    later = [span for span in spans[1:] if span[0] < 7.5]
    assert later, spans
    assert all(calls >= 15 for _, _, calls in later), spans
    # (a backward's ops are on the line that ran it)
    backward = next(
        line for line in cpu["lines"] if line["line"] == marker_line("python_backward.py", "# BACKWARD")
    )
    assert {op["name"] for op in backward["ops"]} >= {"SlowBackward", "aten::tanh"}, backward["ops"]
