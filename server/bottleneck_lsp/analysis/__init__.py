"""Pure functions over result documents: the one ranking and the verdict (``ranking``),
two runs compared, ranks joined, timelines of a recording, documents loaded and checked
(``result``). Imports ``schema``, ``paths`` and the runner's recording readers."""
