"""A job: what is asked (``spec``), the plan of passes and their run (``job``), whether
cProfile rides in the cpu pass's run, a recording replayed. One document out. Imports
``schema``, ``paths``, ``processes`` and ``analysis``."""
