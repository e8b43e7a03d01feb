"""bottleneck-lsp: find where a PyTorch script spends its time, line by line.

Importing this package must stay cheap and dependency-free: the runner subpackage is
imported inside the user's interpreter, which has only the standard library and torch.
"""

__version__ = "0.1.0"
