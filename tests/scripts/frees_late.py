"""Locals whose frames end while the sampler looks: each records the thread that freed it.
A tiny switch interval hands the GIL over at nearly every call, so the main thread often
returns from ``work`` in the middle of a look. Writes the threads' names to ``sys.argv[1]``."""

import json
import sys
import threading
import time


class Witness:
    freed_in: set[str] = set()

    def __del__(self) -> None:
        Witness.freed_in.add(threading.current_thread().name)


def work() -> int:
    witness = Witness()  # noqa: F841 - freed when this frame ends
    return sum(range(300))  # a C call: the sampler's thread looks here


sys.setswitchinterval(1e-6)
end = time.perf_counter() + 1.5
calls = 0
while time.perf_counter() < end:
    work()
    calls += 1
sys.setswitchinterval(0.005)
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump({"calls": calls, "freed_in": sorted(Witness.freed_in)}, out)
