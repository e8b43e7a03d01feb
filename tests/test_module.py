"""``-m MODULE``: a module of the user's runs as ``python -m MODULE args`` runs it (its
package, relative imports and all), and its hot lines are named in the package's files."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from bottleneck_lsp.job.job import Job
from bottleneck_lsp.job.spec import JobError, JobSpec
from helpers import SCRIPTS, typed

CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")
ENTRY = "modpkg.sub.entry"
ENTRY_FILE = SCRIPTS / "modpkg" / "sub" / "entry.py"
HELPERS_FILE = SCRIPTS / "modpkg" / "helpers.py"


def seen(stdout: str) -> dict[str, Any]:
    line = next(line for line in stdout.splitlines() if line.startswith("INTROSPECT "))
    return json.loads(line[len("INTROSPECT ") :])


def run_module(module: str, *args: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("python", sys.executable)
    spec.setdefault("cwd", str(SCRIPTS))
    doc = asyncio.run(Job(JobSpec(script="", module=module, args=args, **spec)).run())
    return typed(doc.to_json())


def hot_line(path: Any) -> int:
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.endswith("# HOT"))


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
def test_a_module_sees_what_python_dash_m_gives_it(fork: bool) -> None:
    """Compared with the real thing: ``python -m`` run in the same folder."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    real = subprocess.run(
        [sys.executable, "-m", ENTRY, "a", "b c"],
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=120,
    )
    assert real.returncode == 0, real.stderr
    doc = run_module(ENTRY, "a", "b c", passes=("cprofile",), fork=fork)
    assert doc["module"] == ENTRY and doc["script"] == str(ENTRY_FILE)
    assert str(SCRIPTS) in doc["roots"]  # the whole package: the user's code
    # ... and its project's (this repository), whose root the document's paths are relative to
    assert doc["root"] == str(SCRIPTS.parent.parent) and doc["root"] in doc["roots"]
    part = doc["passes"][0]
    assert part["status"] == "ok" and part["warm"] is fork
    ours = seen(part["output_tail"]["stdout"])
    assert ours == seen(real.stdout)
    assert ours["argv"] == [str(ENTRY_FILE), "a", "b c"] and ours["package"] == "modpkg.sub"


