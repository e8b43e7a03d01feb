"""The result document's types (``model``) and what the host and the runner agree on
(``contract``). Standard library only: the runner's one import from the host side.
Imports nothing of the package."""
