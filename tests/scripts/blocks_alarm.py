"""Blocks SIGALRM, the sample pass's timer, then runs pure Python: no tick reaches the
script, and the sampler's thread does not charge Python while the timer is on."""

import signal

import torch  # noqa: F401  (the runner imports torch first, as for any script)

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
x = 0
for i in range(3_000_000):  # HOT
    x += i
