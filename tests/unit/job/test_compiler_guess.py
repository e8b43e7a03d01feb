"""The guess, before any pass, of whether a script will load torch's compiler stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bottleneck_lsp.job.compiler_guess import guess, needs_compiler_stack


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
    assert _printed(probe) == ["False", "True"]


@pytest.mark.parametrize(
    ("source", "inductor"),
    [
        ("import torch\nf = torch.compile(lambda x: x)\n", True),
        ("import torch\n@torch.compile\ndef f(x):\n    return x\n", True),
        ("import torch\nm = torch.nn.Linear(2, 2)\nm.compile()\n", True),
        ("from torch import compile\n", True),
        # the word alone, or a regular expression's compile, is not torch.compile
        ("import re, torch\npattern = re.compile('x')\nopt = torch.optim.SGD([], lr=0.1)\n", False),
        ("import torch\n# torch.compile would help here\n", False),
        ("import torch\nopt = torch.optim.SGD([], lr=0.1)\n", False),
    ],
)
def test_the_inductor_guess_wants_a_torch_compile_call(tmp_path: Path, source: str, inductor: bool) -> None:
    found = guess(str(write(tmp_path, {"main.py": source})))
    assert found.inductor is inductor
    assert found.stack  # every one of these loads the compiler stack


def test_a_torch_compile_in_a_helper_module_counts(tmp_path: Path) -> None:
    files = {
        "main.py": "import model\n",
        "model.py": "import torch\nnet = torch.compile(torch.nn.Linear(2, 2))\n",
    }
    assert guess(str(write(tmp_path, files))).inductor


def test_what_torch_compile_loads_matches_the_guess() -> None:
    """The premise, on the torch installed here: after the compiler stack, the first
    torch.compile call imports inductor's code generator."""
    probe = (
        "import sys, torch, torch._dynamo\n"
        "before = 'torch._inductor.compile_fx' in sys.modules\n"
        "torch.compile(torch.nn.Linear(2, 2))\n"
        "print(before, 'torch._inductor.compile_fx' in sys.modules)\n"
    )
    assert _printed(probe) == ["False", "True"]


def _printed(code: str) -> list[str]:
    """The words ``code`` printed, in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()
