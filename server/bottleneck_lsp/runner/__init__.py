"""The runner: one profiling pass over one script, inside the user's interpreter.

Everything under this subpackage imports only the standard library, and torch lazily.
It is started as ``python -m bottleneck_lsp.runner`` with only this package on
PYTHONPATH (see ``bottleneck_lsp.job.job``), and it removes that entry before the user's
script runs, so the script sees exactly its own environment.
"""
