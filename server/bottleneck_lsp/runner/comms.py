"""How many bytes a collective op sends, from the input shapes the profiler records.

With ``record_shapes`` the event tree's dispatcher ops (``c10d::allreduce_``, ...) carry their
inputs: lists of tensor metadata (sizes and dtype). The message is the tensors the rank
contributes: the first argument for most ops, the second for those whose first is the
output (gather, scatter, all-to-all). gloo records no ``record_param_comms`` event on torch
2.13, so the dispatcher op is where the size is.

Standard library only (the runner imports it).
"""

from __future__ import annotations

from typing import Any

_OUTPUT_FIRST = ("gather", "scatter", "alltoall")


def message_bytes(name: str, fields: Any) -> int:
    """Bytes of a ``c10d::`` op's message; 0 when its inputs were not recorded."""
    try:
        inputs = list(fields.inputs)
    except Exception:  # noqa: BLE001 - no inputs recorded (record_shapes off) or none at all
        return 0
    index = 1 if any(word in name for word in _OUTPUT_FIRST) else 0
    return _tensor_bytes(inputs[index]) if index < len(inputs) else 0


def _tensor_bytes(value: Any) -> int:
    if isinstance(value, (list, tuple)):
        return sum(_tensor_bytes(v) for v in value)
    sizes = getattr(value, "sizes", None)
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", 0)
    if sizes is None or not isinstance(itemsize, int):
        return 0
    count = 1
    for size in sizes:
        count *= int(size)
    return count * itemsize
