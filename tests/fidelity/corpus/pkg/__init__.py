from .ops import run

__all__ = ["run"]
