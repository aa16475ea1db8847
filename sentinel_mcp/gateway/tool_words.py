"""A configured upstream's tool (prompt, resource) as a client gets it: its words (description, title, a
tool's annotations' title, a resource's name) with every character a person cannot see made visible, as every
other text Sentinel shows is (``core/display_text.py``), nothing cut, and only its safe icons kept
(``upstream_icons.py``).

A description is read by the model and shown to the person in the client's tool list; characters that draw as
nothing (Unicode tags U+E0000-E007F spelling ASCII, zero-width characters, bidi overrides) let a server write
instructions the model reads and the person never sees ("ASCII smuggling"), and a first-seen definition is
pinned without anyone looking at it. Made visible (``⟨U+E0041⟩``), they read the same to both. A model
reads a tool's schemas too (each argument's and each result field's ``description`` and ``title``, at any
depth): their words are made visible as well, and nothing else of a schema changes (names, types, bounds and
its values - ``default``, ``enum``, ``const``, ``examples`` - are the server's, and calls are checked against
them).

An upstream's word in Sentinel's voice (``own_voice``: "Sentinel: this tool is pre-approved") is headed by
the attribution naming its server: a description on a line of its own, a name or title on the same line.
Only what is shown changes: the tool pins hold the server's definition as it listed it (``tool_pins``), so
an attributed description is no change, and a changed one is still held.
"""

from __future__ import annotations

from typing import Any, TypeVar

from mcp.types import GetPromptResult, Prompt, Resource, ResourceTemplate, TextContent, Tool

from sentinel_mcp.core.display_text import shown
from sentinel_mcp.core.own_voice import attributed_word
from sentinel_mcp.gateway.upstream_icons import icons_update


def visible(text: Any) -> Any:
    """``text`` with every character a person cannot see made visible, nothing cut (not a string: as is)."""
    if not isinstance(text, str) or text.isascii() and text.isprintable():
        return text
    return shown(text, len(text), keep_newlines=True).text


W = TypeVar("W", Resource, ResourceTemplate)


def word(value: Any, server: str | None, *, line: bool = False) -> Any:
    """``value`` made visible, headed by the attribution when in Sentinel's voice (``server`` None: a word
    that is not an outside server's)."""
    seen = visible(value)
    return seen if server is None else attributed_word(value, seen, server, line=line)


def _changed_words(item: Any, fields: tuple[str, ...], server: str | None) -> dict[str, Any]:
    """The fields of ``item`` whose words change when shown, as shown (a description is lines; a name or a
    title one line)."""
    update: dict[str, Any] = {}
    for field in fields:
        value = getattr(item, field)
        seen = word(value, server, line=field != "description")
        if seen != value:
            update[field] = seen
    return update


def shown_words(item: W, server: str | None = None) -> W:
    """A resource or template with its words (name, title, description) shown."""
    update = {**_changed_words(item, ("name", "title", "description"), server), **icons_update(item)}
    return item.model_copy(update=update) if update else item


# a schema's words: what a client shows of a field and a model reads of it
_SCHEMA_WORDS = frozenset({"description", "title"})
# a schema's values: data the server validates against or offers, never words to change
_SCHEMA_VALUES = frozenset({"default", "enum", "const", "examples"})


# keywords whose object maps names to schemas: a property may be named like a value keyword ("default")
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _parts(node: dict[Any, Any] | list[Any], named: bool) -> list[tuple[Any, Any, bool]]:
    """The parts of a schema node to walk: (key, value, whether value is a map of names to schemas); a value
    keyword's contents are data, not words (unless ``named``: then every key is a name, every value a
    schema)."""
    if isinstance(node, list):
        return [(i, v, False) for i, v in enumerate(node)]
    return [(k, v, not named and k in _NAME_MAPS) for k, v in node.items()
            if named or k not in _SCHEMA_VALUES or isinstance(v, str)]


def _schema_words_hidden(schema: dict[Any, Any], server: str | None) -> bool:
    """Whether some word of ``schema`` (a ``description`` or ``title`` anywhere, not inside a value) changes
    when made visible. A walk with its own stack: a listing's schema may nest deeper than Python recurses."""
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, named = stack.pop()
        for key, value, names in _parts(node, named):
            if isinstance(value, str):
                if (not named and key in _SCHEMA_WORDS and isinstance(node, dict)
                        and _said(value, key, server) != value):
                    return True
            elif isinstance(value, (dict, list)):
                stack.append((value, names))
    return False


def _said(value: str, key: Any, server: str | None) -> str:
    return word(value, server, line=key == "title")


def shown_schema_words(schema: Any, server: str | None = None) -> Any:
    """``schema`` with its words shown (itself when none changes: the usual, ASCII-printable case)."""
    if not isinstance(schema, dict) or not _schema_words_hidden(schema, server):
        return schema
    out = dict(schema)
    stack: list[tuple[Any, bool]] = [(out, False)]
    while stack:
        node, named = stack.pop()
        for key, value, names in _parts(node, named):
            if isinstance(value, str):
                if not named and key in _SCHEMA_WORDS and isinstance(node, dict):
                    node[key] = _said(value, key, server)
            elif isinstance(value, (dict, list)):
                copy = dict(value) if isinstance(value, dict) else list(value)
                node[key] = copy
                stack.append((copy, names))
    return out


def shown_tool(tool: Tool, name: str, server: str | None = None) -> Tool:
    """``tool`` renamed ``name``, its words (its schemas' included) shown as ``server``'s."""
    update: dict[str, Any] = {"name": name, **_changed_words(tool, ("description", "title"), server),
                              **icons_update(tool)}
    for field in ("input_schema", "output_schema"):
        schema = getattr(tool, field)
        seen = shown_schema_words(schema, server)
        if seen is not schema:
            update[field] = seen
    annotations = tool.annotations
    title = None if annotations is None else word(annotations.title, server, line=True)
    if annotations is not None and title != annotations.title:
        update["annotations"] = annotations.model_copy(update={"title": title})
    return tool.model_copy(update=update)


def shown_prompt(prompt: Prompt, name: str, server: str | None = None) -> Prompt:
    """``prompt`` renamed ``name``, its words (and its arguments' descriptions) shown as ``server``'s."""
    update: dict[str, Any] = {"name": name, **_changed_words(prompt, ("description", "title"), server),
                              **icons_update(prompt)}
    if prompt.arguments and any(word(a.description, server) != a.description for a in prompt.arguments):
        update["arguments"] = [a.model_copy(update={"description": word(a.description, server)})
                               for a in prompt.arguments]
    return prompt.model_copy(update=update)


def shown_prompt_result(result: GetPromptResult, server: str | None = None) -> GetPromptResult:
    """A prompt's messages as the client gets them: words the user sends the model as their own, so what a
    person cannot see in them is made visible (as in its description); other blocks as they are."""
    messages = []
    for m in result.messages:
        content = m.content
        if isinstance(content, TextContent) and visible(content.text) != content.text:
            m = m.model_copy(update={"content": content.model_copy(update={"text": visible(content.text)})})
        messages.append(m)
    update: dict[str, Any] = {"messages": messages}
    description = word(result.description, server)
    if description != result.description:
        update["description"] = description
    return result.model_copy(update=update)
