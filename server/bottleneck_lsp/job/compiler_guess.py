"""Will the script load torch's compiler stack? A guess from its source, made before any pass.

torch loads ``torch._dynamo`` (over a second of imports here) the first time a script
builds an optimizer, or calls ``torch.func``, ``torch.utils.checkpoint``,
``torch.compile`` or ``torch.export``; plain tensor work, modules, DataLoaders,
TorchScript and ``torch.autograd.grad`` never do (measured on torch 2.13). When the guess is
yes, the fork server loads it once before the passes fork, as start-up; when no, nobody
pays for it. A wrong no costs time, not truth: the runner sets the import aside when the
script loads it (``runner/compilerstack.py``), and the job has the fork server load it
before the next pass.

The guess reads the script and the modules of its own folders that it imports (at most
``MAX_FILES``), and says yes on any of ``WORDS`` in them, or on any import of a package
that is neither the standard library, torch, numpy nor the user's own: what a training
framework does inside is unknown, so it is assumed to build an optimizer.

A script that calls ``torch.compile`` also has the fork server (or each fresh interpreter)
import inductor's code generator with the stack (``Guess.inductor``): the first
``torch.compile(...)`` call of a process imports it (0.7 s here), which each pass would pay
again. This guess says yes only
on a ``torch.compile`` seen in the user's files: every script that builds an optimizer
would otherwise pay 0.7 s it never uses. A wrong no costs time, not truth, as above.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass

WORDS = re.compile(r"\b(optim|compile|_?dynamo|export|func|functorch|checkpoint)\b")
KNOWN = frozenset({"torch", "numpy", "__future__", "bottleneck_lsp"})
# modules whose ``compile`` is not torch's (``re.compile(...)``)
NOT_TORCH_COMPILE = frozenset({"re", "regex", "builtins", "py_compile", "codeop"})
MAX_FILES = 200
MAX_BYTES = 2 << 20


@dataclass(frozen=True)
class Guess:
    """What the script will load: torch's compiler stack (``stack``), and inductor's code
    generator with it (``inductor``: the script calls ``torch.compile``, whose first call
    imports ``torch._inductor.compile_fx``, 594 modules and 0.7 s more here)."""

    stack: bool
    inductor: bool


def needs_compiler_stack(script: str, roots: list[str] | tuple[str, ...] = ()) -> bool:
    """True when the script (or a module of its folders it imports) looks like it will load
    torch's compiler stack, or when it cannot tell. Reads files: call it off the event loop."""
    return guess(script, roots).stack


def guess(script: str, roots: list[str] | tuple[str, ...] = ()) -> Guess:
    """Both guesses from one reading of the script and the modules of its folders that it
    imports. ``inductor`` only on a ``torch.compile`` seen in them (a wrong yes costs 0.7 s
    of start-up); ``stack`` also when it cannot tell. Reads files: call it off the event loop."""
    folders = [os.path.dirname(os.path.abspath(script)), *roots]
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    seen: set[str] = set()
    todo = [os.path.abspath(script)]
    stack = inductor = False
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_FILES:
            return Guess(True, inductor)
        try:
            with open(path, "rb") as handle:
                source = handle.read(MAX_BYTES + 1)
        except OSError:
            stack = True
            continue
        if len(source) > MAX_BYTES:
            stack = True
            continue
        text = source.decode("utf-8", "replace")
        stack = stack or bool(WORDS.search(text))
        try:
            tree = ast.parse(text, path)
        except (SyntaxError, ValueError):
            stack = True  # the script will not run as it is: whatever
            continue
        inductor = inductor or _calls_compile(tree)
        here = os.path.dirname(path)
        for name, level in _imports(tree):
            found = _local(name, level, here, folders)
            if found is not None:
                todo.extend(found)
                continue
            top = name.split(".", 1)[0]
            if level == 0 and top not in stdlib and top not in KNOWN:
                stack = True
    return Guess(stack, inductor)  # a torch.compile call also matched WORDS: stack is set


def _calls_compile(tree: ast.AST) -> bool:
    """``torch.compile`` in the file: an attribute ``compile`` of anything but a regular
    expression module (``torch.compile(model)``, ``@torch.compile``, ``model.compile()``), or
    ``compile`` imported from torch."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "compile":
            if not (isinstance(node.value, ast.Name) and node.value.id in NOT_TORCH_COMPILE):
                return True
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            if any(alias.name == "compile" for alias in node.names):
                return True
    return False


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    """Every module imported anywhere in the file: (dotted name, relative level)."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found.append((base, node.level))
            # ``from pkg import mod``: mod may be a module of pkg
            found.extend((f"{base}.{alias.name}" if base else alias.name, node.level) for alias in node.names)
    return found


def _local(name: str, level: int, here: str, folders: list[str]) -> list[str] | None:
    """The user's files a name imports (a module, or a package's ``__init__`` and the
    module itself), or None when it is not the user's."""
    parts = [p for p in name.split(".") if p]
    if level:
        base = here
        for _ in range(level - 1):
            base = os.path.dirname(base)
        bases = [base]
    else:
        bases = folders
    for base in bases:
        files: list[str] = []
        path = base
        for part in parts:
            path = os.path.join(path, part)
            init = os.path.join(path, "__init__.py")
            if os.path.isfile(init):
                files.append(init)
        if os.path.isfile(path + ".py"):
            files.append(path + ".py")
        if files or (level and not parts):
            return files
        if parts and os.path.isdir(os.path.join(base, parts[0])):
            return files  # a namespace package of the user's
    return None
