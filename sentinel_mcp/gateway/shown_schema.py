"""An upstream's question form as a person sees it: the words a client draws from its schema (each field's
``title`` and ``description``, the labels of its choices) made safe to show, as the question's text is.

Only what is shown changes: types, names, values (``enum``, ``const``, ``default``) and bounds stay as the
server wrote them, so an answer is checked against the same question. A field's name is shown too (a client
shows it where the field has no title): a name that does not read as written (hidden characters, controls)
gets a title showing it marked, after the title it had, if any; the name itself stays, for the answer.
Before, the text carried the mark ``[asked by the server NAME, not by Sentinel]`` while a field's title
could read ``Sentinel: approve`` behind a right-to-left override or terminal escapes.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.display_text import MESSAGE_LIMIT, VALUE_LIMIT, safe_text

_WORDS = {"title": VALUE_LIMIT, "description": MESSAGE_LIMIT}
_LISTS = ("enumNames",)  # labels of an enum's values (the legacy form)
_NESTED = ("oneOf", "anyOf")  # choices with a title each (const + title)
MAX_DEPTH = 8  # a form is flat (primitive fields); deeper is left as it is below this


def shown_schema(schema: Any, depth: int = 0) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return schema
    out = dict(schema)
    for key, limit in _WORDS.items():
        if isinstance(out.get(key), str):
            out[key] = safe_text(out[key], limit)
    for key in _LISTS:
        if isinstance(out.get(key), list):
            out[key] = [safe_text(v, VALUE_LIMIT) if isinstance(v, str) else v for v in out[key]]
    for key in _NESTED:
        if isinstance(out.get(key), list):
            out[key] = [shown_schema(v, depth + 1) for v in out[key]]
    if isinstance(out.get("items"), dict):
        out["items"] = shown_schema(out["items"], depth + 1)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _named(k, shown_schema(v, depth + 1)) for k, v in out["properties"].items()}
    return out


def _named(name: Any, field: Any) -> Any:
    """``field`` with a title that shows ``name`` marked, when the name does not read as written."""
    if not isinstance(name, str) or not isinstance(field, dict):
        return field
    marked = safe_text(name, VALUE_LIMIT)
    if marked == name:
        return field
    title = field.get("title")
    return {**field, "title": f"{title} (field {marked})" if isinstance(title, str) and title else marked}
