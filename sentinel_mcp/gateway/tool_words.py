"""A configured upstream's tool (prompt, resource) as a client gets it: its words (description, title, a
tool's annotations' title, a resource's name) with every character a person cannot see made visible, as every
other text Sentinel shows is (``core/display_text.py``), nothing cut, and only its safe icons kept
(``upstream_icons.py``).

A description is read by the model and shown to the person in the client's tool list; characters that draw as
nothing (Unicode tags U+E0000-E007F spelling ASCII, zero-width characters, bidi overrides) let a server write
instructions the model reads and the person never sees ("ASCII smuggling"), and a first-seen definition is
pinned without anyone looking at it. Made visible (``⟨U+E0041⟩``), they read the same to both.
"""

from __future__ import annotations

from typing import Any, TypeVar

from mcp.types import Prompt, Resource, ResourceTemplate, Tool

from sentinel_mcp.core.display_text import shown
from sentinel_mcp.gateway.upstream_icons import icons_update


def _visible(text: Any) -> Any:
    if not isinstance(text, str) or text.isascii() and text.isprintable():
        return text
    return shown(text, len(text), keep_newlines=True).text


W = TypeVar("W", Resource, ResourceTemplate)


def _changed_words(item: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``item`` whose words change when made visible, made visible."""
    update: dict[str, Any] = {}
    for field in fields:
        value = getattr(item, field)
        seen = _visible(value)
        if seen != value:
            update[field] = seen
    return update


def shown_words(item: W) -> W:
    """A resource or template with its words (name, title, description) made visible."""
    update = {**_changed_words(item, ("name", "title", "description")), **icons_update(item)}
    return item.model_copy(update=update) if update else item


def shown_tool(tool: Tool, name: str) -> Tool:
    """``tool`` renamed ``name``, its words made visible."""
    update: dict[str, Any] = {"name": name, **_changed_words(tool, ("description", "title")),
                              **icons_update(tool)}
    annotations = tool.annotations
    if annotations is not None and _visible(annotations.title) != annotations.title:
        update["annotations"] = annotations.model_copy(update={"title": _visible(annotations.title)})
    return tool.model_copy(update=update)


def shown_prompt(prompt: Prompt, name: str) -> Prompt:
    """``prompt`` renamed ``name``, its words (and its arguments' descriptions) made visible."""
    update: dict[str, Any] = {"name": name, **_changed_words(prompt, ("description", "title")),
                              **icons_update(prompt)}
    if prompt.arguments and any(_visible(a.description) != a.description for a in prompt.arguments):
        update["arguments"] = [a.model_copy(update={"description": _visible(a.description)})
                               for a in prompt.arguments]
    return prompt.model_copy(update=update)
