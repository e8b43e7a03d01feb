"""Server settings, from initializationOptions and workspace/didChangeConfiguration."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..analysis.ranking import Thresholds
from ..job.spec import MAX_NPROC_PER_NODE, JobSpec
from ..schema.contract import PASSES, unknown_passes
from ..schema.torchrun_options import LaunchError, check_options

_THRESHOLDS = Thresholds()  # the defaults live there, and in JobSpec
_JOB = JobSpec(script="")


@dataclass(frozen=True)
class Settings:
    """Every setting, with its default. Keys in JSON use camelCase (``minShare``)."""

    python: str = sys.executable  # the interpreter the profiled script runs in
    args: tuple[str, ...] = ()  # default script arguments
    cwd: str | None = None  # default: the workspace folder holding the script, else its folder
    passes: tuple[str, ...] | None = None  # None: sample, cprofile, cpu, and cuda when available
    timeout: float = 600.0  # seconds per pass (the CLI has none: an editor's job must end)
    duration: float | None = None  # seconds: stop each pass then, keep what it recorded (0/None: whole run)
    min_share: float = _THRESHOLDS.min_share
    warning_share: float = _THRESHOLDS.warning_share
    memory_share: float = _THRESHOLDS.min_memory_share
    top: int = _THRESHOLDS.top
    code_lens: bool = True
    exact_lines: bool = _JOB.exact_lines
    separate_cprofile: bool = _JOB.separate_cprofile  # cProfile always in a run of its own
    event_budget: int = _JOB.event_budget
    fork: bool = _JOB.fork  # fork the passes from a fork server (False: --no-fork's fresh interpreters)
    keep_warm: bool = True  # keep a fork server per interpreter between profiles (lsp/warm.py)
    warm_idle_minutes: float = 15.0  # ... until it has been idle this long
    nproc_per_node: int = _JOB.nproc_per_node  # above 1: a torchrun job (the CLI's --nproc-per-node)
    torchrun_args: tuple[str, ...] = _JOB.launcher  # torchrun options (the CLI's TORCHRUN-ARGS)
    collective_sizes: bool = _JOB.collective_sizes  # a distributed job's bytes per collective
    problems: tuple[str, ...] = field(default=(), compare=False)

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(
            min_share=self.min_share,
            top=self.top,
            warning_share=self.warning_share,
            min_memory_share=self.memory_share,
        )


# Beside the settings in initializationOptions: the connection's token (``auth.Gate`` reads it).
NOT_A_SETTING = "token"

_KEYS = {
    "python": "python",
    "interpreter": "python",
    "args": "args",
    "cwd": "cwd",
    "passes": "passes",
    "timeout": "timeout",
    "duration": "duration",
    "minShare": "min_share",
    "warningShare": "warning_share",
    "memoryShare": "memory_share",
    "top": "top",
    "codeLens": "code_lens",
    "exactLines": "exact_lines",
    "separateCProfile": "separate_cprofile",
    "eventBudget": "event_budget",
    "fork": "fork",
    "keepWarm": "keep_warm",
    "warmIdleMinutes": "warm_idle_minutes",
    "nprocPerNode": "nproc_per_node",
    "torchrunArgs": "torchrun_args",
    "collectiveSizes": "collective_sizes",
}


def _duration(value: Any) -> float | None:
    """``duration``: seconds per pass, or 0 or null for the whole run."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("expected seconds (a positive number), or 0 for the whole run")
    return float(value) or None


def _convert(name: str, value: Any) -> Any:
    if name in ("python",):
        if not isinstance(value, str) or not value:
            raise ValueError("expected a non-empty string")
        return value
    if name == "cwd":
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise ValueError("expected a string")
        return value
    if name == "args":
        if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
            raise ValueError("expected a list of strings")
        return tuple(value)
    if name == "torchrun_args":
        try:
            return check_options(_convert("args", value))
        except LaunchError as exc:
            raise ValueError(str(exc)) from None
    if name == "passes":
        if value is None or value == []:
            return None
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise ValueError(f"expected a list among {', '.join(PASSES)}")
        problem = unknown_passes(value)
        if problem:
            raise ValueError(problem)
        return tuple(value)
    if name == "duration":
        return _duration(value)
    if name in ("timeout", "warm_idle_minutes"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError("expected a positive number")
        return float(value)
    if name in ("min_share", "warning_share", "memory_share"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError("expected a fraction between 0 and 1")
        return float(value)
    if name == "nproc_per_node":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_NPROC_PER_NODE:
            raise ValueError(f"expected a whole number from 1 to {MAX_NPROC_PER_NODE}")
        return value
    if name in ("top", "event_budget"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError("expected a non-negative integer")
        return value
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def merge(current: Settings, raw: Any) -> Settings:
    """Apply a settings object; unknown keys and bad values are reported, not fatal.

    Accepts ``{"bottleneck": {...}}`` or the inner object itself.
    """
    if isinstance(raw, dict) and isinstance(raw.get("bottleneck"), dict):
        raw = raw["bottleneck"]
    if raw is None:
        return current
    if not isinstance(raw, dict):
        return replace(current, problems=(f"settings must be an object, got {type(raw).__name__}",))
    changes: dict[str, Any] = {}
    problems = []
    known = {f.name for f in fields(Settings)}
    for key, value in raw.items():
        if key == NOT_A_SETTING:
            continue
        name = _KEYS.get(key)
        if name is None or name not in known:
            problems.append(f"unknown setting {key!r}")
            continue
        try:
            changes[name] = _convert(name, value)
        except ValueError as exc:
            problems.append(f"setting {key!r}: {exc}")
    return replace(current, **changes, problems=tuple(problems))
