import signal
import time

import torch

fired = []
signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
signal.setitimer(signal.ITIMER_REAL, 0.05)
x = torch.randn(300, 300)
deadline = time.time() + 2
while not fired and time.time() < deadline:
    y = x @ x
print("alarm fired" if fired else "alarm lost")
assert signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL
