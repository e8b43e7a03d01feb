"""The runner runs the script as `python script.py args` would, and reports how it ended."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.analysis.ranking import Thresholds
from bottleneck_lsp.formats import report, wording
from bottleneck_lsp.lsp import annotations
from bottleneck_lsp.paths.project_root import project_root
from helpers import SCRIPTS, marker_line, part_of, run_job, run_typed


def introspect(doc: dict) -> dict:
    out = doc["passes"][0]["output_tail"]["stdout"]
    line = next(line for line in out.splitlines() if line.startswith("INTROSPECT "))
    return json.loads(line[len("INTROSPECT ") :])


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
def test_script_sees_its_own_argv_path_name_cwd_and_empty_stdin(tmp_path, fork: bool) -> None:  # type: ignore[no-untyped-def]
    before = os.environ.get("PYTHONPATH")
    doc = run_job("introspect.py", "a", "b c", passes=("cprofile",), cwd=str(tmp_path), fork=fork)
    assert doc["passes"][0]["warm"] is fork
    seen = introspect(doc)
    script = str(SCRIPTS / "introspect.py")
    assert seen["argv"] == [script, "a", "b c"]
    assert seen["path0"] == str(SCRIPTS)
    assert seen["name"] == "__main__"
    assert seen["cwd"] == str(tmp_path)
    assert seen["stdin"] == ""
    assert seen["pythonpath"] == before
    assert seen["nvml_check"] == os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK")  # the fork server's own
    assert not any("bottleneck-lsp-" in p for p in seen["path"])


@pytest.mark.parametrize("typed", ["introspect.py", "./introspect.py", str(SCRIPTS / "introspect.py")])
def test_the_command_line_gives_argv_0_as_typed_as_plain_python_does(typed: str) -> None:
    """``bottleneck-lsp profile introspect.py`` and ``python introspect.py``: the same
    sys.argv (a script's usage line and messages name it as the user typed it)."""
    plain = subprocess.run(
        [sys.executable, typed, "x"], cwd=SCRIPTS, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    ours = subprocess.run(
        [sys.executable, "-m", "bottleneck_lsp", "--passes", "cprofile", typed, "x"],
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ours.returncode == 0, ours.stderr

    def argv(output: str) -> list[str]:
        line = next(x for x in output.splitlines() if x.startswith("INTROSPECT "))
        return json.loads(line[len("INTROSPECT ") :])["argv"]

    assert argv(ours.stderr + ours.stdout) == argv(plain.stdout) == [typed, "x"]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
def test_each_pass_runs_in_a_process_of_its_own(fork: bool) -> None:
    doc = run_job("introspect.py", passes=("sample", "cprofile", "cpu"), fork=fork, separate_runs=True)
    assert [p["name"] for p in doc["passes"]] == ["sample", "cprofile", "cpu"]
    assert all(p["status"] == "ok" and p["warm"] is fork for p in doc["passes"])
    pids = []
    for part in doc["passes"]:
        line = next(x for x in part["output_tail"]["stdout"].splitlines() if x.startswith("INTROSPECT "))
        pids.append(json.loads(line[len("INTROSPECT ") :])["pid"])
    assert len(set(pids)) == 3 and os.getpid() not in pids


def test_environment_summary() -> None:
    doc = run_job("introspect.py", passes=("cprofile",))
    env = doc["environment"]
    assert env["torch"]["version"].startswith("2.")
    assert env["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert any(p["name"] == "torch" for p in env["packages"])


def test_cuda_pass_asked_for_without_cuda_is_skipped_with_the_reason() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    doc = run_job("fn_call.py", passes=("sample", "cuda"))
    cuda = part_of(doc, "cuda")
    assert cuda is not None and cuda["status"] == "skipped"
    assert "without CUDA" in cuda["skip_reason"] or "no CUDA device" in cuda["skip_reason"]
    assert set(cuda) == {"name", "status", "skip_reason"}, cuda  # what applies to a skipped pass
    assert "replay" not in doc  # a profile's document, not a replay's
    sample = part_of(doc, "sample")
    assert sample is not None and sample["status"] == "ok" and "device" not in sample  # lines only
    assert doc["verdict"] is None
    # by default (no --passes) the device passes are simply not run on such a machine
    auto = run_job("introspect.py")
    assert [p["name"] for p in auto["passes"]] == ["sample", "cprofile", "cpu"]


def test_without_torch_cprofile_still_runs_and_autograd_is_skipped() -> None:
    base = os.path.join(sys.base_prefix, "bin", "python3")
    probe = subprocess.run([base, "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip("the base interpreter has torch")
    doc = run_job("introspect.py", passes=("cprofile", "cpu"), python=base)
    assert doc["environment"]["torch"] is None
    assert "torch" in doc["environment"]["torch_error"]
    cprofile, cpu = doc["passes"]
    assert cprofile["status"] == "ok"
    assert cpu["status"] == "skipped" and "torch is not importable" in cpu["skip_reason"]


def test_syntax_error_reports_line_and_column_and_runs_nothing() -> None:
    doc = run_job("syntax_error.py")
    assert doc["status"] == "syntax_error"
    first = doc["passes"][0]
    assert first["error"]["line"] == marker_line("syntax_error.py", "# SYNTAX")
    assert first["error"]["column"] >= 1
    assert all(p["status"] == "skipped" for p in doc["passes"][1:])


def test_exception_located_on_the_raising_line_and_results_kept() -> None:
    doc = run_job("raises.py", passes=("cpu",))
    part = doc["passes"][0]
    assert part["status"] == "error"
    error = part["error"]
    assert error["type"] == "ValueError" and error["message"] == "planted failure"
    assert error["file"] == str(SCRIPTS / "raises.py")
    assert error["line"] == marker_line("raises.py", "# RAISE")
    assert "bottleneck_lsp" not in error["traceback"]
    assert part["lines"][0]["line"] == marker_line("helper_mod.py")  # work before the failure
    assert doc["exit_code"] == 1


def test_timeout_kills_the_pass_and_keeps_partial_results() -> None:
    doc = run_job("forever.py", passes=("cpu",), timeout=10)
    part = doc["passes"][0]
    assert part["status"] == "timeout"
    assert doc["exit_code"] == 124
    assert part["lines"] and part["lines"][0]["line"] == marker_line("forever.py")


def test_kineto_start_and_stop_lines_are_dropped_and_the_rest_of_stderr_kept(capfd) -> None:  # type: ignore[no-untyped-def]
    from bottleneck_lsp.runner import kinetolog

    with kinetolog.dropped():
        os.write(
            2, b"USDT:2026-12-02 06:29:13 5473:5473 SyncActivityProfilerHandler.cpp:52] profiler_start\n"
        )
        os.write(2, b"the script's own line\n")
        os.write(
            2, b"STAGE:2026-12-02 06:29:31 5533:5533 SyncActivityProfilerHandler.cpp:51] Completed Stage\n"
        )
        os.write(2, b"USDT: a line of the script's that only looks alike\n")
    assert (
        capfd.readouterr().err
        == "the script's own line\nUSDT: a line of the script's that only looks alike\n"
    )


def test_a_compiled_function_compiles_once_in_every_pass_and_its_compile_time_is_named() -> None:
    """torch.compile under the passes: one compilation each run, as without a profiler (the
    cpu pass's line marker, traced by TorchDynamo, made it guard on the marker's count and
    recompile at every call until its limit sent the function back to eager: 10 times), and
    each run says how long it compiled: the one run (its first window records the compile),
    and each pass with separate runs."""
    separate = run_typed("compiled_eager.py", passes=("sample", "cprofile", "cpu"), separate_runs=True)
    for part in separate.to_json()["passes"]:
        assert part["status"] == "ok", part
        said = [n for n in part["notes"] if n.startswith("torch.compile compiled")]
        assert len(said) == 1 and said[0].startswith("torch.compile compiled 1 time for "), (
            part["name"],
            said,
        )
    typed_doc = run_typed("compiled_eager.py", passes=("sample", "cprofile", "cpu"))
    doc = typed_doc.to_json()
    assert doc["runs"] == 1
    for part in doc["passes"]:
        assert part["status"] == "ok", part
        if part["name"] != "sample":
            continue  # recorded in windows of the sample pass's run: its note says it
        said = [n for n in part["notes"] if n.startswith("torch.compile compiled")]
        assert len(said) == 1 and said[0].startswith("torch.compile compiled 1 time for "), (
            part["name"],
            said,
        )
    # the sample pass names the line whose call set the compilation off, and its time there
    sample = part_of(doc, "sample")
    assert sample is not None
    said = next(n for n in sample["notes"] if n.startswith("torch.compile compiled"))
    hot = marker_line("compiled_eager.py")
    assert f"sampled while it compiled: compiled_eager.py:{hot} " in said, said
    # ... and so do that line's report line, lens and hover: most of its wall time one-time
    # work: compiling, and (in the one run, which loads nothing first) torch importing what the
    # compile needs
    line = next(x for x in sample["samples"]["lines"] if x["line"] == hot)
    one_time = line["compiling_s"] + line.get("importing_s", 0.0)
    assert line["compiling_s"] > 0 and 0.5 * line["wall_s"] < one_time <= line["wall_s"] + 1e-6, line
    row = next(r for r in ranking.hotspots(typed_doc) if r.line == hot)
    text = report.render(typed_doc, cwd=str(SCRIPTS))
    said = next(x for x in text.splitlines() if x.startswith(f"compiled_eager.py:{hot}:"))
    # the table's compile column, its cells under its header (7 letters, wider than a cell)
    header = next(x for x in text.splitlines() if x.lstrip().startswith("wall  Python  compile"))
    shown = next(x for x in text.splitlines() if f"compiled_eager.py:{hot}  " in x)
    ends = [m.end() for m in re.finditer(r"\S+", header)][:3]
    assert [m.end() for m in re.finditer(r"\S+", shown)][:3] == ends, (header, shown)
    assert re.search(
        r"of wall time \(.*\), \d+ ms of the line's \d+ ms while torch.compile compiled", said
    ), said
    assert re.search(r" · \d+ ms torch.compile compiling", wording.lens(row)), wording.lens(row)
    marked = [
        a for a in annotations.build(typed_doc, Thresholds()) if a.row is not None and a.row.line == hot
    ]
    hover = annotations.hover(marked, typed_doc)
    assert "| compile |" in hover, hover
    cpu = part_of(doc, "cpu")
    assert cpu is not None
    # the compiled body's ops, recorded once per call
    ops = {o["name"]: o["count"] for r in cpu["lines"] for o in r.get("ops", [])}
    assert ops.get("aten::mm") == 30, ops
    # torch.compile's own work (its compile ranges, its runtime's wrappers) is not op time:
    # it was 98.6% of the op CPU time, "not attributable to your files", and the compiled
    # body's line had 1% of it
    said = [n for n in cpu["notes"] if n.startswith("torch.compile's own work in this pass, ")]
    assert len(said) == 1 and "is left out of the op CPU time and the op table" in said[0], cpu["notes"]
    table = [o["name"] for o in cpu["ops"]]
    assert not [n for n in table if n == "dynamo" or n.endswith("(dynamo_timed)")], table
    assert cpu["unattributed"]["cpu_share"] < 0.2, cpu["unattributed"]
    first = cpu["lines"][0]
    assert first["cpu_share"] > 0.5 and "aten::mm" in {o["name"] for o in first["ops"]}, first


def test_a_torchscript_functions_ops_are_on_its_call_line_marked_with_its_name_alone() -> None:
    """A scripted function's ops land on the line that called it, marked as inside it; the
    function TorchScript itself runs at a first call ("defaults", no op) is not named."""
    script = SCRIPTS.parent / "fidelity" / "corpus" / "jit_scripted.py"
    doc = run_typed(str(script), passes=("cpu",))
    row = ranking.hotspots(doc)[0]
    assert row.line == marker_line(str(script), "# MEASURE:jit")
    assert row.opaque == ["TorchScript function scripted"], row.opaque
    assert wording.message(row).endswith(
        "; inside TorchScript function scripted: its own lines are not visible to the profiler"
    )


@pytest.mark.parametrize("marker", [".git", "pyproject.toml", None])
def test_the_scripts_project_is_the_users_code(tmp_path: Path, marker: str | None) -> None:
    """A ``scripts/train.py`` that imports its project's ``src/mypkg/model.py``: with the
    project's root marked (a repository, a pyproject.toml), the model's own line is the
    first hotspot, as in the editor with the project open; without, the script's folder
    alone is the user's and the cost stays on the script's calling line."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "src" / "mypkg").mkdir(parents=True)
    (tmp_path / "src" / "mypkg" / "__init__.py").write_text("")
    model = tmp_path / "src" / "mypkg" / "model.py"
    model.write_text(
        "import torch\n\n\ndef heavy(x):\n    y = x @ x  # the model's hot line\n    return y.sum()\n"
    )
    train = tmp_path / "scripts" / "train.py"
    train.write_text(
        "import os\nimport sys\n\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\n"
        "import torch  # noqa: E402\nfrom mypkg.model import heavy  # noqa: E402\n\n"
        "x = torch.randn(300, 300)\nfor _ in range(60):\n    heavy(x)  # calls the package\n"
    )
    if marker == ".git":
        (tmp_path / ".git").mkdir()
    elif marker is not None:
        (tmp_path / marker).write_text("")
    elif project_root(str(train)) is not None:
        pytest.skip("the temporary folder lies inside a project (TMPDIR or --basetemp)")
    doc = run_typed(str(train), passes=("cpu",))
    first = ranking.hotspots(doc)[0]
    if marker is None:
        assert (first.file, first.line) == (str(train), 10), first
    else:
        assert (first.file, first.line, first.path) == (str(model), 5, "src/mypkg/model.py"), first
        assert doc.root == str(tmp_path)


def test_a_compiled_backward_is_not_charged_its_lazy_compilation() -> None:
    """torch compiles a compiled module's backward at its first ``.backward()``, inside
    that call's op (``entire_backward_compile``): left out of the op time as the forward's
    compilation is, taken off the op it ran in, and the backward's own ops stay on the line."""
    doc = run_typed("compiled_backward.py", passes=("cpu",))
    cpu = doc.pass_named("cpu")
    assert cpu is not None and cpu.status == "ok"
    assert any(n.startswith("torch.compile's own work in this pass, ") for n in cpu.notes), cpu.notes
    line = next(ln for ln in cpu.lines if ln.line == marker_line("compiled_backward.py"))
    names = {o.name for o in line.ops}
    assert "autograd::engine::evaluate_function: CompiledFunctionBackward" in names, names
    everywhere = [o for ln in cpu.lines for o in ln.ops] + list(
        cpu.unattributed.ops if cpu.unattributed else []
    )
    compiling = [
        o.name for o in everywhere if o.name == "entire_backward_compile" or "(dynamo_timed)" in o.name
    ]
    assert not compiling, compiling
    # the compiled runtime's own ranges are counted as ranges are: no self time of their own
    runtime = [o for o in everywhere if o.name.startswith("CompiledFunction")]
    assert runtime and all(o.self_cpu_us == 0 for o in runtime), runtime
    assert all(o.self_cpu_us >= 0 for o in everywhere), everywhere
    # nor is it the forward line's backward time ("backward costs X ms" on the line)
    total = sum(ln.self_cpu_us for ln in cpu.lines) + (
        cpu.unattributed.self_cpu_us if cpu.unattributed else 0
    )
    linked = sum(f.backward_cpu_us for ln in cpu.lines for f in ln.forward_lines)
    assert 0 < linked <= total, (linked, total)


def test_the_project_is_named_as_the_scripts_path_names_it(tmp_path: Path) -> None:
    """Through a link (``/tmp`` on macOS is one): the project root in the script's own form,
    so that it contains the script as given and the paths are relative to it."""
    real = tmp_path / "real"
    (real / "proj" / "scripts").mkdir(parents=True)
    (real / "proj" / "pyproject.toml").write_text("")
    (real / "proj" / "scripts" / "train.py").write_text("")
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    assert project_root(str(alias / "proj" / "scripts" / "train.py")) == str(alias / "proj")
    assert project_root(str(real / "proj" / "scripts" / "train.py")) == str(real / "proj")
    # a link to a script in another project: that project, through the link's target
    elsewhere = tmp_path / "loose"
    elsewhere.mkdir()
    (elsewhere / "train.py").symlink_to(real / "proj" / "scripts" / "train.py")
    if project_root(str(tmp_path / "x.py")) is None:  # (a temporary folder inside a project finds it first)
        assert project_root(str(elsewhere / "train.py")) == str(real / "proj")


def test_with_the_python_tracer_compile_ranges_take_nothing_off_the_ops() -> None:
    """With the Python tracer (``--no-exact-lines``, the cuda pass) torch closes a range
    opened from Python when the call that opened it returns: torch.compile's ranges hold
    none of its ops then, which stay where they ran. Nothing is taken off the op the
    backward compiled in (its self time went negative), and no note says it was."""
    doc = run_typed("compiled_backward.py", passes=("cpu",), exact_lines=False)
    cpu = doc.pass_named("cpu")
    assert cpu is not None and cpu.status == "ok"
    everywhere = [o for ln in cpu.lines for o in ln.ops] + list(
        cpu.unattributed.ops if cpu.unattributed else []
    )
    assert all(o.self_cpu_us >= 0 for o in everywhere), [o for o in everywhere if o.self_cpu_us < 0]
    assert all(ln.self_cpu_us >= 0 for ln in cpu.lines), cpu.lines
    shares = sum(ln.cpu_share for ln in cpu.lines) + (cpu.unattributed.cpu_share if cpu.unattributed else 0)
    assert shares <= 1.001, shares
    assert not any(n.startswith("torch.compile's own work in this pass, ") for n in cpu.notes), cpu.notes