def test_the_cli_names_the_hot_line_in_the_modules_package() -> None:
    done = subprocess.run(
        [CLI, "profile", "-m", ENTRY, "--steps", "3"],
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--steps" in done.stderr  # the module's own argument: its output goes to stderr
    first = next(line for line in done.stdout.splitlines() if ": warning: " in line or ": note: " in line)
    assert first.startswith(f"modpkg/helpers.py:{hot_line(HELPERS_FILE)}:"), first
    assert "% of wall time" in first and "aten::mm" in first


def test_a_package_runs_its_main() -> None:
    doc = run_module("modpkg", passes=("cprofile",))
    assert doc["script"] == str(SCRIPTS / "modpkg" / "__main__.py")
    assert seen(doc["passes"][0]["output_tail"]["stdout"]) == {"main": True}


def test_a_module_that_raises_is_located_in_its_file_without_runpys_frames() -> None:
    doc = run_module(ENTRY, "--fail", passes=("cprofile",))
    error = doc["passes"][0]["error"]
    assert doc["exit_code"] == 1 and error["type"] == "RuntimeError"
    assert error["file"] == str(ENTRY_FILE)
    assert (
        ENTRY_FILE.read_text().splitlines()[error["line"] - 1].strip()
        == 'raise RuntimeError("asked to fail")'
    )
    assert "runpy" not in error["traceback"] and "bottleneck_lsp" not in error["traceback"]


@pytest.mark.parametrize(
    ("module", "message"),
    [
        (
            "modpkg.nope",
            "Module not found: modpkg.nope (looked for modpkg/nope.py and modpkg/nope/__main__.py in ",
        ),
        ("modpkg.sub", "modpkg.sub is a package with no __main__.py"),
        ("modpkg/sub/entry.py", "Not a module name: 'modpkg/sub/entry.py'"),
        ("json", "Module not found: json"),  # installed modules are not the user's code
    ],
)
def test_a_module_that_cannot_run_is_refused_before_anything_runs(module: str, message: str) -> None:
    with pytest.raises(JobError) as caught:
        Job(JobSpec(script="", module=module, cwd=str(SCRIPTS)))
    assert message in str(caught.value)
    done = subprocess.run(
        [CLI, "profile", "-m", module], cwd=SCRIPTS, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and f"bottleneck-lsp: error: {message}" in done.stderr
    assert done.stdout == ""


def test_pythonpath_is_searched_after_the_working_directory(tmp_path: Any) -> None:
    env = {**os.environ, "PYTHONPATH": str(SCRIPTS)}
    done = subprocess.run(
        [CLI, "profile", "--passes", "cprofile", "--format", "json", "-m", ENTRY],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert doc["script"] == str(ENTRY_FILE) and doc["cwd"] == str(tmp_path)
    assert seen(doc["passes"][0]["output_tail"]["stdout"])["path0"] == str(tmp_path)


def test_neither_a_script_nor_a_module_is_a_usage_error() -> None:
    for args, message in (
        ([], "give the script to profile (or -m MODULE)"),
        (["-m"], "-m needs a module name"),
    ):
        done = subprocess.run([CLI, "profile", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and message in done.stderr


def test_sarif_gives_the_command_line_that_ran() -> None:
    done = subprocess.run(
        [CLI, "profile", "--passes", "cprofile", "--format", "sarif", "-m", ENTRY, "x"],
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads(done.stdout)["runs"][0]
    assert run["invocations"][0]["commandLine"] == f"python -m {ENTRY} x"


def test_a_package_file_run_as_a_file_is_told_how_to_run_as_a_module(tmp_path: Any) -> None:
    """As a file, Python stops at the relative import: the report says what to run."""
    done = subprocess.run(
        [CLI, "profile", "--passes", "cprofile", str(ENTRY_FILE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert "ImportError: attempted relative import with no known parent package" in done.stdout
    hint = f"profile it as a module, `bottleneck-lsp profile --cwd {SCRIPTS} -m {ENTRY}`."
    assert hint in done.stdout, done.stdout[-2000:]


def test_the_file_found_is_the_one_python_dash_m_runs(tmp_path: Any) -> None:
    """Where a package and a module share a name, Python's import system decides: a regular
    package, then a module, then a namespace package. Each candidate prints its own path."""
    from bottleneck_lsp.paths.module_path import find_module_file

    files = ["a/__init__.py", "a/b/__init__.py", "a/b/__main__.py", "a/b.py", "ns/__main__.py", "ns.py"]
    for name in files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("print(__file__)\n" if name.endswith(("__main__.py", "b.py", "ns.py")) else "")
    for module in ("a.b", "ns"):
        real = subprocess.run(
            [sys.executable, "-m", module], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert real.returncode == 0, real.stderr
        assert find_module_file(module, [str(tmp_path)]).file == real.stdout.strip()


def test_a_missing_working_directory_is_refused_for_a_module_and_a_script(tmp_path: Any) -> None:
    gone = str(tmp_path / "gone")
    for spec in (JobSpec(script="", module=ENTRY, cwd=gone), JobSpec(script=str(ENTRY_FILE), cwd=gone)):
        with pytest.raises(JobError, match=r"Working directory not found: .*gone"):
            Job(spec)


@pytest.mark.parametrize(
    "tail",
    [("--", "--a"), ("x", "--", "-h", "y"), ("--",)],
    ids=["dashes-first", "dashes-inside", "dashes-alone"],
)
def test_arguments_with_dashes_reach_the_script_and_the_module_as_python_passes_them(
    tail: tuple[str, ...],
) -> None:
    """argparse drops a ``--`` right after the script and ends ``-m``'s arguments at one;
    python passes every argument on as it is, and so do we, both ways of calling us."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def real(*target: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, *target, *tail],
            cwd=SCRIPTS,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return list(seen(done.stdout)["argv"][1:])

    def ours(*command: str) -> list[str]:
        """``command`` (ours, up to the script or module) with our options, then the tail."""
        *prefix, kind, target = command if command[-2] == "-m" else (*command[:-1], "", command[-1])
        where = ["-m", target] if kind == "-m" else [target]
        done = subprocess.run(
            [*prefix, "--passes", "cprofile", "--format", "json", *where, *tail],
            cwd=SCRIPTS,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        stdout = json.loads(done.stdout)["passes"][0]["output_tail"]["stdout"]
        return list(seen(stdout)["argv"][1:])

    script = str(SCRIPTS / "introspect.py")
    assert real(script) == list(tail)
    assert ours(CLI, "profile", script) == list(tail)
    assert ours(sys.executable, "-m", "bottleneck_lsp", script) == list(tail)
    assert ours(CLI, "profile", "-m", ENTRY) == real("-m", ENTRY) == list(tail)
