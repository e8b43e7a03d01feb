"""A pure Python loop whose body ends in an ``if``: on Python 3.11 the jump back to the
loop's head has no line number, and the sampler's timer is handled exactly there; on 3.10
the ``if``'s jump, taken straight to the jump back, is where it is handled."""

import torch  # noqa: F401  (the runner imports torch first, as for any script)


def train() -> int:
    x = 0
    for i in range(3_000_000):  # HOT
        x = x + i
        if i % 1000 == 0:
            x = x - 1
    return x


train()
