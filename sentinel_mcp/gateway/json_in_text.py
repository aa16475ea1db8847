"""Text arguments an upstream may read as JSON: refused where the tool does not take plain text there.

The SDK's ``MCPServer`` (and servers built like it) parses a top-level text argument as JSON before
validating it whenever the parameter is not plain ``str`` (clients send lists and objects as JSON text), so
``"accounts": "[13]"`` for ``accounts: list[int] | str`` reaches the tool as the list ``[13]``. The guard
saw one atom, ``'[13]'``, and ``forall(member(A, As), \\+ frozen_account(A))`` held: the call ran on the
frozen account. ``"null"`` is read as None the same way (``send(to: str | None)``: the account holder, where
the guard judged an address). The guard cannot know which reading an upstream takes, so such text (an
array, an object or null: what the SDK puts in the text's place) is refused unless the tool's schema
declares that argument plain text (``"type": "string"``), where the SDK leaves it as text too. The caller
sends the value itself instead."""

from __future__ import annotations

import json
from typing import Any

_OPENERS = ("[", "{", "null")  # what the SDK's reading replaces; a number or a truth value it leaves as text


def _plain_text(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "string"


def _json_container(text: str) -> bool:
    if not text.lstrip(" \t\n\r").startswith(_OPENERS):  # what json.loads could read as one of those
        return False
    try:
        value = json.loads(text)  # the SDK's own reading (stdlib json)
        return value is None or isinstance(value, (list, dict))
    except (ValueError, RecursionError):  # text the SDK leaves as text
        return False


def text_read_as_json(input_schema: Any, arguments: dict[str, Any]) -> str | None:
    """The first top-level argument that is text holding a JSON array or object where ``input_schema`` does
    not declare plain text, as a refusal; None when there is none."""
    props = input_schema.get("properties") if isinstance(input_schema, dict) else None
    props = props if isinstance(props, dict) else {}
    for key, value in arguments.items():
        if type(value) is str and not _plain_text(props.get(key)) and _json_container(value):
            return (
                f"argument {key!r} is text holding JSON (an array, an object or null) where the tool takes "
                "more than text: an upstream may read it as that value, not as the text the policy would "
                "decide on; send the value itself, not its JSON text"
            )
    return None
