"""What the sampler reads in a code object's bytecode: which instructions are C calls,
where Python checks for pending signals (where a timer tick can be handled, so where a
look can land), the line at an instruction, and the loops whose jump back a look should
charge to the loop's head. Cached per code object.

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

import dis
import functools
import sys
from types import CodeType

# Instructions during which the frame's thread is in C code that the frame called
# (a builtin or extension function, an operator on tensors, a subscript).
C_CALL_OPS = frozenset(
    dis.opmap[name]
    for name in (
        "CALL",
        "CALL_FUNCTION",
        "CALL_METHOD",
        "CALL_FUNCTION_EX",
        "CALL_FUNCTION_KW",
        "CALL_KW",
        "PRECALL",
        "BINARY_OP",
        "BINARY_SUBSCR",
        "STORE_SUBSCR",
        "COMPARE_OP",
        "CONTAINS_OP",
        "BINARY_MATRIX_MULTIPLY",
        "INPLACE_MATRIX_MULTIPLY",
        "BINARY_MULTIPLY",
        "BINARY_ADD",
        "BINARY_SUBTRACT",
        "BINARY_TRUE_DIVIDE",
        "INPLACE_ADD",
        "INPLACE_MULTIPLY",
        "INPLACE_SUBTRACT",
    )
    if name in dis.opmap
)


def in_c_call(code: CodeType, index: int) -> bool:
    """Whether the instruction at ``index`` is one during which the frame's thread is in C code."""
    ops = code.co_code
    return 0 <= index < len(ops) and ops[index] in C_CALL_OPS


# What a look copies of one frame: its code, its instruction, its line.
Site = tuple[CodeType, int, int]


@functools.lru_cache(maxsize=4096)
def line_before(code: CodeType, offset: int) -> int:
    """The line of the last instruction at or before ``offset`` that has one (some have
    none: Python 3.11's jump back at the end of a ``for`` body that ends in an ``if``, or a
    module's first instruction), else the first line that has code."""
    line = 0
    for start, _end, number in code.co_lines():
        if not number:  # None, or 0: a module's RESUME has line 0 on Python 3.11
            continue
        if start > offset and line:
            break
        line = number  # before ``offset``; or, when nothing before has one, the first after
        if start > offset:
            break
    return line or max(code.co_firstlineno, 1)


@functools.lru_cache(maxsize=1024)
def loop_jumps(code: CodeType) -> dict[int, int]:
    """The backward jumps of a code object whose loop body spans several lines: offset ->
    the line jumped to (the loop's head). A one-line body keeps its line (see ``line_of``)."""
    out = {}
    lines = list(code.co_lines())
    jumps = [i for i in dis.get_instructions(code) if "JUMP" in i.opname and isinstance(i.argval, int)]
    for ins in jumps:
        if ins.argval < ins.offset:
            head = line_before(code, ins.argval)
            body = {
                n for start, _end, n in lines if ins.argval <= start <= ins.offset and n not in (None, head)
            }
            if len(body) > 1:
                out[ins.offset] = head
    # Python 3.10 also checks at a jump taken forward, and its compiler sends a body's last
    # ``if`` straight to the jump back: a look there is the same "end of this iteration".
    # (3.11+ never stops at a forward jump; this changes nothing there.)
    changed = True
    while changed:
        changed = False
        for ins in jumps:
            if ins.offset not in out and ins.argval in out:
                out[ins.offset] = out[ins.argval]
                changed = True
    return out


# Where Python checks for pending signals (3.11+: at these, and nowhere else; a binary
# operator such as ``a @ b`` is not one, so a tick it holds back is handled at the next).
# Python 3.10 checks at its jump back (JUMP_ABSOLUTE) too, and at a conditional jump when
# taken, which is left out: not taken, it checked nothing.
CHECK_OPS = frozenset(
    dis.opmap[name]
    for name in (
        "RESUME",
        "JUMP_BACKWARD",
        "JUMP_ABSOLUTE",
        "CALL",
        "CALL_FUNCTION",
        "CALL_METHOD",
        "CALL_FUNCTION_EX",
        "CALL_KW",
    )
    if name in dis.opmap
)


# 3.11+ enters and leaves a Python function's frame without a check point; 3.10 checks
# when its CALL_FUNCTION returns, whatever it called.
CHECKS_AFTER_PYTHON_CALLS = sys.version_info < (3, 11)


@functools.lru_cache(maxsize=4096)
def held_here(code: CodeType, offset: int) -> bool:
    """Whether a tick held back by a C call and handled at ``offset`` (the end of a call)
    was held by a C call of that same line: every C call since the previous check point
    is on it. ``return d.mean()`` after ``d = c @ b`` is not (the matmul, one line up,
    may have held it); ``return (a @ a).sum()`` is."""
    if not 0 <= offset < len(code.co_code) or code.co_code[offset] not in C_CALL_OPS:
        return False
    line = line_before(code, offset)
    for ins in reversed([i for i in dis.get_instructions(code) if i.offset < offset]):
        if ins.opcode in CHECK_OPS:
            return True
        if ins.opcode in C_CALL_OPS and line_before(code, ins.offset) != line:
            return False
    return True


@functools.lru_cache(maxsize=4096)
def c_ops_before(code: CodeType, offset: int, line: int) -> frozenset[int]:
    """The lines, other than ``line``, of the C ops (operators, subscripts: C code with no
    check point of their own) between the previous check point and ``offset``. A tick
    handled at ``offset`` soon after it arrived may have arrived in one of them."""
    found = set()
    for ins in reversed([i for i in dis.get_instructions(code) if i.offset < offset]):
        if ins.opcode in CHECK_OPS:
            break
        if ins.opcode in C_CALL_OPS:
            found.add(line_before(code, ins.offset))
    found.discard(line)
    return frozenset(found)


def line_of(site: Site) -> int:
    """The line a look at a frame (``site``) is charged to. Python lets the sampler see the main
    thread only at check points: calls, and the jump back to a loop's head. A look at that
    jump says "somewhere in this loop" (Python names the body's last line, or no line at
    all): with a body of several lines it goes to the loop's head, the ``for`` or
    ``while`` line; a one-line body keeps its line. A look before a module's first line
    (its RESUME, line 0) goes to the first line that has code."""
    code, lasti, line = site
    head = loop_jumps(code).get(lasti)
    if head is not None:
        return head
    return line if line else line_before(code, lasti)
