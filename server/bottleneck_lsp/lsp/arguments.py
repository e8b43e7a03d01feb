"""The commands' argument objects, and a strict check of their JSON before pygls converts it.

pygls structures a command's argument with cattrs, which is lenient: a string given for a
list of strings becomes its characters (``"--epochs 1"`` ran the script with ten one-letter
arguments), ``"2"`` becomes 2 and ``5`` becomes ``"5"``. The hooks installed by ``strict``
refuse any value whose JSON type is not the field's, and name the field and what came, so
that the client's error reads ``Invalid Params: bottleneck.profile: 'args' must be a list
of strings, got a string``.
"""

from __future__ import annotations

import types as pytypes
import typing
from typing import Any, Union

import attrs
from cattrs import Converter
from pygls.protocol import default_converter

from ..settings import request_keys


@attrs.define
class ProfileArguments:
    """``bottleneck.profile``'s single argument object: the script, how it runs, and the
    settings a request may give (``settings.request_keys``: args, passes, cwd, python,
    timeout...), by their JSON names, laid over the server's (``settings.overlay``)."""

    uri: str
    # Run the file as ``python -m pkg.mod`` (its name from the packages around it): true, or
    # false for a plain file; unset: as a module when it is in a package and uses relative
    # imports (as a file, Python stops at them) and its package is found from the working
    # directory.
    module: bool | None = None
    settings: dict[str, Any] = attrs.field(factory=dict)


@attrs.define
class OpenResultArguments:
    """``bottleneck.openResult``'s argument: a result JSON (path or file URI) made
    elsewhere, and the local folder that holds the project (default: the first workspace
    folder); the script is looked for there, at its recorded path or below."""

    path: str
    root: str | None = None


_COMMANDS = {ProfileArguments: "bottleneck.profile", OpenResultArguments: "bottleneck.openResult"}


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _wanted(hint: Any) -> tuple[str, bool]:
    """What a field's type asks for, in words, and whether null is allowed."""
    args = typing.get_args(hint)
    optional = typing.get_origin(hint) in (Union, pytypes.UnionType) and type(None) in args
    if optional:
        hint = next(a for a in args if a is not type(None))
    words = {str: "a string", bool: "true or false", int: "a whole number", float: "a number"}
    if typing.get_origin(hint) is list:
        return "a list of strings", optional
    return words[hint], optional


def _fits(value: Any, hint: Any) -> bool:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (Union, pytypes.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if typing.get_origin(hint) is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, hint)


def _wrong(command: str, name: str, value: Any, wanted: str, optional: bool) -> ValueError:
    if optional:
        wanted = "true, false or null" if wanted == "true or false" else f"{wanted} or null"
    got = _json_kind(value)
    odd = [v for v in value if not isinstance(v, str)] if isinstance(value, list) else []
    if odd and wanted.startswith("a list"):
        got = f"a list holding {_json_kind(odd[0])}"
    return ValueError(f"{command}: {name!r} must be {wanted}, got {got}")


def check(cls: type[Any], raw: Any) -> dict[str, Any]:
    """Raise ``ValueError`` naming the first field of ``raw`` whose JSON type is wrong; else
    the object's own fields (for ``ProfileArguments``: the settings it gives go in
    ``settings``, each checked against its declared kind)."""
    command = _COMMANDS.get(cls, cls.__name__)
    if not isinstance(raw, dict):
        raise ValueError(f"{command}: expected one argument object, got {_json_kind(raw)}")
    hints = typing.get_type_hints(cls)
    fields = {k: f for k, f in attrs.fields_dict(cls).items() if k != "settings"}
    given = request_keys() if cls is ProfileArguments else {}
    unknown = sorted(k for k in raw if k not in fields and k not in given)
    if unknown:
        known = [*fields, *given]
        raise ValueError(f"{command}: unknown field {unknown[0]!r} (known: {', '.join(known)})")
    for name, field in fields.items():
        if name not in raw:
            if field.default is attrs.NOTHING:
                raise ValueError(f"{command}: {name!r} is required")
            continue
        if not _fits(raw[name], hints[name]):
            raise _wrong(command, name, raw[name], *_wanted(hints[name]))
    for key, (_name, about) in given.items():
        value = raw.get(key)
        if value is not None and not about.kind.fits(value):
            raise _wrong(command, key, value, about.kind.words, True)
    own = {k: v for k, v in raw.items() if k in fields}
    if given:
        own["settings"] = {k: v for k, v in raw.items() if k in given}
    return own


def strict(converter: Converter) -> None:
    """Check each argument object's JSON types before the converter structures it."""
    for cls in _COMMANDS:
        plain = converter.get_structure_hook(cls)

        def hook(raw: Any, wanted: type[Any], plain: Any = plain, cls: type[Any] = cls) -> Any:
            return plain(check(cls, raw), wanted)

        converter.register_structure_hook(cls, hook)


def strict_converter() -> Converter:
    """pygls' converter with ``strict``'s hooks: the server's ``converter_factory``."""
    converter: Converter = default_converter()  # type: ignore[no-untyped-call]
    strict(converter)
    return converter
