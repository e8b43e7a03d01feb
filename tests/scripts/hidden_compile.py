"""Calls torch.compile where the guess cannot see the call (no ``.compile`` attribute in this
file): the compiler stack is guessed (the word is here), inductor's code generator is not, so
torch imports it at this script's build line, in the middle of the run, and the runner sets
that import aside. With an argument, the dynamo backend to compile with (``eager`` imports no
code generator)."""

import sys

import torch

# what the pass's process had loaded before the script's first line
print("PRELOADED", "torch._dynamo" in sys.modules, "torch._inductor.compile_fx" in sys.modules, flush=True)
build = getattr(torch, "com" + "pile")
backend = {"backend": sys.argv[1]} if len(sys.argv) > 1 else {}
step = build(torch.nn.Linear(4, 4), **backend)  # LOADS
x = torch.randn(300, 300)
for _ in range(300):
    y = (x @ x).relu()  # HOT
