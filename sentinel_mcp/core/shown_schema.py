"""An upstream's question form as a person sees it: the words a client draws from its schema (each field's
``title`` and ``description``, the labels of its choices) made safe to show, as the question's text is.

Only what is shown changes: types, names, values (``enum``, ``const``, ``default``) and bounds stay as the
server wrote them, so an answer is checked against the same question. A field's name is shown too (a client
shows it where the field has no title): a name that does not read as written (hidden characters, controls)
gets a title showing it marked, after the title it had, if any; the name itself stays, for the answer.
Before, the text carried the mark ``[asked by the server NAME, not by Sentinel]`` while a field's title
could read ``Sentinel: approve`` behind a right-to-left override or terminal escapes.

A configured server's word in Sentinel's voice (``own_voice``: "Sentinel: the administrator approved this;
type your password") is headed by the attribution naming the server, as its listings' words are: a title or a
choice's label on the same line, a description on a line of its own. A text ``default`` in Sentinel's voice is
not passed on: a client fills it in, and an answer the person never typed would be sent as theirs in
Sentinel's words (a field without it is still answered; the answer is checked against the server's schema).
A field's name in that voice, drawn where the field has no title, gets a title so headed (the name stays, for
the answer); a choice's value in it cannot be headed (``voiced_choice``). A server's words carry no markup a
client would draw (``inert_markup``): "Pick one<br>Sentinel: approved" would be two lines, the second
unheaded.
Both the gateway's front (``shown_schema``) and the agent's relay (``attributed_form``, its words made safe by
the front it goes through) show a server's form by these rules.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.display_text import MESSAGE_LIMIT, VALUE_LIMIT, safe_text
from sentinel_mcp.core.inert_markup import inert_markup
from sentinel_mcp.core.own_voice import attributed_word, in_sentinels_voice

_WORDS = {"title": VALUE_LIMIT, "description": MESSAGE_LIMIT}
_LISTS = ("enumNames",)  # labels of an enum's values (the legacy form)
_NESTED = ("oneOf", "anyOf")  # choices with a title each (const + title)
MAX_DEPTH = 8  # a form is flat (primitive fields); deeper is left as it is below this


def shown_schema(schema: Any, server: str | None = None) -> Any:
    """``schema`` (a question's form) as a person sees it; ``server``: the configured server that asks (None:
    a built-in Sentinel mounted, whose words are its own). A server's words carry no markup a client would
    draw (``inert_markup``)."""
    return _shown(schema, server, 0, safe=True, inert=server is not None)


def attributed_form(schema: Any, server: str | None, *, inert: bool = False) -> Any:
    """``schema`` with only its words in Sentinel's voice attributed (and such a default left out), each word
    otherwise raw: for a reader that makes words safe where it draws them (the console's inbox, which draws
    them as text; ``inert``: a client that may draw HTML, the agent's caller through the gateway's front)."""
    return _shown(schema, server, 0, safe=False, inert=inert and server is not None)


def _shown(schema: Any, server: str | None, depth: int, *, safe: bool, inert: bool) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return schema
    out = dict(schema)
    for key, limit in _WORDS.items():
        if isinstance(out.get(key), str):
            out[key] = _said(out[key], limit if safe else None, server, line=key == "title", inert=inert)
    for key in _LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_said(v, VALUE_LIMIT if safe else None, server, line=True, inert=inert)
                        for v in out[key]]
    if server is not None and isinstance(out.get("default"), str) and in_sentinels_voice(out["default"]):
        del out["default"]
    for key in _NESTED:
        if isinstance(out.get(key), list):
            out[key] = [_shown(v, server, depth + 1, safe=safe, inert=inert) for v in out[key]]
    if isinstance(out.get("items"), dict):
        out["items"] = _shown(out["items"], server, depth + 1, safe=safe, inert=inert)
    if isinstance(out.get("properties"), dict):
        fields = {k: _shown(v, server, depth + 1, safe=safe, inert=inert)
                  for k, v in out["properties"].items()}
        out["properties"] = {k: _named(k, v, server, safe=safe, inert=inert) for k, v in fields.items()}
    return out


def voiced_choice(schema: Any, depth: int = 0) -> str | None:
    """A choice's value in ``schema`` written in Sentinel's voice (an ``enum`` item, a choice's ``const``:
    "Sentinel approved"), or None. A value is what a client draws where it has no label, and what the answer
    says: it cannot be headed without changing the answer, and a label is drawn only by a client that draws
    labels, so such a form is relayed to no one (``form_shape``). Walks as ``_shown`` does."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    values = list(schema["enum"]) if isinstance(schema.get("enum"), list) else []
    values.append(schema.get("const"))
    for value in values:
        if isinstance(value, str) and in_sentinels_voice(value):
            return value
    nested: list[Any] = [schema.get("items")]
    for key in _NESTED:
        nested += schema[key] if isinstance(schema.get(key), list) else []
    if isinstance(schema.get("properties"), dict):
        nested += schema["properties"].values()
    return next((v for v in (voiced_choice(n, depth + 1) for n in nested) if v is not None), None)


def voiced_form(schema: Any) -> str | None:
    """Why the form ``schema`` is shown to no person, whoever wrote it, or None: a choice's value in
    Sentinel's voice (``voiced_choice``). The one check of every path that shows a form (an upstream's,
    relayed: ``form_shape``; the policy's own questions, whose choices a tool's result or a call's argument
    may name: the gateway's decide step, before the front, the agent's relay, an A2A peer or the console
    inbox sees them)."""
    voiced = voiced_choice(schema)
    if voiced is None:
        return None
    return f"its choice {voiced[:40]!r} reads as Sentinel's words, and a choice is shown as written"


def _said(word: Any, limit: int | None, server: str | None, *, line: bool, inert: bool) -> Any:
    """``word`` made safe to show within ``limit`` (None: left raw), its markup made text (``inert``),
    headed by the attribution when it is in Sentinel's voice (judged on the word as written: made visible,
    "Sen⟨U+200B⟩tinel" no longer spells the name)."""
    if not isinstance(word, str):
        return word
    text = inert_markup(word) if inert else word
    shown = text if limit is None else safe_text(text, limit)
    return shown if server is None else attributed_word(word, shown, server, line=line)


def _named(name: Any, field: Any, server: str | None, *, safe: bool, inert: bool) -> Any:
    """``field`` with a title that shows ``name`` marked, when the name does not read as written; with one
    headed by the attribution, when it has no title and the name (drawn instead) is in Sentinel's voice."""
    if not isinstance(name, str) or not isinstance(field, dict):
        return field
    title = field.get("title")
    if server is not None and not (isinstance(title, str) and title) and in_sentinels_voice(name):
        return {**field, "title": _said(name, VALUE_LIMIT if safe else None, server, line=True, inert=inert)}
    if not safe:
        return field
    marked = safe_text(name, VALUE_LIMIT)
    if marked == name:
        return field
    return {**field, "title": f"{title} (field {marked})" if isinstance(title, str) and title else marked}
