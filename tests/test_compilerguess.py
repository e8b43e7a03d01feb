"""The guess, before any pass, of whether a script will load torch's compiler stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bottleneck_lsp.compilerguess import needs_compiler_stack


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder / "main.py"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"main.py": "import torch\nx = torch.ones(3)\nprint(x.sum())\n"}, False),
        ({"main.py": "import torch, math, os\nfrom torch.utils.data import DataLoader\n"}, False),
        ({"main.py": "import torch\nopt = torch.optim.SGD([], lr=0.1)\n"}, True),
        ({"main.py": "from torch import optim\n"}, True),
        ({"main.py": "import torch\nf = torch.compile(lambda x: x)\n"}, True),
        ({"main.py": "from torch.func import grad\n"}, True),
        ({"main.py": "import torch.utils.checkpoint\n"}, True),
        # a third-party package may build an optimizer inside: assumed to
        ({"main.py": "import torch\nimport some_trainer_lib\n"}, True),
        # the user's own modules are read, through plain, from- and relative imports
        (
            {"main.py": "import helpers\nhelpers.go()\n", "helpers.py": "import torch\ndef go(): pass\n"},
            False,
        ),
        ({"main.py": "import helpers\n", "helpers.py": "import torch\nopt = torch.optim.Adam\n"}, True),
        (
            {
                "main.py": "from pkg import model\n",
                "pkg/__init__.py": "",
                "pkg/model.py": "from . import train\n",
                "pkg/train.py": "import torch.optim\n",
            },
            True,
        ),
        (
            {
                "main.py": "from pkg.model import Net\n",
                "pkg/__init__.py": "",
                "pkg/model.py": "import torch\n",
            },
            False,
        ),
        ({"main.py": "import torch\ndef broken(:\n"}, True),  # cannot tell
    ],
)
def test_the_guess(tmp_path: Path, files: dict[str, str], expected: bool) -> None:
    assert needs_compiler_stack(str(write(tmp_path, files))) is expected


def test_an_unreadable_script_is_assumed_to_need_it(tmp_path: Path) -> None:
    assert needs_compiler_stack(str(tmp_path / "missing.py")) is True


def test_what_torch_really_loads_matches_the_words() -> None:
    """The guess's premise, on the torch installed here: an optimizer loads the compiler
    stack, plain tensor and module work does not."""
    probe = (
        "import sys, torch\n"
        "m = torch.nn.Linear(3, 3)\n"
        "m(torch.randn(2, 3)).sum().backward()\n"
        "before = 'torch._dynamo' in sys.modules\n"
        "torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "print(before, 'torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr
