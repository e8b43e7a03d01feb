"""Bad input and faults through the command line: every failure explains itself, nothing
hangs, nothing leaks (issue 6; the server's side is in test_lsp_faults.py)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import torch

from bottleneck_lsp.job.job import Job, JobEvent
from bottleneck_lsp.job.spec import JobSpec
from bottleneck_lsp.runner import lineranges
from helpers import SCRIPTS, marker_line, run_job, run_typed, typed
from lsp_helpers import our_folders, our_processes, runner_pids


def cli(
    *args: str, cwd: str | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bottleneck_lsp", *args],
        capture_output=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def cli_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], bytes]:
    result = cli("--format", "json", *args, env=env)
    return result.returncode, typed(json.loads(result.stdout)), result.stderr


def top_line(doc: dict[str, Any], name: str = "cpu") -> dict[str, Any]:
    part = next(p for p in doc["passes"] if p["name"] == name)
    return part["lines"][0]


def test_unreadable_script_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "socket.py"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))  # exists, not a folder, cannot be read: even root gets ENXIO
    try:
        result = cli(str(path))
    finally:
        sock.close()
    assert result.returncode == 2
    assert f"Script is not a regular file (a pipe, a socket or a device): {path}".encode() in result.stderr
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    result = cli(str(fifo), timeout=60)  # opening it would wait for a writer: refused first
    assert result.returncode == 2 and b"Script is not a regular file" in result.stderr


def test_a_linked_script_imports_from_its_targets_folder_as_python_does(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "links").mkdir()
    (tmp_path / "proj" / "helper.py").write_text("import sys\nprint('PATH0', sys.path[0])\n")
    (tmp_path / "proj" / "main.py").write_text("import helper\n")
    (tmp_path / "links" / "run.py").symlink_to(tmp_path / "proj" / "main.py")
    real = subprocess.run(
        [sys.executable, str(tmp_path / "links" / "run.py")], capture_output=True, timeout=60
    )
    assert real.returncode == 0 and f"PATH0 {tmp_path / 'proj'}".encode() in real.stdout
    code, doc, stderr = cli_json("--passes", "cprofile", str(tmp_path / "links" / "run.py"))
    assert code == 0, stderr.decode()[-2000:]
    assert f"PATH0 {tmp_path / 'proj'}" in doc["passes"][0]["output_tail"]["stdout"]


def test_exception_in_a_helper_module_is_placed_in_the_helper() -> None:
    code, doc, stderr = cli_json("--passes", "cpu", str(SCRIPTS / "raises_in_helper.py"))
    assert code == 1
    error = doc["passes"][0]["error"]
    assert error["file"] == str(SCRIPTS / "helper_mod.py")
    assert error["line"] == marker_line("helper_mod.py", "# RAISE")
    assert "RuntimeError: failure in a helper" in error["traceback"]
    assert top_line(doc)["line"] == marker_line("helper_mod.py")  # work before the failure
    assert b"RuntimeError: failure in a helper" in stderr  # the script's own traceback
    text = cli("--passes", "cpu", str(SCRIPTS / "raises_in_helper.py")).stdout.decode()
    assert "Traceback (most recent call last):" in text
    line = marker_line("helper_mod.py", "# RAISE")
    assert f"helper_mod.py:{line}:" in text and "error: RuntimeError: failure in a helper" in text


def test_os_exit_is_reported_with_its_code_and_results_kept() -> None:
    code, doc, _ = cli_json("--passes", "cpu", str(SCRIPTS / "os_exit.py"))
    assert code == 5
    part = doc["passes"][0]
    assert part["status"] == "exit" and part["exit_code"] == 5
    assert any("os._exit(5)" in n for n in part["notes"])
    assert top_line(doc)["line"] == marker_line("os_exit.py")


def test_timeout_says_which_pass_and_kills_the_group() -> None:
    result = cli("--passes", "cprofile,cpu", "--timeout", "8", str(SCRIPTS / "forever.py"), timeout=120)
    assert result.returncode == 124
    text = result.stdout.decode()
    assert "pass status: timeout after 8.0 s" in text
    assert "(pass skipped: the cprofile pass ended with status timeout)" in text
    assert runner_pids("forever.py") == []


def test_a_script_that_ignores_sigterm_still_times_out_with_its_partial_results() -> None:
    """The script's own SIGTERM setting is kept aside (it sees it, its children get it):
    the timeout still reaches the runner, which reports what it measured."""
    result = cli("--passes", "sample", "--timeout", "4", str(SCRIPTS / "deaf_to_sigterm.py"), timeout=120)
    assert result.returncode == 124
    assert b"script sees its SIG_IGN: True" in result.stderr + result.stdout
    assert b"child kept it: True" in result.stderr + result.stdout
    text = result.stdout.decode()
    assert "pass status: timeout after 4.0 s" in text
    first = next(line for line in text.splitlines() if ": warning: " in line)
    assert f"deaf_to_sigterm.py:{marker_line('deaf_to_sigterm.py')}:" in first
    assert runner_pids("deaf_to_sigterm.py") == []


def test_a_runner_that_never_takes_the_stop_is_killed_and_said_so() -> None:
    """SIGTERM blocked by the script's main thread: the pass still ends at the timeout, the
    report says so, and nothing of it is left running. (Which grace applies is a duration,
    not asserted on a shared machine: 4.1 s in all here for a 3 s timeout, the sampler's
    thread taking the signal the main thread blocks.)"""
    result = cli(
        "--passes", "sample", "--timeout", "3", str(SCRIPTS / "deaf_to_sigterm.py"), "block", timeout=120
    )
    assert result.returncode == 124
    assert "pass status: timeout after 3.0 s" in result.stdout.decode()
    assert runner_pids("deaf_to_sigterm.py") == []


def test_the_scripts_output_is_relayed_byte_for_byte_and_decoded_across_chunks() -> None:
    """The command line hands on the script's bytes as they came (binary included); the
    text events (the editor's log) decode a character cut by a 64 KiB chunk's end whole."""
    payload = b"\xff\xfe\x00binary\n" + ("\u2588" * 200_000).encode() + b"\nEND\n"
    result = cli("--passes", "cprofile", str(SCRIPTS / "binary_out.py"), timeout=300)
    assert result.returncode == 0
    assert payload in result.stderr
    events: list[JobEvent] = []
    spec = JobSpec(str(SCRIPTS / "binary_out.py"), python=sys.executable, passes=("cprofile",))
    asyncio.run(Job(spec, on_event=events.append).run())
    out = [e for e in events if e.kind == "output" and e.stream == "stdout"]
    assert b"".join(e.data for e in out) == payload
    assert "".join(e.text for e in out) == payload.decode("utf-8", "replace")  # two U+FFFD, no more


def test_an_interpreter_that_never_runs_the_runner_is_named_and_the_next_passes_skipped(
    tmp_path: Path,
) -> None:
    """--python names something that is not a Python 3.10+ (here: one that stops at once,
    as an old Python at the runner's syntax): said so, with what it printed, once."""
    fake = tmp_path / "python3.8"
    fake.write_text("#!/bin/sh\necho 'SyntaxError: invalid syntax (old python)' >&2\nexit 1\n")
    fake.chmod(0o755)
    result = cli("--python", str(fake), str(SCRIPTS / "fn_call.py"), timeout=120)
    text = result.stdout.decode()
    assert f"{fake} never ran the profiler's runner (it exited with code 1 first)" in text
    assert "SyntaxError: invalid syntax (old python)" in text
    assert f"(pass skipped: {fake} never ran the runner)" in text  # the cprofile and cpu passes
    assert text.count("pass status: crashed") == 1


@pytest.mark.parametrize("how", ["end", "loop"])
def test_a_process_the_script_started_in_its_own_session_ends_with_the_pass(how: str) -> None:
    """``Popen(start_new_session=True)`` leaves the runner's process group, which the pass's
    end kills: it is found as the runner's descendant and ended too, when the script ends
    and when a timeout stops it."""
    args = ["--passes", "cprofile", str(SCRIPTS / "own_session.py"), how]
    result = cli("--timeout", "6", *args) if how == "loop" else cli(*args)
    assert result.returncode == (124 if how == "loop" else 0)
    said = next(line for line in result.stderr.decode().splitlines() if line.startswith("SESSION "))
    pids = [int(said.split()[1]), int(said.split()[3])]
    time.sleep(0.5)  # a SIGKILLed process's /proc entry goes once its new parent reaps it
    alive = [pid for pid in pids if os.path.exists(f"/proc/{pid}") and not _zombie(pid)]
    assert alive == []


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] == b"Z"


def test_stdin_is_at_eof() -> None:
    result = cli("--passes", "cprofile", str(SCRIPTS / "reads_stdin.py"), timeout=120)
    assert result.returncode == 0
    assert b"got '' and 0 more characters" in result.stderr


def test_fifty_megabytes_of_output_do_not_deadlock_and_a_bounded_tail_is_kept() -> None:
    doc = run_job("loud.py", passes=("cpu",))
    part = doc["passes"][0]
    assert part["status"] == "ok"
    tail = part["output_tail"]
    assert "LAST LINE" in tail["stdout"]
    assert tail["stdout"].startswith("[... ") and len(tail["stdout"]) < 70 * 1024
    assert len(tail["stderr"]) < 70 * 1024
    assert part["lines"][0]["line"] == marker_line("loud.py")


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_workers_complete_are_reported_and_leave_no_orphans(method: str) -> None:
    """Pools and DataLoader workers of every start method: spawn and forkserver workers
    import the script again (``__main__`` must be the script's file, as without us)."""
    mark = f"workers-{uuid.uuid4().hex}"  # in the environment of whatever the job starts
    code, doc, _ = cli_json(
        "--passes", "cpu", str(SCRIPTS / "workers.py"), method, env={**os.environ, "WORKERS_TEST_MARK": mark}
    )
    assert code == 0
    part = doc["passes"][0]
    assert part["output_tail"]["stdout"].splitlines()[0] == "328350", part["output_tail"]
    assert part["child_processes"] >= 4  # a pool of 2 and 2 DataLoader workers
    assert any("their time is not covered" in n for n in part["notes"])
    assert top_line(doc)["line"] == marker_line("workers.py")
    assert runner_pids("workers.py") == []
    leftovers = subprocess.run(["pgrep", "-f", "workers.py"], capture_output=True)
    assert leftovers.stdout == b""
    # nor spawned workers, multiprocessing's fork server or its resource tracker: no process
    # left with the job's environment
    assert _with_environment(mark) == [], our_processes()


def _with_environment(mark: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if mark.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_forked_children_run_as_they_would_without_the_profiler() -> None:
    # A pool worker that kept the runner's Python SIGTERM handler could miss a SIGTERM
    # landing just before a blocking wait, and Pool.terminate() then hung joining it.
    code, doc, _ = cli_json("--passes", "cprofile,cpu", str(SCRIPTS / "forks.py"))
    assert code == 0
    for part in doc["passes"]:
        stdout = part["output_tail"]["stdout"]
        assert "pool worker: sigterm default=True real _exit=True profile hook=False" in stdout
        assert "forked child exit code: 3" in stdout
        assert part["status"] == "ok" and part["exit_code"] == 0
        assert part["child_processes"] == 2
    assert top_line(doc)["line"] == marker_line("forks.py")


def test_chdir_and_sys_path_and_argv_edits_keep_attribution() -> None:
    code, doc, _ = cli_json("--passes", "cprofile,cpu", str(SCRIPTS / "wanders.py"))
    assert code == 0
    top = top_line(doc)
    assert top["file"] == str(SCRIPTS / "helper_mod.py")
    assert top["line"] == marker_line("helper_mod.py")
    cprofile = doc["passes"][0]
    assert any(f["user"] and f["function"] == "expensive" for f in cprofile["functions"])


@pytest.mark.parametrize(
    ("folder", "name", "encoding", "newline"),
    [
        ("dir with space", "ünï côde.py", "utf-8", "\n"),
        ("plain", "crlf.py", "utf-8", "\r\n"),
        ("plain", "latin.py", "latin-1", "\n"),
    ],
)
def test_odd_paths_line_endings_and_encodings(
    tmp_path: Path, folder: str, name: str, encoding: str, newline: str
) -> None:
    lines = [
        "# -*- coding: latin-1 -*-" if encoding == "latin-1" else "# plain",
        "import torch",
        "label = 'café'",
        "x = torch.randn(400, 400)",
        "for _ in range(40):",
        "    y = torch.tanh(x)  # HOT",
    ]
    path = tmp_path / folder / name
    path.parent.mkdir()
    path.write_bytes(newline.join(lines).encode(encoding) + newline.encode())
    code, doc, _ = cli_json("--passes", "cpu", str(path))
    assert code == 0, doc
    top = top_line(doc)
    assert top["file"] == str(path) and top["line"] == 6
    assert top["text"] == "y = torch.tanh(x)  # HOT"
    assert top["column"] == 5


def test_arguments_reach_the_script_verbatim_without_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "should-not-exist"
    tricky = ["a b", "$(touch " + str(marker) + ")", "; rm -rf /", "'\"", "*"]
    doc = run_job("introspect.py", *tricky, passes=("cprofile",))
    out = doc["passes"][0]["output_tail"]["stdout"]
    seen = json.loads(next(line for line in out.splitlines() if line.startswith("INTROSPECT "))[11:])
    assert seen["argv"][1:] == tricky
    assert not marker.exists()


def test_private_temporary_folder_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A temporary root of the test's own: other jobs on the machine use /tmp too.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen: list[str] = []

    def look(event: JobEvent) -> None:
        if event.kind == "pass_start":
            seen.extend(os.listdir(tmp_path))

    spec = JobSpec(str(SCRIPTS / "fn_call.py"), python=sys.executable, passes=("cpu",))
    asyncio.run(Job(spec, on_event=look).run())
    assert [d for d in seen if d.startswith("bottleneck-lsp-")]  # it existed while the job ran
    assert os.listdir(tmp_path) == []


def test_wrong_interpreter_and_missing_torch_messages(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        cuda = cli("--passes", "cprofile,cuda", str(SCRIPTS / "introspect.py"))
        assert cuda.returncode == 0
        why = b"was built without CUDA" if torch.version.cuda is None else b"found no CUDA device"
        assert b"(CUDA pass skipped)" in cuda.stdout and why in cuda.stdout
    result = cli("--python", str(tmp_path / "nope"), str(SCRIPTS / "fn_call.py"))
    assert result.returncode == 2 and b"Python interpreter not found or not executable" in result.stderr
    base = shutil.which("python3", path=os.path.join(sys.base_prefix, "bin"))
    assert base is not None
    if subprocess.run([base, "-c", "import torch"], capture_output=True).returncode == 0:
        pytest.skip("the base interpreter has torch")
    result = cli("--python", base, str(SCRIPTS / "introspect.py"))  # a script without torch
    text = result.stdout.decode()
    assert result.returncode == 0
    assert "PyTorch not importable: ModuleNotFoundError: No module named 'torch'" in text
    assert "(pass skipped: torch is not importable in" in text
    assert "cProfile output" in text and "function calls in" in text


def test_event_budget_bounds_the_recording_and_says_so() -> None:
    code, doc, _ = cli_json("--passes", "cpu", "--event-budget", "200", str(SCRIPTS / "forever_bounded.py"))
    assert code == 0
    part = doc["passes"][0]
    assert part["event_budget"]["torch_calls"] == 200
    assert part["torch_calls"] > 200  # the script ran on after recording stopped
    assert any("stopped after 200 torch calls" in n for n in part["notes"])
    assert part["lines"][0]["line"] == marker_line("forever_bounded.py")
    assert part["peak_rss_mb"] > 0
    text = cli(
        "--passes", "cpu", "--event-budget", "200", str(SCRIPTS / "forever_bounded.py")
    ).stdout.decode()
    assert "note: the profiler stopped after 200 torch calls" in text  # the report says it too


def test_the_recording_stops_before_memory_runs_out() -> None:
    """The memory guard, with real torch calls through the real marker: past its allowance
    the recording stops (for "memory"), once; under it, never."""
    from bottleneck_lsp.runner.linemarker import MemoryGuard, make_line_marker

    guard = MemoryGuard()
    assert guard.allowance > 0 and guard.start > 0  # Linux: /proc read
    reasons: list[str] = []
    marker = make_line_marker(torch, 0, reasons.append, guard)
    with marker:
        for _ in range(3 * MemoryGuard.CHECK_EVERY):
            torch.ones(2).add(1)
    assert reasons == []
    guard.allowance = 64 * 1024 * 1024
    hoard = [bytearray(96 * 1024 * 1024)]  # the process grows past the allowance
    hoard[0][::4096] = b"x" * len(hoard[0][::4096])  # touched: resident, not only mapped
    with marker:
        for _ in range(3 * MemoryGuard.CHECK_EVERY):
            torch.ones(2).add(1)
    assert reasons == ["memory"]
    del hoard


@pytest.mark.parametrize(
    ("script", "processes", "fork"),
    [("forever.py", 1, True), ("forever_child.py", 2, True), ("forever_child.py", 2, False)],
)
def test_killing_the_cli_takes_its_runner_along(script: str, processes: int, fork: bool) -> None:
    # forever_child.py's worker is not a daemon: a runner that ended as the interpreter
    # does would join it, forever, once its parent was gone.
    before = our_folders()
    options = [] if fork else ["--no-fork"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bottleneck_lsp", *options, "--passes", "cpu", str(SCRIPTS / script)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The same processes in five looks in a row: a child the runner forks to exec a
        # program (``ldconfig`` for ctypes, say) bears the runner's command line until it
        # execs, and once counted as the worker (CI, 2026-12-03: two found, then one)
        found, same = [], 0
        for _ in range(300):
            now = runner_pids(script)
            same = same + 1 if len(now) >= processes and now == found else 0
            found = now
            if same >= 5:
                break
            time.sleep(0.1)
        assert len(found) == processes, (found, our_processes())  # the runner, and the script's worker
    finally:
        proc.kill()  # SIGKILL: the CLI cannot clean up; the runner must notice by itself
        proc.wait()
    for _ in range(300):
        if not runner_pids(script) and not our_folders() - before:
            break
        time.sleep(0.1)
    assert runner_pids(script) == [], our_processes()
    assert our_folders() - before == set()  # the job's private folder went with it


def _no_internal_traceback(result: subprocess.CompletedProcess[bytes]) -> None:
    err = result.stderr.decode(errors="replace")
    assert "never retrieved" not in err and "bottleneck_lsp" not in err and "Traceback" not in err, err


@pytest.mark.slow
def test_failing_runs_print_the_environment_first_and_no_internal_traceback(tmp_path: Path) -> None:
    """30 syntax errors (the first pass fails before the script runs) and 10 runs whose
    second pass fails while a prestarted runner waits (it is discarded), two at a time."""
    runs = [("syntax_error.py",)] * 30 + [
        ("fails_second_run.py", str(tmp_path / f"state{i}")) for i in range(10)
    ]

    def one(args: tuple[str, ...]) -> subprocess.CompletedProcess[bytes]:
        # (a second pass fails only where the script runs once per pass)
        separate = ("--separate-runs",) if args[0] == "fails_second_run.py" else ()
        return cli(*separate, str(SCRIPTS / args[0]), *args[1:])

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, runs))
    for args, result in zip(runs, results, strict=True):
        _no_internal_traceback(result)
        out = result.stdout.decode()
        assert out.index("Environment Summary") < out.index("Sampled time per line"), args
        assert "(no environment was collected)" not in out and "PyTorch 2." in out
        if args[0] == "syntax_error.py":
            assert result.returncode == 1 and "Script failed (syntax_error in the sample pass)" in out
        else:
            assert result.returncode == 3 and "exited with status 3 in the cprofile pass" in out


def test_a_runner_that_dies_keeps_the_environment(tmp_path: Path) -> None:
    script = tmp_path / "dies.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    result = cli("--format", "json", str(script))
    _no_internal_traceback(result)
    doc = json.loads(result.stdout)
    assert doc["passes"][0]["status"] == "crashed" and doc["passes"][0]["signal"] == "SIGKILL"
    assert doc["environment"]["torch"]["version"] == torch.__version__


def test_a_job_stopped_before_its_first_pass_is_cancelled_not_ok() -> None:
    """Stopped while the fork server was still starting: no pass ran, and the job says it
    was stopped (before: "ok", and the editor replaced the last results with nothing)."""
    job = Job(JobSpec(str(SCRIPTS / "fn_call.py"), python=sys.executable))
    job.stop()
    doc = asyncio.run(job.run())
    assert (doc.status, doc.exit_code) == ("cancelled", 130)
    assert doc.passes and {(p.status, p.skip_reason) for p in doc.passes} == {
        ("skipped", "the job was stopped")
    }
    assert "cuda" not in [p.name for p in doc.passes] or torch.cuda.is_available()


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
@pytest.mark.parametrize("separate", [False, True], ids=["one-run", "separate-runs"])
def test_progress_counts_the_passes_that_run_from_the_first_one(fork: bool, separate: bool) -> None:
    """Without a GPU the automatic cuda pass is left out, and progress says 1/3, not 1/4
    (one run per pass), or 1/1 (the one run): the fork server tells whether torch sees a
    device before the first pass; without one (--no-fork), the machine's device files do (it
    said 1/4, then 2/3)."""
    events: list[JobEvent] = []
    spec = JobSpec(str(SCRIPTS / "fn_call.py"), python=sys.executable, fork=fork, separate_runs=separate)
    doc = asyncio.run(Job(spec, on_event=events.append).run())
    assert doc.status == "ok"
    gpu = torch.cuda.is_available()
    expected = ["sample", "cprofile", "cpu"] if separate or gpu else ["sample"]
    expected += ["cuda"] if gpu else []
    for kind in ("pass_start", "pass_end"):
        seen = [(e.pass_name, e.index, e.total) for e in events if e.kind == kind]
        assert seen == [(name, i, len(expected)) for i, name in enumerate(expected)]
    assert [p.name for p in doc.passes] == ["sample", "cprofile", "cpu", *(["cuda"] if gpu else [])]


def test_a_script_that_fails_shows_no_cuda_section_without_a_gpu() -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU: the cuda pass is part of the run")
    for script in ("syntax_error.py", "exits.py"):
        result = cli(str(SCRIPTS / script))
        assert result.returncode != 0
        assert b"autograd profiler output (CUDA" not in result.stdout, result.stdout.decode()[-2000:]


def test_a_segmentation_fault_is_named_on_its_line_with_the_shells_exit_code() -> None:
    """faulthandler in the pass prints where the script was; the error is placed on the
    line of the user's that was running, and the exit code is what a shell shows (139)."""
    script = SCRIPTS / "segfaults.py"
    crash = marker_line("segfaults.py", "# CRASH")
    result = cli("--passes", "sample,cpu", str(script))
    assert result.returncode == 139
    out = result.stdout.decode()
    assert "pass status: crashed, killed by SIGSEGV" in out
    assert f"segfaults.py:{crash}:1: error: Segmentation fault (SIGSEGV): the script crashed here" in out
    assert "Fatal Python error: Segmentation fault" in out  # the traceback in "Script failed"
    code, doc, _ = cli_json("--passes", "cpu", str(script))
    error = doc["passes"][0]["error"]
    assert code == 139 and doc["exit_code"] == 139
    assert (error["file"], error["line"], error["function"]) == (str(script), crash, "<module>")


@pytest.mark.parametrize(
    ("api", "passes"),
    [
        ("torch.profiler", ("cpu",)),
        ("torch.autograd.profiler", ("cpu",)),
        # in a thread, with a profiler that records the pass's own thread (memory): left
        # running, the process died of SIGSEGV when the script's thread started its own
        ("thread", ("cpu", "memory")),
    ],
)
def test_a_script_that_starts_torchs_profiler_itself_keeps_it_and_the_pass_says_so(
    api: str, passes: tuple[str, ...]
) -> None:
    """torch runs one profiler at a time, and a second one took the pass's whole recording
    (0 events, ``ok``): the pass now ends its recording where the script starts its own,
    keeps what it had, says so, and the script's profiler records as without us (none of
    the pass's line ranges in its table)."""
    doc = run_typed("own_profiler.py", api, passes=passes)
    part = doc.pass_named("cpu")
    assert part is not None and part.status == "ok"
    assert part.event_budget is not None and part.event_budget.reason == "script_profiler"
    own = marker_line("own_profiler.py", "OWN")
    said = [n for n in part.notes if "the script started torch's profiler itself" in n]
    where = (
        f"at own_profiler.py:{own} in another thread," if api == "thread" else f"at own_profiler.py:{own},"
    )
    assert len(said) == 1 and where in said[0], part.notes
    before = {ln.line: {op.name: op.count for op in ln.ops} for ln in part.lines}
    if api == "thread" and not before:  # (a profiler of one thread, stopped from another)
        assert "it lost what it had recorded of its own" in said[0], said
    else:
        assert before.get(marker_line("own_profiler.py", "BEFORE"), {}).get("aten::mm") == 20, before
    assert own not in before  # not recorded by the pass: the script's profiler had it
    output = part.output_tail
    assert output is not None
    table = output.stdout
    assert re.search(r"aten::tanh\s.*\s30\s*$", table, re.M), table
    assert lineranges.PREFIX not in table
    if api != "thread":  # (ended from the script's thread, torch warns that it found no session)
        assert "disableProfiler called" not in output.stderr
