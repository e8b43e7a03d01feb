"""The fork server: torch imported once, every pass forked from it (issue 15).

Real processes throughout: the server in this interpreter, real torch, real scripts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bottleneck_lsp.formats import report
from bottleneck_lsp.job.job import Job
from bottleneck_lsp.job.spec import JobSpec
from bottleneck_lsp.processes import fork_server
from bottleneck_lsp.processes.fork_server import ForkServer
from bottleneck_lsp.schema.contract import RunnerArgs
from bottleneck_lsp.schema.model import Document
from helpers import SCRIPTS, marker_line, part_of, run_job
from lsp_helpers import fork_servers, gone, our_folders, runner_pids


def test_a_crash_in_one_pass_leaves_the_later_passes_running() -> None:
    # cProfile in a run of its own: on a loaded machine the sample pass's body can pass the
    # 1 s after which cProfile rides in the cpu pass's run, and the crash is then not its own
    doc = run_job(
        "dies_under_cprofile.py",
        passes=("sample", "cprofile", "cpu"),
        separate_cprofile=True,
        separate_runs=True,
    )
    cprofile, cpu = part_of(doc, "cprofile"), part_of(doc, "cpu")
    assert cprofile is not None and cprofile["status"] == "crashed" and cprofile["signal"] == "SIGKILL"
    assert cpu is not None and cpu["status"] == "ok" and cpu["warm"] is True
    assert cpu["lines"][0]["line"] == marker_line("dies_under_cprofile.py")
    assert doc["status"] == "crashed"  # the job says so, with every pass's figures
    assert runner_pids("dies_under_cprofile.py") == []


def test_a_warm_server_serves_job_after_job_and_survives_their_crashes(tmp_path: Path) -> None:
    dies = tmp_path / "dies.py"
    dies.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    ran = tmp_path / "ran.txt"
    counts = tmp_path / "counts.py"
    counts.write_text(f"with open({str(ran)!r}, 'a') as f:\n    f.write('x')\n")

    async def scenario() -> tuple[list[str], list[str], float | None, int]:
        server = await ForkServer.start(sys.executable)
        try:
            assert not ran.exists()  # started: torch imported, nothing of any script run
            spec = JobSpec(script=str(dies), python=sys.executable, passes=("cprofile", "cpu"))
            crashed = await Job(spec, forks=server).run()
            assert not server.gone and server.proc.returncode is None
            spec = JobSpec(script=str(counts), python=sys.executable, passes=("sample", "cprofile"))
            fine = await Job(spec, forks=server).run()
            assert all(p.warm for p in fine.passes)
            return (
                [p.status for p in crashed.passes],
                [p.status for p in fine.passes],
                server.rss_mb(),
                server.proc.pid,
            )
        finally:
            await server.close()

    crashed, fine, rss, pid = asyncio.run(scenario())
    assert crashed == ["crashed", "crashed"] and fine == ["ok", "ok"]
    assert ran.read_text() == "xx"  # once per pass, no more
    assert rss is not None and rss > 50  # torch is loaded in it
    assert gone(pid) and runner_pids(str(tmp_path)) == []


def test_closing_the_server_ends_the_pass_it_runs(tmp_path: Path) -> None:
    async def scenario() -> int:
        server = await ForkServer.start(sys.executable)
        spec = JobSpec(script=str(SCRIPTS / "forever.py"), python=sys.executable, passes=("cprofile",))
        task = asyncio.ensure_future(Job(spec, forks=server).run())
        for _ in range(600):
            if runner_pids("forever.py"):
                break
            await asyncio.sleep(0.05)
        assert runner_pids("forever.py")
        await server.close()  # e.g. the settings changed while a job ran
        doc = await task
        assert doc.passes[0].status == "crashed"
        return server.proc.pid

    pid = asyncio.run(scenario())
    assert gone(pid) and runner_pids("forever.py") == []


def test_a_pass_that_ends_before_its_fork_is_answered_is_still_seen_to_end(tmp_path: Path) -> None:
    """The event loop is busy elsewhere (another job, a large document) while a short pass is
    forked: the server's "forked" and "exited" answers arrive in one read. Its end was lost
    once, and the job waited for ever."""
    script = tmp_path / "short.py"
    script.write_text("pass\n")

    async def scenario() -> int:
        server = await ForkServer.start(sys.executable)
        try:
            options = RunnerArgs(
                pass_name="cprofile",
                script=str(script),
                out=str(tmp_path / "cprofile.json"),
                cwd=str(tmp_path),
            ).options()
            forking = asyncio.ensure_future(server.spawn(options))
            await asyncio.sleep(0)  # the request is sent
            time.sleep(1.5)  # the loop is held: the pass forks, runs and ends meanwhile
            proc, _out, _err = await forking
            return await asyncio.wait_for(proc.wait(), 30)
        finally:
            await server.close()

    assert asyncio.run(scenario()) == 0


def test_a_long_command_line_and_a_request_not_understood_leave_the_server_serving(tmp_path: Path) -> None:
    """A script's arguments of 200 KB reach it whole (a stream socket splits them: the server
    once read a part as the request, and ended); a request it does not understand is
    answered with an error, and the next one is served."""
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint('ARGS', len(sys.argv[1]), sys.argv[2])\n")
    long = "x" * 200_000

    async def scenario() -> list[str]:
        server = await ForkServer.start(sys.executable)
        try:
            loop = asyncio.get_running_loop()
            await loop.sock_sendall(server.sock, b"not a request\n")
            await loop.sock_sendall(server.sock, b'{"argv": ["--pass"]}\n')  # no descriptors
            await asyncio.sleep(0.5)
            assert not server.gone and server.proc.returncode is None
            spec = JobSpec(
                script=str(script), python=sys.executable, passes=("cprofile",), args=(long, "END")
            )
            doc = await Job(spec, forks=server).run()
            assert not server.gone
            return [
                doc.passes[0].status,
                doc.passes[0].output_tail.stdout if doc.passes[0].output_tail else "",
            ]
        finally:
            await server.close()

    status, stdout = asyncio.run(scenario())
    assert status == "ok" and "ARGS 200000 END" in stdout, stdout


def test_a_fork_server_killed_mid_pass_leaves_the_job_its_folder_and_its_later_passes(tmp_path: Path) -> None:
    """The fork server dies (the kernel's OOM killer picks it) while a pass runs: that pass
    ends, and the next ones start in interpreters of their own and report. The killed pass
    once took the job's folder with it, as if the CLI had died, and every later pass lost
    its results."""
    script = tmp_path / "ticks.py"
    script.write_text("import time\nfor _ in range(20):\n    time.sleep(0.1)\n")

    async def scenario() -> Document:
        job = Job(
            JobSpec(
                script=str(script),
                python=sys.executable,
                passes=("cprofile", "sample", "cpu"),
                separate_runs=True,
            )
        )

        async def kill_the_fork_server() -> None:
            while job._forks is None or not job._forks._children:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            os.kill(job._forks.proc.pid, signal.SIGKILL)
            time.sleep(0.5)  # the loop is busy meanwhile: the pass sees its parent gone first

        killing = asyncio.ensure_future(kill_the_fork_server())
        doc = await job.run()
        await killing
        return doc

    doc = asyncio.run(scenario())
    first, *later = doc.passes  # the sample pass runs first
    assert first.status == "crashed" and [p.status for p in later] == ["ok", "ok"], doc.passes
    assert all(not p.warm for p in later)
    assert any("the fork server ended during this pass (killed by signal 9)" in n for n in first.notes), (
        first.notes
    )


def test_without_fork_the_job_says_so_and_starts_each_pass_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_server, "can_fork", lambda: "forking is not supported on plan9")
    doc = run_job("fn_call.py", passes=("cprofile", "cpu"))
    first, second = doc["passes"]
    assert first["notes"] == [
        "each pass started its own interpreter (no fork server: forking is not supported on plan9)"
    ]
    assert not first["warm"] and not second["warm"] and second["status"] == "ok"


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'no such module here' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(fork_server.ForkServerError, match="no such module here"):
        asyncio.run(ForkServer.start(str(fake)))


def _cli_running_forever(passes: str, output: int) -> subprocess.Popen[bytes]:
    """The command line on forever.py, once its first pass runs (or after 30 s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bottleneck_lsp", "--passes", passes, str(SCRIPTS / "forever.py")],
        stdout=output,
        stderr=output,
        # SIGINT as in a terminal's foreground job, whatever this test run inherited (a
        # shell's background job, as CI's may be, starts with it ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    for _ in range(600):
        if runner_pids("forever.py"):
            break
        time.sleep(0.05)
    return proc


def test_killing_the_cli_takes_the_fork_server_and_its_pass_along() -> None:
    before = our_folders()
    proc = _cli_running_forever("cprofile", subprocess.DEVNULL)
    try:
        servers = fork_servers(proc.pid)
        assert len(servers) == 1 and runner_pids("forever.py")
    finally:
        proc.send_signal(signal.SIGKILL)  # nothing of the CLI cleans up
        proc.wait()
    for _ in range(300):
        if not runner_pids("forever.py") and all(gone(p) for p in servers):
            break
        time.sleep(0.1)
    assert runner_pids("forever.py") == [] and all(gone(p) for p in servers)
    assert our_folders() - before == set()  # the job's folder and the fork server's: removed


HOST_KILLED_AFTER_A_PASS = r"""
import asyncio, os, signal, sys
from bottleneck_lsp.processes.fork_server import ForkServer, runner_folder
from bottleneck_lsp.schema.contract import RunnerArgs

async def main():
    server = await ForkServer.start(sys.executable)
    folder = runner_folder()  # a job's folder, as a job makes it
    script = os.path.join(folder, "short.py")
    with open(script, "w") as handle:
        handle.write("pass\n")
    out = os.path.join(folder, "cprofile.json")
    options = RunnerArgs(pass_name="cprofile", script=script, out=out, cwd=folder).options()
    proc, _out, _err = await server.spawn(options)
    assert await proc.wait() == 0
    print(folder, server.proc.pid, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # before the job could remove its folder

asyncio.run(main())
"""


def test_a_host_killed_after_its_pass_ended_leaves_no_job_folder(tmp_path: Path) -> None:
    """The language server or CLI dies (Emacs ends it with SIGKILL) after a pass ended and
    before the job removed its folder: the fork server, which learns that its host is gone,
    removes the folders of the passes it forked, the ended ones too (only the running ones'
    went, and the folder stayed in /tmp)."""
    host = subprocess.run(
        [sys.executable, "-c", HOST_KILLED_AFTER_A_PASS], capture_output=True, text=True, timeout=120
    )
    assert host.returncode == -signal.SIGKILL, host.stderr
    folder, server = host.stdout.split()
    for _ in range(100):
        if not os.path.exists(folder) and gone(int(server)):
            break
        time.sleep(0.1)
    assert gone(int(server))
    assert not os.path.exists(folder), os.listdir(folder)


def test_the_report_says_start_up_was_paid_once() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bottleneck_lsp", "--passes", "cprofile,cpu", str(SCRIPTS / "fn_call.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert (
        out.stdout.count("forked with torch loaded (start-up paid once, by the fork server: import torch")
        == 2
    )
    fresh = [sys.executable, "-m", "bottleneck_lsp", "--no-fork", "--format", "json", "--passes", "cpu"]
    done = subprocess.run([*fresh, str(SCRIPTS / "fn_call.py")], capture_output=True, text=True, timeout=300)
    assert json.loads(done.stdout)["passes"][0]["warm"] is False


def test_each_forked_pass_draws_fresh_randomness_as_a_new_interpreter_would(tmp_path: Path) -> None:
    script = tmp_path / "draws.py"
    script.write_text(
        "import random, json\nimport numpy, torch\n"
        "print('DRAWS ' + json.dumps([random.random(), float(numpy.random.rand()), float(torch.rand(1))]))\n"
    )
    doc = run_job(str(script), passes=("sample", "cprofile", "cpu"), separate_runs=True)
    draws = []
    for part in doc["passes"]:
        line = next(x for x in part["output_tail"]["stdout"].splitlines() if x.startswith("DRAWS "))
        draws.append(json.loads(line[len("DRAWS ") :]))
    assert len({d[0] for d in draws}) == 3 and len({d[1] for d in draws}) == 3  # reseeded per pass
    assert len({d[2] for d in draws}) == 1  # torch's default seed is fixed, forked or not


def test_a_forked_pass_runs_the_scripts_exit_handlers_and_not_the_servers(tmp_path: Path) -> None:
    """At a forked pass's exit the script's atexit handlers and finalizers run, as in a
    fresh interpreter; the finalizers registered in the fork server before the fork (torch's:
    a ``torch.library.Library`` takes its registrations back, 30 ms a pass) do not."""
    script = tmp_path / "exits.py"
    script.write_text(
        "import atexit, weakref, torch\n"
        "class Holder: pass\n"
        "held = Holder()\n"
        "weakref.finalize(held, print, 'FINALIZED')\n"
        "atexit.register(print, 'ATEXIT')\n"
        "server_side = [f for f in weakref.finalize._registry if f.atexit]\n"
        "print('PENDING', len(server_side))\n"
    )
    doc = run_job(str(script), passes=("cprofile", "cpu"))
    for part in doc["passes"]:
        assert part["warm"] is True
        out = part["output_tail"]["stdout"].splitlines()
        assert "ATEXIT" in out and "FINALIZED" in out, out
        assert "PENDING 1" in out, out  # the script's finalizer alone (torch's: over a hundred)


def test_a_script_that_needs_no_compiler_stack_never_pays_for_it() -> None:
    """trivial scripts (no optimizer, torch.func, checkpoint or compile) fork from a server
    that loaded torch alone: over a second of start-up less, and nothing set aside."""
    doc = run_job("fn_call.py", passes=("sample", "cpu"), separate_runs=True)
    for part in doc["passes"]:
        assert part["warm"] is True and part["startup"]["import_torch_lazy_s"] == 0.0, part["startup"]
        assert part["startup"].get("compiler_stack_in_run_s") is None
        assert not any("compiler stack" in note for note in part["notes"])


def test_a_compiler_stack_the_guess_missed_is_set_aside_and_loaded_for_the_next_passes() -> None:
    """The script builds its optimizer where the source guess cannot see it: the first pass
    times the import, charges it to no line and says where it happened; the fork server then
    loads it before the next passes fork, which start with it (and no note)."""
    name = "hidden_compiler_stack.py"
    doc = run_job(name, passes=("sample", "cprofile", "cpu"), separate_runs=True)
    sample, cprofile, cpu = (part_of(doc, p) for p in ("sample", "cprofile", "cpu"))
    assert sample is not None and cprofile is not None and cpu is not None
    loaded = sample["startup"]["compiler_stack_in_run_s"]
    assert loaded > 0.2 and sample["startup"]["import_torch_lazy_s"] == 0.0
    note = f"while the script ran at {name}:{marker_line(name, '# LOADS')}: "
    assert any(note in n and "set aside: no line is charged for it" in n for n in sample["notes"]), sample[
        "notes"
    ]
    # what the user sees: the hot lines, not the line that happened to load it
    text = report.render(Document.from_json(doc))
    first = next(line for line in text.splitlines() if ": warning: " in line)
    assert f"{name}:{marker_line(name, '# LOADS')}:" not in first
    lines = {line["line"]: line for line in sample["samples"]["lines"]}
    assert lines.get(marker_line(name, "# LOADS"), {"wall_s": 0.0})["wall_s"] < 0.2 * loaded
    # the import is out of the script's wall time too (the runner's own wall time has it)
    assert sample["script_wall_s"] + loaded <= sample["wall_s"] + 0.05
    for later in (cprofile, cpu):
        assert later["warm"] is True and later["startup"]["import_torch_lazy_s"] > 0.2
        assert later["startup"].get("compiler_stack_in_run_s") is None


def _preloaded(part: dict[str, Any]) -> list[str]:
    """What the pass's process had loaded before the script's first line (the script says)."""
    return next(
        line.split()[1:] for line in part["output_tail"]["stdout"].splitlines() if "PRELOADED" in line
    )


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
def test_an_inductor_the_guess_missed_is_set_aside_and_loaded_for_the_next_passes(fork: bool) -> None:
    """The script calls torch.compile where the guess cannot see it: its first pass times
    the import of inductor's code generator, charges it to no line and says where; the next
    passes (forked from the fork server, or fresh interpreters) start with it loaded."""
    name = "hidden_compile.py"
    doc = run_job(name, passes=("sample", "cprofile", "cpu"), fork=fork, separate_runs=True)
    sample, cprofile, cpu = (part_of(doc, p) for p in ("sample", "cprofile", "cpu"))
    assert sample is not None and cprofile is not None and cpu is not None
    assert _preloaded(sample) == ["True", "False"]  # the stack guessed, inductor not
    loaded = sample["startup"]["inductor_in_run_s"]
    assert loaded > 0.2 and sample["startup"].get("compiler_stack_in_run_s") is None
    note = (
        f"torch loaded what torch.compile needs (inductor's code generator) while the script ran at {name}:"
    )
    assert any(
        f"{note}{marker_line(name, '# LOADS')}: " in n and "set aside: no line is charged for it" in n
        for n in sample["notes"]
    ), sample["notes"]
    # what the user sees: the hot line first, not the one that happened to import it
    text = report.render(Document.from_json(doc))
    first = next(line for line in text.splitlines() if ": warning: " in line)
    assert f"{name}:{marker_line(name, '# HOT')}:" in first, first
    lines = {line["line"]: line for line in sample["samples"]["lines"]}
    assert lines.get(marker_line(name, "# LOADS"), {"wall_s": 0.0})["wall_s"] < 0.2 * loaded
    for later in (cprofile, cpu):
        assert _preloaded(later) == ["True", "True"], later["output_tail"]
        assert later["warm"] is fork and later["startup"].get("inductor_in_run_s") is None
        assert not any("inductor" in n for n in later["notes"]), later["notes"]


def test_a_compile_with_another_backend_is_set_aside_and_loads_no_code_generator() -> None:
    """``torch.compile(..., backend="eager")`` imports aot_autograd and dynamo's repro hooks,
    and no code generator: the sample pass sets them aside and says so, and the next passes
    are not given inductor's 0.5 s of imports they would never use."""
    name = "hidden_compile.py"
    doc = run_job(name, "eager", passes=("sample", "cpu"), separate_runs=True)
    sample, cpu = part_of(doc, "sample"), part_of(doc, "cpu")
    assert sample is not None and cpu is not None
    assert sample["startup"].get("inductor_in_run_s") is None
    hooks = "torch loaded its ahead-of-time autograd (torch._functorch.aot_autograd) while the script ran at "
    hooks += f"{name}:{marker_line(name, '# LOADS')}: "
    noted = [n for n in sample["notes"] if hooks in n and "set aside" in n]
    assert noted and float(noted[0].split(": ")[1].split(" s ")[0]) > 0.05, sample["notes"]
    assert _preloaded(cpu) == ["True", "False"], cpu["output_tail"]


def test_without_fork_a_missed_compiler_stack_is_loaded_by_the_next_fresh_interpreters() -> None:
    doc = run_job("hidden_compiler_stack.py", passes=("sample", "cpu"), fork=False, separate_runs=True)
    sample, cpu = part_of(doc, "sample"), part_of(doc, "cpu")
    assert sample is not None and cpu is not None
    assert sample["warm"] is False and sample["startup"]["compiler_stack_in_run_s"] > 0.2
    assert (
        cpu["startup"]["import_torch_lazy_s"] > 0.2 and cpu["startup"].get("compiler_stack_in_run_s") is None
    )


def _in_fresh_process(code: str, timeout: float = 120) -> list[str]:
    """Run ``code`` in a new interpreter (a command line of its own: exit and atexit
    included); the words it printed."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_command_line_starts_its_fork_server_before_its_own_imports() -> None:
    """``profile`` starts the fork server first (fork_launch.early), and the job adopts that
    very process: torch's import runs beside the command line's own imports. Its ready
    message may be waiting already (it once went unread, and the job waited for ever)."""
    probe = (
        "import asyncio, sys\n"
        "from bottleneck_lsp.processes import fork_launch\n"
        f"fork_launch.early(['--passes', 'cpu', {str(SCRIPTS / 'fn_call.py')!r}])\n"
        "early = fork_launch._early.popen.pid\n"
        "assert 'bottleneck_lsp.job.job' not in sys.modules\n"
        "import select\n"  # its ready message waits, sent before anyone reads (a race, once)
        "assert select.select([fork_launch._early.sock], [], [], 120)[0]\n"
        "from bottleneck_lsp.processes.fork_server import ForkServer\n"
        "async def main():\n"
        "    server = await ForkServer.start(sys.executable)\n"
        "    print(early, server.proc.pid, server.startup['import_torch_s'] > 0)\n"
        "    await server.close()\n"
        "asyncio.run(main())\n"
    )
    early, adopted, ready = _in_fresh_process(probe)
    assert early == adopted and ready == "True"
    assert gone(int(early))


def test_an_early_fork_server_nobody_adopts_is_killed_at_exit() -> None:
    """Started for another interpreter than the job asks for, or never asked for (a wrong
    command line): killed, its folder removed, when the command line exits."""
    before = our_folders()
    probe = (
        "import sys\n"
        "from bottleneck_lsp.processes import fork_launch\n"
        "fork_launch.early(['--python', sys.executable, 'train.py'])\n"
        "print(fork_launch._early.popen.pid)\n"
        "assert fork_launch.take('/usr/bin/python-other') is None  # another interpreter: killed\n"
        "fork_launch.early(['train.py'])\n"
        "print(fork_launch._early.popen.pid)\n"
    )
    first, second = (int(pid) for pid in _in_fresh_process(probe))
    assert gone(first) and gone(second)
    assert our_folders() - before == set()
    for words in (["--no-fork", "train.py"], ["--nproc-per-node", "2", "train.py"], ["--help"]):
        quiet = (
            "from bottleneck_lsp.processes import fork_launch\n"
            f"fork_launch.early({words!r})\nprint(fork_launch._early)\n"
        )
        assert _in_fresh_process(quiet, 60) == ["None"], words


def test_ctrl_c_while_the_command_line_imports_is_one_plain_line() -> None:
    """SIGINT in the first tenth of a second, before the command line's own handler is set
    (here: while ``cli`` is being imported, the fork server already started): one plain
    line and exit code 130, not a traceback of an import; the early fork server is gone."""
    before, servers = our_folders(), set(fork_servers())
    code = (
        "import os, signal, sys\n"
        # as in a terminal (a shell's background job, CI's, starts with SIGINT ignored)
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'bottleneck_lsp.cli':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from bottleneck_lsp import entry\n"
        f"sys.argv = ['bottleneck-lsp', 'profile', {str(SCRIPTS / 'fn_call.py')!r}]\n"
        "sys.exit(entry.main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 130, out.stderr
    assert out.stderr.strip() == "bottleneck-lsp: stopped before any pass ran"
    assert runner_pids("fn_call.py") == [] and set(fork_servers()) - servers == set()
    assert our_folders() - before == set()


def test_a_signal_ignored_when_the_command_line_started_stays_ignored() -> None:
    """Started with SIGINT ignored (a shell's background job: the terminal's Ctrl-C goes to
    the whole foreground group, background jobs included), the command line keeps ignoring
    it, as any program does; SIGTERM still stops it with its report."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bottleneck_lsp", "--passes", "sample", str(SCRIPTS / "forever.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        for _ in range(600):
            if runner_pids("forever.py"):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # still profiling
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err.decode()[-2000:]
    assert b"pass status: cancelled" in out
    assert runner_pids("forever.py") == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_first_ctrl_c_or_sigterm_reports_what_the_passes_so_far_measured_and_leaves_nothing(
    signum: int,
) -> None:
    """SIGINT (or SIGTERM: ``timeout 600 bottleneck-lsp ...``) once: the running pass stops
    as the editor's stop stops it, the later passes do not run, and the report covers what
    ran (exit code 128 + the signal, as a shell's); nothing is left behind."""
    before = our_folders()
    proc = _cli_running_forever("sample,cprofile", subprocess.PIPE)
    try:
        time.sleep(1.0)  # the sample pass sees the loop
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum
    assert b"stopping; the passes so far are reported" in err and b"Traceback" not in err
    text = out.decode()
    assert "pass status: cancelled" in text
    assert "(pass skipped: the job was stopped)" in text  # the cprofile pass
    first = next(line for line in text.splitlines() if ": warning: " in line)
    assert "forever.py:" in first and "of wall time" in first  # the sample pass's second of the loop
    assert runner_pids("forever.py") == []
    assert our_folders() - before == set()


def test_a_script_that_calls_torch_compile_finds_inductor_loaded_by_the_fork_server(tmp_path: Path) -> None:
    """The first torch.compile call of a process imports inductor's code generator (0.7 s
    here): with the guess (job/compiler_guess.py) the fork server imports it once, before the
    passes fork, and the script's torch.compile line is not charged it in each pass. A
    script that only builds an optimizer gets the compiler stack without it."""

    compiled = run_job("compile_call.py", passes=("sample", "cprofile"))
    assert [_preloaded(p) for p in compiled["passes"]] == [["True", "True"], ["True", "True"]]
    assert all(part["warm"] is True for part in compiled["passes"])
    plain = Path(SCRIPTS / "compile_call.py").read_text().replace("torch.compile(", "torch.optim.SGD(")
    plain = plain.replace("torch.nn.Linear(4, 4))", "torch.nn.Linear(4, 4).parameters(), lr=0.1)")
    script = tmp_path / "optimizer_only.py"
    script.write_text(plain)
    assert [_preloaded(p) for p in run_job(str(script), passes=("cprofile",))["passes"]] == [
        ["True", "False"]
    ]


def test_a_fork_server_that_stops_answering_is_given_up_and_the_pass_starts_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frozen fork server (stopped, or its one thread blocked) never answers a fork
    request: the wait for it is bounded (issue 44), the pass starts in an interpreter of its
    own and says why, and the child it forks once it runs again is killed."""
    monkeypatch.setattr(fork_server, "SPAWN_TIMEOUT_S", 3.0)
    script = tmp_path / "ticks.py"
    script.write_text("import time\nfor _ in range(5):\n    time.sleep(0.05)\n")

    async def scenario() -> tuple[Document, bool]:
        server = await ForkServer.start(sys.executable)
        os.kill(server.proc.pid, signal.SIGSTOP)
        try:
            doc = await Job(
                JobSpec(script=str(script), python=sys.executable, passes=("sample",)), forks=server
            ).run()
            return doc, server.gone
        finally:
            os.kill(server.proc.pid, signal.SIGCONT)
            await server.close()

    started = time.monotonic()
    doc, given_up = asyncio.run(scenario())
    (part,) = doc.passes
    assert part.status == "ok" and not part.warm, part
    assert given_up
    assert any("the fork server did not answer a fork request in 3 s" in n for n in part.notes), part.notes
    assert time.monotonic() - started < 60
    assert runner_pids("ticks.py") == [] and fork_servers() == []
