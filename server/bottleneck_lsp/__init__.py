"""bottleneck-lsp: find where a PyTorch script spends its time, line by line.

Importing this package must stay cheap and dependency-free: the runner subpackage is
imported inside the user's interpreter, which has only the standard library and torch.
"""

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext bottleneck_lsp``: the ``%%bottleneck`` magic (``magic.py``), imported when
    asked for (by name: the package itself stays free of the layers it holds)."""
    import importlib

    importlib.import_module(f"{__name__}.magic").load_ipython_extension(ipython)
