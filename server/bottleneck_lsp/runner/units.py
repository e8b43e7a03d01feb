"""Figures as the result document writes them: microseconds and shares, rounded."""

from __future__ import annotations


def us(ns: int) -> float:
    """Nanoseconds as microseconds, to the nanosecond."""
    return round(ns / 1000.0, 3)


def share(part: float, total: float) -> float:
    """``part`` of ``total`` (0 when there is no total), to six places."""
    return round(part / total, 6) if total > 0 else 0.0
