"""Every setting, declared once: its name (the field; ``key`` in JSON), kind (type and
bounds), default, what it does, whether a ``bottleneck.profile`` request may give it, and
the command line's option for it.

The language server reads these from initializationOptions and
workspace/didChangeConfiguration (``merge``) and lays a request's values over them
(``overlay``, as ruff's server lays a request's options over its settings). The command
line's options and the VS Code extension's package.json are checked against this
declaration by tests (tests/unit/settings/test_declared.py)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..analysis.ranking import Thresholds
from ..job.spec import MAX_NPROC_PER_NODE, JobSpec
from . import kinds
from .kinds import Kind

_THRESHOLDS = Thresholds()  # the defaults live there, and in JobSpec
_JOB = JobSpec(script="")
_ABOUT = "about"


@dataclass(frozen=True)
class About:
    """A setting's declaration besides its field's name, type and default."""

    key: str  # its name in JSON (camelCase)
    kind: Kind
    doc: str
    request: bool = False  # a bottleneck.profile argument too (per workspace folder in VS Code)
    flag: str | None = None  # the command line's option, where it has one
    aliases: tuple[str, ...] = ()  # other JSON names it is read under


def _setting(default: Any, key: str, kind: Kind, doc: str, **more: Any) -> Any:
    return field(default=default, metadata={_ABOUT: About(key, kind, doc, **more)})


@dataclass(frozen=True)
class Settings:
    """Every setting, with its default."""

    python: str = _setting(
        sys.executable,
        "python",
        kinds.Text(),
        "the interpreter the script runs in (default: the server's)",
        request=True,
        flag="--python",
        aliases=("interpreter",),
    )
    args: tuple[str, ...] = _setting((), "args", kinds.Strings(), "the script's arguments", request=True)
    cwd: str | None = _setting(
        None,
        "cwd",
        kinds.Folder(),
        "the script's working directory (default: the workspace folder holding it, else its folder)",
        request=True,
        flag="--cwd",
    )
    passes: tuple[str, ...] | None = _setting(
        None,
        "passes",
        kinds.Passes(),
        "the passes to run (default: sample, cprofile, cpu, and cuda when a GPU is there)",
        request=True,
        flag="--passes",
    )
    timeout: float = _setting(
        600.0,
        "timeout",
        kinds.Positive(),
        "seconds per pass before it is stopped (the command line has none: an editor's job must end)",
        request=True,
        flag="--timeout",
    )
    duration: float | None = _setting(
        None,
        "duration",
        kinds.Seconds(),
        "seconds: stop each pass then and keep what it recorded (0: the whole run)",
        request=True,
        flag="--duration",
    )
    min_share: float = _setting(
        _THRESHOLDS.min_share,
        "minShare",
        kinds.Fraction(),
        "show every line at or above this share",
        flag="--min-share",
    )
    warning_share: float = _setting(
        _THRESHOLDS.warning_share,
        "warningShare",
        kinds.Fraction(),
        "a line at or above this share is a warning",
    )
    memory_share: float = _setting(
        _THRESHOLDS.min_memory_share,
        "memoryShare",
        kinds.Fraction(),
        "also show every line holding this share of the memory peak",
        flag="--min-memory-share",
    )
    top: int = _setting(
        _THRESHOLDS.top, "top", kinds.Count(), "show at least the N hottest lines", flag="--top"
    )
    code_lens: bool = _setting(True, "codeLens", kinds.Flag(), "a code lens above each hot line")
    exact_lines: bool = _setting(
        _JOB.exact_lines,
        "exactLines",
        kinds.Flag(),
        "ops on the exact line that called them (false: the line of the innermost frame of the user's files)",
        flag="--no-exact-lines",
    )
    separate_cprofile: bool = _setting(
        _JOB.separate_cprofile,
        "separateCProfile",
        kinds.Flag(),
        "cProfile always in a run of its own (default: in the cpu pass's run when it can)",
        flag="--separate-cprofile",
    )
    separate_runs: bool = _setting(
        _JOB.separate_runs,
        "separateRuns",
        kinds.Flag(),
        "run the script once per pass, as before one run (default: once, the cpu pass, cProfile and "
        "on a GPU the cuda pass recorded in windows of the sample pass's run)",
        flag="--separate-runs",
    )
    event_budget: int = _setting(
        _JOB.event_budget,
        "eventBudget",
        kinds.Count(),
        "torch calls the autograd pass records at most (0: no bound)",
        flag="--event-budget",
    )
    fork: bool = _setting(
        _JOB.fork,
        "fork",
        kinds.Flag(),
        "fork the passes from a fork server that imported torch once (false: a fresh interpreter each)",
        flag="--no-fork",
    )
    keep_warm: bool = _setting(
        True, "keepWarm", kinds.Flag(), "keep a fork server per interpreter between profiles"
    )
    warm_idle_minutes: float = _setting(
        15.0, "warmIdleMinutes", kinds.Positive(), "minutes a warm fork server waits unused before it ends"
    )
    nproc_per_node: int = _setting(
        _JOB.nproc_per_node,
        "nprocPerNode",
        kinds.Count(lowest=1, highest=MAX_NPROC_PER_NODE),
        "above 1: a distributed job of this many processes, started by torchrun",
        request=True,
        flag="--nproc-per-node",
    )
    torchrun_args: tuple[str, ...] = _setting(
        _JOB.launcher,
        "torchrunArgs",
        kinds.TorchrunOptions(),
        "torchrun's options for a distributed job (default: --standalone)",
        request=True,
    )
    collective_sizes: bool = _setting(
        _JOB.collective_sizes,
        "collectiveSizes",
        kinds.Flag(),
        "a distributed job's bytes per collective",
        request=True,
        flag="--collective-sizes",
    )
    problems: tuple[str, ...] = field(default=(), compare=False)  # what the last merge refused

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(
            min_share=self.min_share,
            top=self.top,
            warning_share=self.warning_share,
            min_memory_share=self.memory_share,
        )


def declared() -> dict[str, About]:
    """Each setting's field name -> its declaration, in the order declared."""
    return {f.name: f.metadata[_ABOUT] for f in fields(Settings) if _ABOUT in f.metadata}


