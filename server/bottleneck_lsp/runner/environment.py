"""The environment summary: interpreter, OS, torch build, CUDA, relevant packages.

Packages are read from installed metadata (importlib.metadata); pip is never spawned.
"""

from __future__ import annotations

import platform
import re
import sys
import time
from typing import Any

from ..schema.model import Environment, Package, PythonInfo, TorchInfo
from . import compilerstack

_RELEVANT = re.compile(
    r"torch|numpy|triton|nvidia|cuda|cudnn|onnx|optree|mypy|apex|xformers|transformers|"
    r"lightning|accelerate|mkl|intel|jax|scipy|pillow",
    re.IGNORECASE,
)


# Set in a fork server (``forkserver.py``): what its ``import_torch`` gave, which every
# pass forked from it inherits instead of importing again.
PRELOADED: tuple[Any, float, float, str | None] | None = None


def import_torch(compiler_stack: bool = True, inductor: bool = False) -> tuple[Any, float, float, str | None]:
    """Import torch, timed: (module or None, seconds, lazy-part seconds, error message).

    torch loads its compiler stack (torch._dynamo, with sympy) lazily, when a script first
    builds an optimizer for instance: over a second of import work that would otherwise
    be charged to whichever line of the script triggers it. With ``compiler_stack`` it is
    loaded here, as start-up, and reported apart (else a script that loads it has it set
    aside: ``compilerstack.py``); with ``inductor`` too, inductor's code generator, which
    the first ``torch.compile(...)`` call imports. In a process forked from a fork server:
    the server's.
    """
    if PRELOADED is not None:
        return PRELOADED
    start = time.perf_counter()
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure means "no torch"
        return None, time.perf_counter() - start, 0.0, f"{type(exc).__name__}: {exc}"
    loaded = time.perf_counter() - start
    lazy = compilerstack.load() if compiler_stack else 0.0
    if compiler_stack and inductor:
        lazy += compilerstack.load_inductor()  # one figure: torch's lazy imports
    return torch, loaded, lazy, None


def _packages() -> list[Package]:
    from importlib import metadata

    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name and _RELEVANT.search(name) and name.lower() not in found:
            found[name.lower()] = f"{name}=={dist.version}"
    return [Package(name=k, spec=v) for k, v in sorted(found.items())]


def _torch_summary(torch: Any) -> TorchInfo:
    cuda_available = bool(torch.cuda.is_available())
    info = TorchInfo(
        version=torch.__version__,
        git_version=getattr(torch.version, "git_version", None),
        debug=bool(getattr(torch.version, "debug", False)),
        cuda_compiled=getattr(torch.version, "cuda", None),
        hip_compiled=getattr(torch.version, "hip", None),
        cuda_available=cuda_available,
    )
    if cuda_available:
        try:
            info.cudnn = torch.backends.cudnn.version()
        except Exception:  # noqa: BLE001
            pass
        try:
            info.cuda_driver = torch._C._cuda_getDriverVersion()
        except Exception:  # noqa: BLE001
            pass
        info.devices = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return info


def summarize(torch: Any, torch_error: str | None) -> Environment:
    """The document's ``environment`` object."""
    return Environment(
        python=PythonInfo(
            version=platform.python_version(),
            implementation=platform.python_implementation(),
            executable=sys.executable,
        ),
        os=platform.platform(),
        machine=platform.machine(),
        torch=_torch_summary(torch) if torch is not None else None,
        torch_error=torch_error,
        packages=_packages(),
    )
