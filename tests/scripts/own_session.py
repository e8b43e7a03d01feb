# Starts a process in a session of its own (out of the runner's process group), and one in
# the group, prints their pids, then ends (argv[1] == "end") or loops for ever.
import subprocess
import sys
import time

import torch

away = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
near = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(f"SESSION {away.pid} GROUP {near.pid}", flush=True)
x = torch.randn(100, 100)
end = time.monotonic() + 1.0
while sys.argv[1:] != ["end"] or time.monotonic() < end:
    y = x @ x  # HOT
