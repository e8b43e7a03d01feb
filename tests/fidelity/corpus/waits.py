"""A line that waits (sleeps): wall time and CPU time disagree there, and both columns must
be right: the sleep takes most of the wall time and no op CPU time."""
import time

import torch

x = torch.randn(400, 400)
for _ in range(15):
    y = x @ x  # PLANT:work
    time.sleep(0.02)  # PLANT:sleep
