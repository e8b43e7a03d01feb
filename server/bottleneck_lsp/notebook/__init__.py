"""Jupyter notebooks: the ``.ipynb`` format read as cells (``document``), the names the engine
gives a cell's code (``cell_paths``: ``nb.ipynb#cell5``), and IPython's syntax made Python
(``ipython_syntax``). Imports nothing of the package: every layer may use it."""
