"""A pure Python loop whose body ends in an ``if``: on Python 3.11 the jump back to the
loop's head has no line number, and the sampler's timer is handled exactly there."""

import torch  # noqa: F401  (the runner imports torch first, as for any script)


def train() -> int:
    x = 0
    for i in range(3_000_000):  # HOT
        x = x + i
        if i % 1000 == 0:
            x = x - 1
    return x


train()
