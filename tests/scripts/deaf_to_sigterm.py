# Ignores SIGTERM (as a script that traps it would), checks that it sees its own setting,
# and that a forked child inherits it, then loops for ever. argv[1] == "block": SIGTERM is
# blocked instead, so that no handler of anyone's runs.
import os
import signal
import sys

import torch

if sys.argv[1:] == ["block"]:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
else:
    assert signal.signal(signal.SIGTERM, signal.SIG_IGN) is signal.SIG_DFL
    print("script sees its SIG_IGN:", signal.getsignal(signal.SIGTERM) is signal.SIG_IGN, flush=True)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN else 3)
    print("child kept it:", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, flush=True)
x = torch.randn(200, 200)
while True:
    y = x @ x  # HOT
