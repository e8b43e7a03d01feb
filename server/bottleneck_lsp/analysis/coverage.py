"""What a column recorded in windows of the one run covers, in words: "recorded in 3
windows, 2.40 s of the 11.00 s run (22%)" (docs/performance.md, "One run")."""

from __future__ import annotations

from ..schema.model import Pass


def covered(part: Pass | None) -> str:
    """How much of the run a pass recorded in windows covers; "" for a pass that recorded
    its whole run (or none)."""
    windows = part.windows if part is not None else None
    if windows is None:
        return ""
    if windows.count == 0:
        return f"no window was recorded in the {windows.run_s:.2f} s run"
    share = windows.recorded_s / windows.run_s if windows.run_s > 0 else 0.0
    plural = "s" if windows.count != 1 else ""
    return (
        f"recorded in {windows.count} window{plural}, {windows.recorded_s:.2f} s of the "
        f"{windows.run_s:.2f} s run ({share:.0%})"
    )
