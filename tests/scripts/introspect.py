import json
import os
import sys

data = sys.stdin.read()
print(
    "INTROSPECT "
    + json.dumps(
        {
            "argv": sys.argv,
            "path0": sys.path[0],
            "name": __name__,
            "cwd": os.getcwd(),
            "stdin": data,
            "pythonpath": os.environ.get("PYTHONPATH"),
            "path": sys.path,
        }
    )
)
