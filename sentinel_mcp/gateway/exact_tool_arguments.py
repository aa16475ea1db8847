"""A built-in tool runs on exactly the arguments the guard judged, or not at all.

The gateway checks a call's arguments against the tool's input schema and the guard decides on them; an
in-process built-in's ``MCPServer`` then reads them once more, with pydantic in lax mode and the SDK's
``pre_parse_json`` first: ``"null"`` given for a text became no text (``sms_list``'s filter gone), a JSON
text holding a list or object became that list or object, ``3.0`` for an integer became ``3``, ``"3"``
became 3 where a schema let a text through. Two readings of one argument is a policy bypass whatever the
field, so every tool of a mounted built-in gets ``ExactArguments``: no pre-parsing, and the values its
model made must say, as JSON, exactly what was sent (a JSON integer for a number field may be held as the
equal float: the same number). Anything else is refused as invalid arguments before the tool runs.
"""

from __future__ import annotations

import math
from typing import Any

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

_DEPTH = 64  # the wire limits' depth (core/wire_limits.py): deeper values were refused before this


class ExactArguments(FuncMetadata):
    """``FuncMetadata`` whose arguments reach the function as sent (``validate_arguments``)."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return data  # a JSON text is a text: the schema check already refused one for another type

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        model = self.arg_model.model_validate(arguments_to_validate)
        held = model.model_dump(mode="json", by_alias=True)
        names = {info.alias or name for name, info in self.arg_model.model_fields.items()}
        for key, sent in arguments_to_validate.items():
            if key not in names or not same_json(sent, held.get(key)):
                raise _refused(self.arg_model.__name__, key, sent)
        return model.model_dump_one_level()


def same_json(sent: Any, held: Any, depth: int = 0) -> bool:
    """Whether ``held`` says, as JSON, exactly ``sent``: the same type (a bool is no number, a float no
    integer, a text no container) and value; an object may hold more keys (its model's defaults), never fewer
    or other values; a JSON integer held as the float of the very same value is the same number."""
    if depth > _DEPTH:
        return False
    kind = type(sent)
    if kind is int and type(held) is float:
        return math.isfinite(held) and held == sent and int(held) == sent
    if kind is not type(held):
        return False
    if kind is list:
        return len(sent) == len(held) and all(
            same_json(a, b, depth + 1) for a, b in zip(sent, held, strict=True))
    if kind is dict:
        return all(k in held and same_json(v, held[k], depth + 1) for k, v in sent.items())
    if kind is float:  # -0.0 is not 0.0 to a guard that tells them apart; NaN never equals itself
        return bool(sent == held) and math.copysign(1.0, sent) == math.copysign(1.0, held)
    return bool(sent == held)


def _refused(model: str, key: str, sent: Any) -> ValidationError:
    """A validation error (the SDK answers it as invalid arguments, the field named)."""
    error = PydanticCustomError(
        "judged_value", "{key} would not reach the tool as the value sent ({kind})",
        {"key": key, "kind": type(sent).__name__})
    detail: InitErrorDetails = {"type": error, "loc": (key,), "input": sent}
    return ValidationError.from_exception_data(model, [detail])


def hold_exact(server: Any) -> Any:
    """``server`` (an in-process built-in), each of its tools reading its arguments as ``ExactArguments``
    (again on every mount: a tool added since is held too). A low-level ``Server`` reads its own."""
    manager = getattr(server, "_tool_manager", None)
    for tool in getattr(manager, "_tools", {}).values():
        meta = tool.fn_metadata
        if type(meta) is FuncMetadata:
            fields = {k: getattr(meta, k) for k in type(meta).model_fields}
            tool.fn_metadata = ExactArguments.model_construct(**fields)
    return server
