"""Run as ``python -m modpkg.sub.entry`` (a relative import: not runnable as a file)."""

import json
import os
import sys

import torch

from ..helpers import heavy

data = sys.stdin.read()
view = {"argv": sys.argv, "path0": sys.path[0], "name": __name__, "package": __package__}
view.update({"spec": __spec__.name, "cwd": os.getcwd(), "stdin": data})
print("INTROSPECT " + json.dumps(view))
if "--fail" in sys.argv:
    raise RuntimeError("asked to fail")
x = torch.randn(300, 300)
for _ in range(80):
    y = heavy(x)
