"""Processes the host starts: one runner's life (``runner_process``), the fork server's
client and its early start, torchrun's command line, a crash's site from its output.
Imports ``schema``, ``paths`` and the runner's standard-library helpers."""
