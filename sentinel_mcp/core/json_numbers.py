"""One spelling of each number in a call's arguments: a number with no fractional part is an integer.

JSON has one number type: ``13``, ``13.0`` and ``1.3e1`` are the same value, and JSON Schema's ``integer``
accepts all three. Python's parser makes the last two a float, and the policy engine a Prolog float, which
does not unify with a rule's or fact's integer 13, while the upstream (pydantic, most SDKs) reads all three
as the integer 13. So ``\\+ frozen_account(A)`` held for ``13.0`` and the call reached the upstream on the
frozen account. The gateway decides on, and forwards, the arguments with every integral float made the
integer it equals: the guard sees the value the upstream gets, in one form."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.wire_limits import MAX_INT_DIGITS

_LARGEST = 10**MAX_INT_DIGITS  # an integer this long is refused on the wire: as a float too


class NumberTooLarge(GatewayError, ValueError):
    """An integral number past the wire's integer bound (``1e300``): as an integer it would be refused."""


def integral_as_int(value: Any) -> Any:
    """``value`` with every float whose fraction is zero replaced by the integer it equals (``-0.0`` by 0);
    the very object when it holds none (the common case: no copy). Raises ``NumberTooLarge`` for one whose
    integer would have more than ``MAX_INT_DIGITS`` digits. ``value`` is within the wire's depth limit."""
    if isinstance(value, float):
        if not value.is_integer():  # a fraction, or not finite (refused on the wire before this)
            return value
        if abs(value) >= _LARGEST:
            raise NumberTooLarge(f"the number {value!r} is an integer of more than {MAX_INT_DIGITS} digits")
        return int(value)
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for k, v in value.items():
            new = integral_as_int(v)
            if new is not v and out is None:
                out = dict(value)
            if out is not None:
                out[k] = new
        return value if out is None else out
    if isinstance(value, list):
        items = [integral_as_int(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value
