import json
import os
import sys

data = sys.stdin.read()
print(
    "INTROSPECT "
    + json.dumps(
        {
            "argv": sys.argv,
            "pid": os.getpid(),
            "path0": sys.path[0],
            "name": __name__,
            "cwd": os.getcwd(),
            "stdin": data,
            "pythonpath": os.environ.get("PYTHONPATH"),
            "nvml_check": os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK"),
            "path": sys.path,
        }
    )
)
