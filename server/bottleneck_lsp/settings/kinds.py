"""What a setting's value may be: its JSON type, its bounds, and how a value becomes the
setting's (``convert``) or a request's override of it (``override``).

One kind per shape of value. ``schema`` is the same statement as a JSON schema, the form
the VS Code extension's package.json declares it in (a test compares the two)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..schema.contract import MEMORY, PASSES, unknown_passes
from ..schema.torchrun_options import LaunchError, check_options

# Each kind's value that a request leaves to the setting besides null (an empty passes or cwd
# in one folder means "every pass" / "the script's folder", not another folder's value).
UNSET = object()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


@dataclass(frozen=True)
class Kind:
    """A value of JSON type ``words``; the subclasses add bounds and conversions."""

    words: str = "a string"

    def fits(self, value: Any) -> bool:
        """The JSON type only: what a request's argument is checked for before anything runs
        (its bounds are the job's checks, with the job's words)."""
        return isinstance(value, str)

    def convert(self, value: Any) -> Any:
        """The setting's value, or ``ValueError`` saying what was expected."""
        if not self.fits(value):
            raise ValueError(f"expected {self.words}")
        return value

    def override(self, value: Any) -> Any:
        """A request's value (already of the right JSON type) as the setting's, or ``UNSET``."""
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string"}


@dataclass(frozen=True)
class Text(Kind):
    """A non-empty string (the interpreter); an empty one in a request: the setting's."""

    def convert(self, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            raise ValueError("expected a non-empty string")
        return value

    def override(self, value: Any) -> Any:
        return value or UNSET


@dataclass(frozen=True)
class Folder(Kind):
    """A folder's path, or null / "" for the default."""

    def convert(self, value: Any) -> Any:
        if value is None or value == "":
            return None
        return super().convert(value)

    def override(self, value: Any) -> Any:
        return value or UNSET


@dataclass(frozen=True)
class Strings(Kind):
    """A list of strings."""

    words: str = "a list of strings"

    def fits(self, value: Any) -> bool:
        return _strings(value)

    def convert(self, value: Any) -> Any:
        return tuple(super().convert(value))

    def override(self, value: Any) -> Any:
        return tuple(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}


@dataclass(frozen=True)
class TorchrunOptions(Strings):
    """torchrun's options as ``torch.distributed.run`` takes them (``schema.torchrun_options``)."""

    def convert(self, value: Any) -> Any:
        try:
            return check_options(super().convert(value))
        except LaunchError as exc:
            raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class Passes(Strings):
    """Pass names; null or [] for every pass that applies."""

    def convert(self, value: Any) -> Any:
        if value is None or value == []:
            return None
        if not _strings(value):
            raise ValueError(f"expected a list among {', '.join(PASSES)}")
        problem = unknown_passes(value)
        if problem:
            raise ValueError(problem)
        return tuple(value)

    def override(self, value: Any) -> Any:
        return tuple(value) if value else UNSET

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string", "enum": [*PASSES, MEMORY]}}


@dataclass(frozen=True)
class Flag(Kind):
    words: str = "true or false"

    def fits(self, value: Any) -> bool:
        return isinstance(value, bool)

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


@dataclass(frozen=True)
class Positive(Kind):
    """A number above 0."""

    words: str = "a number"

    def fits(self, value: Any) -> bool:
        return _number(value)

    def convert(self, value: Any) -> Any:
        if not _number(value) or value <= 0:
            raise ValueError("expected a positive number")
        return float(value)

    def override(self, value: Any) -> Any:
        return float(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "number", "exclusiveMinimum": 0}


@dataclass(frozen=True)
class Seconds(Positive):
    """Seconds, or 0 / null for none (the whole run)."""

    def convert(self, value: Any) -> Any:
        if value is None:
            return None
        if not _number(value) or value < 0:
            raise ValueError("expected seconds (a positive number), or 0 for the whole run")
        return float(value) or None

    def override(self, value: Any) -> Any:
        return float(value) or None

    def schema(self) -> dict[str, Any]:
        return {"type": "number", "minimum": 0}


@dataclass(frozen=True)
class Fraction(Positive):
    """A share between 0 and 1."""

    def convert(self, value: Any) -> Any:
        if not _number(value) or not 0 <= value <= 1:
            raise ValueError("expected a fraction between 0 and 1")
        return float(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "number", "minimum": 0, "maximum": 1}


@dataclass(frozen=True)
class Count(Kind):
    """A whole number from ``lowest``, up to ``highest`` when there is one."""

    words: str = "a whole number"
    lowest: int = 0
    highest: int | None = None

    def fits(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def convert(self, value: Any) -> Any:
        if self.highest is not None:
            if not self.fits(value) or not self.lowest <= value <= self.highest:
                raise ValueError(f"expected a whole number from {self.lowest} to {self.highest}")
        elif not self.fits(value) or value < self.lowest:
            raise ValueError(
                "expected a non-negative integer" if self.lowest == 0 else f"expected {self.lowest} or more"
            )
        return value

    def schema(self) -> dict[str, Any]:
        bounds = {"minimum": self.lowest} | ({"maximum": self.highest} if self.highest is not None else {})
        return {"type": "integer", **bounds}
