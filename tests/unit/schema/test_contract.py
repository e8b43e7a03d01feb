"""The runner's command line round-trips: what a job asks (``RunnerArgs.options``) is what the
runner reads (``RunnerArgs.parse``), every field away from its default."""

from __future__ import annotations

import dataclasses

from bottleneck_lsp.schema.contract import RunnerArgs


def test_every_field_survives_the_runners_command_line() -> None:
    asked = RunnerArgs(
        pass_name="cpu",
        script="/w/train.py",
        out="/tmp/job/cpu.json",
        cwd="/w",
        module="pkg.train",
        argv0="train",
        roots=["/w", "/lib"],
        strip_path="/tmp/job",
        environment=True,
        exact_lines=False,
        count_entries=False,
        with_cprofile=True,
        compiler_stack=True,
        inductor=True,
        event_budget=1234,
        memory=True,
        save_raw="/tmp/raw",
        wait_fd=7,
        per_rank=True,
        shapes=True,
        windows=True,
        args=["--epochs", "3", "--", "-x"],
    )
    defaults = RunnerArgs(pass_name="sample", script="", out="", cwd="")
    differ = {
        f.name for f in dataclasses.fields(RunnerArgs) if getattr(asked, f.name) != getattr(defaults, f.name)
    }
    # every field but compiler_stack (its other value drops inductor: the next case) is asked
    assert differ == {f.name for f in dataclasses.fields(RunnerArgs)} - {"compiler_stack"}
    assert RunnerArgs.parse(asked.options()) == asked
    lazy = dataclasses.replace(asked, compiler_stack=False, inductor=False)
    assert RunnerArgs.parse(lazy.options()) == lazy
