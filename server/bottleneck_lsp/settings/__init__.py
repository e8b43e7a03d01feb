"""The settings, each declared once (``declared.py``) with its kind (``kinds.py``)."""

from .declared import NOT_A_SETTING, About, Settings, declared, merge, overlay, request_keys

__all__ = ["NOT_A_SETTING", "About", "Settings", "declared", "merge", "overlay", "request_keys"]
