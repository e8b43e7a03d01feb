"""torch's autograd profiler as the passes configure it, by feature rather than version.

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

from typing import Any

from . import kinetolog


def _accepts(func: Any, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _every_thread_config(torch: Any) -> Any:
    """torch's profiler configuration that records every thread's ops (a feature check:
    ``profile_all_threads``, torch 2.6 and later), or None."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        return _ExperimentalConfig(profile_all_threads=True)
    except (ImportError, TypeError, AttributeError):
        return None


def records_every_thread(torch: Any) -> bool:
    """Whether this torch's autograd profiler can record the ops of every thread."""
    return _every_thread_config(torch) is not None and _accepts(
        torch.autograd.profiler.profile, "experimental_config"
    )


def make_profiler(
    torch: Any,
    with_stack: bool,
    device: str | None,
    cpu: bool = True,
    memory: bool = False,
    shapes: bool = False,
    every_thread: bool = False,
) -> tuple[Any, str]:
    """torch's autograd profiler, by feature rather than version: with a device, CUPTI
    kernel events need Kineto (``use_kineto=True``; its default, False, selects a GPU
    fallback that records no kernel at all, measured on an H200 with torch 2.11).
    ``every_thread`` (where ``records_every_thread``): the ops of the threads the script
    starts too; by default torch records the starting thread's and autograd's only."""
    profile = torch.autograd.profiler.profile
    kwargs: dict[str, Any] = {"with_stack": with_stack}
    if memory:
        kwargs["profile_memory"] = True  # allocation events, charged to lines (memory.py)
    if shapes:
        kwargs["record_shapes"] = True
    described_extra = ""
    if every_thread:
        kwargs["experimental_config"] = _every_thread_config(torch)
        described_extra = ", experimental_config=_ExperimentalConfig(profile_all_threads=True)"
    if device is not None:
        kwargs["use_device"] = device
        if _accepts(profile, "use_kineto"):
            kwargs["use_kineto"] = True
        if not cpu and _accepts(profile, "use_cpu"):
            kwargs["use_cpu"] = False
    described = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "experimental_config")
    described += described_extra
    # kineto's start and stop lines kept out of the script's stderr (kinetolog.py)
    return kinetolog.Quiet(profile(**kwargs)), f"torch.autograd.profiler.profile({described})"