_BY_KEY = {
    name: (field_name, about)
    for field_name, about in declared().items()
    for name in (about.key, *about.aliases)
}

# Beside the settings in initializationOptions: the connection's token (``lsp.auth.Gate`` reads it).
NOT_A_SETTING = "token"


def merge(current: Settings, raw: Any) -> Settings:
    """A settings object laid over ``current``; unknown keys and bad values are named in
    ``problems``, not fatal. Accepts ``{"bottleneck": {...}}`` or the inner object itself."""
    if isinstance(raw, dict) and isinstance(raw.get("bottleneck"), dict):
        raw = raw["bottleneck"]
    if raw is None:
        return current
    if not isinstance(raw, dict):
        return replace(current, problems=(f"settings must be an object, got {type(raw).__name__}",))
    changes: dict[str, Any] = {}
    problems = []
    for key, value in raw.items():
        if key == NOT_A_SETTING:
            continue
        found = _BY_KEY.get(key)
        if found is None:
            problems.append(f"unknown setting {key!r}")
            continue
        name, about = found
        try:
            changes[name] = about.kind.convert(value)
        except ValueError as exc:
            problems.append(f"setting {key!r}: {exc}")
    return replace(current, **changes, problems=tuple(problems))


_REQUEST_KEYS = {about.key: (name, about) for name, about in declared().items() if about.request}


def request_keys() -> dict[str, tuple[str, About]]:
    """The settings a request may give: JSON key -> (field name, declaration). Read from
    the declaration once, at import (every profile request's arguments are checked by it)."""
    return _REQUEST_KEYS


def overlay(current: Settings, given: dict[str, Any]) -> Settings:
    """A request's values (JSON keys, of the right JSON types: ``lsp.arguments`` checked
    them) laid over the settings; null, and an empty value its kind leaves unset, keep the
    setting. Their bounds are the job's to check (``job.spec.validate``)."""
    keys = _REQUEST_KEYS
    changes = {}
    for key, value in given.items():
        if value is None:
            continue
        name, about = keys[key]
        shaped = about.kind.override(value)
        if shaped is not kinds.UNSET:
            changes[name] = shaped
    return replace(current, **changes)
