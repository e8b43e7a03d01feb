"""The script's torch.distributed process groups, kept alive until the runner's process ends.

Why (issue 44): gloo runs each collective on a worker thread of its process group, and the
work item keeps a copy of the issuing thread's torch thread-local state. That state can hold
Python objects: autograd's ``_engine_run_backward`` stashes a ``contextvars`` context there
for every backward (DDP's all-reduces are issued inside it), and in the cpu and cuda passes
the line marker, a ``TorchFunctionMode``, is on the mode stack there. The worker thread that
drops the last copy needs the GIL to release those objects. Freeing the process group (from
DDP's reducer as the script's ``main()`` returns, or from ``destroy_process_group()``) joins
that worker thread while holding the GIL: when the worker is still dropping the last work
item, neither moves again. The stacks, taken in a rank that hung: the main thread in
``ProcessGroupGloo::~ProcessGroupGloo`` (``std::thread::join``) under ``Reducer::~Reducer``;
gloo's ``runLoop`` in ``gil_scoped_acquire`` under ``ThreadLocalState::~ThreadLocalState``.
A plain run hands the GIL over in time (0 of 15 runs hung here); a profiled run keeps it
longer in the main thread (the sampler's looks, the marker's handler), and 2-5 runs in 10
hung, in every pass.

So a process group the script destroys is kept here: ``destroy_process_group`` still shuts
it down (gloo's shutdown does nothing; NCCL's aborts its communicators), but its memory and
threads stay until the runner ends its process with ``os._exit`` (``__main__._quick_exit``),
which runs no destructor: no join ever waits for the GIL. A group the script never destroys
stays in torch's own registry until then, as without us.

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import functools
from typing import Any

KEPT: list[Any] = []  # the groups the script destroyed, for the process's life


def keep_destroyed_groups(torch: Any) -> bool:
    """Wrap ``torch.distributed.destroy_process_group`` (both names the script may call it
    by) so that the groups it destroys stay referenced here. False where torch has no
    distributed package, or not the function (a feature, not a version)."""
    try:
        if not torch.distributed.is_available():
            return False
        import torch.distributed as dist
        from torch.distributed import distributed_c10d as c10d
    except (ImportError, AttributeError):
        return False
    original = getattr(c10d, "destroy_process_group", None)
    if original is None or getattr(original, "_bottleneck_keeps", False):
        return False

    @functools.wraps(original)
    def destroy_process_group(group: Any = None) -> Any:
        KEPT.extend(_groups_destroyed(c10d, group))
        return original(group)

    destroy_process_group._bottleneck_keeps = True  # type: ignore[attr-defined]
    c10d.destroy_process_group = destroy_process_group
    if getattr(dist, "destroy_process_group", None) is original:
        dist.destroy_process_group = destroy_process_group
    return True


def _groups_destroyed(c10d: Any, group: Any) -> list[Any]:
    """What ``destroy_process_group(group)`` will destroy: that group, or with None (or the
    world) every registered group."""
    world = getattr(getattr(c10d, "GroupMember", None), "WORLD", None)
    if group is not None and group is not world:
        return [group]
    registry = getattr(getattr(c10d, "_world", None), "pg_map", None) or {}
    found = list(registry)
    if world is not None and world not in found:
        found.append(world)
    return found
