"""The `calculate` tool's arithmetic, evaluated over a parsed tree instead of tau2's restricted `eval`.

Same accepted characters and the same result format as tau2 (`str(round(float(value), 2))`), but no
code runs and exponents are bounded, so `9**9**9**9` cannot hang the server.
"""

from __future__ import annotations

import ast
import operator

from .database import AirlineError

ALLOWED_CHARACTERS = frozenset("0123456789+-*/(). ")
MAX_EXPRESSION_LENGTH = 1000
MAX_EXPONENT = 1000
MAX_INTEGER_BITS = 4096  # far beyond any fare, small enough that big-integer arithmetic stays instant

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (
                abs(right) > MAX_EXPONENT or abs(int(left)).bit_length() * abs(right) > MAX_INTEGER_BITS):
            raise AirlineError("Exponent too large")
        value = _BINARY[type(node.op)](left, right)
        if isinstance(value, int) and value.bit_length() > MAX_INTEGER_BITS:
            raise AirlineError("Result too large")
        return value
    raise AirlineError("Invalid expression")


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression and return it rounded to 2 decimals, as text."""
    if not all(char in ALLOWED_CHARACTERS for char in expression):
        raise AirlineError("Invalid characters in expression")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise AirlineError("Expression too long")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise AirlineError(f"{exc.msg} (<string>, line {exc.lineno})") from exc
    try:
        value = _evaluate(tree)
        return str(round(float(value), 2))
    except ZeroDivisionError as exc:
        raise AirlineError(str(exc)) from exc
    except OverflowError as exc:
        raise AirlineError(f"Result too large: {exc}") from exc
