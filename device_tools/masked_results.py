"""A screen tool's result with the payment secrets of its screen text masked (``payment_numbers``), for a
caller without the ``payment_numbers`` consent: what the caller gets is what the gateway's audit records.

Every text the result carries is read: its content's texts, its structured content and its ``_meta`` (the
device's decision quotes labels). A list of elements (dicts with ``text``/``desc``/``hint``) is read as the
screen draws it, label after label, so a number an app draws over several text views is found whole; a
label masked there is masked wherever it is quoted (the listing's line quotes it as ``repr``), then each text
is read on its own too (OCR's lines, a message). The ids Sentinel made (snapshot, element, decision) and the
names Android gives (package, class, resource id) are not screen text and are kept as they are: a masked id
could not be named back.

A screenshot whose screen (the dumps read around its capture) shows a payment secret loses its image: its
pixels cannot be masked here, and the result says why.
"""

from __future__ import annotations

import re
from typing import Any

from mcp.types import CallToolResult, ImageContent, TextContent

from .payment_numbers import PAYMENT, mask_text, mask_texts

MASKED_KEY = "masked"  # structured content: how many payment secrets were masked, and the consent to ask
_LABEL_KEYS = ("text", "desc", "hint")
_KEPT_KEYS = frozenset({"snapshot_id", "id", "element_id", "decision_id", "resource_id", "package", "window",
                        "class", "status", "bounds", "center", "flags", "cut"})


class _Masker:
    def __init__(self) -> None:
        self.count = 0
        self.quoted: dict[str, str] = {}  # repr(label) -> repr(masked label), longest first when applied
        self._quoted: re.Pattern[str] | None = None
        self.elements: set[int] = set()  # the elements (by id) whose labels ``labels`` masked

    def labels(self, items: list[Any]) -> None:
        """Mask the labels of a list of elements in place, in the order drawn."""
        self.elements |= {id(item) for item in items if isinstance(item, dict)}
        where = [(item, key) for item in items if isinstance(item, dict)
                 for key in _LABEL_KEYS if isinstance(item.get(key), str) and item[key]]
        if not where:
            return
        before = [item[key] for item, key in where]
        after = mask_texts(before)
        parts: dict[str, str] = {}
        for (item, key), old, new in zip(where, before, after, strict=True):
            if old != new:
                parts[old] = new
                self._set(item, key, old, new)
        # a container's hint quotes its first labels, " | "-joined: the part of a number it holds is masked
        # as the label it quotes was (alone it is too short to be found)
        for item, key in where:
            if key == "hint" and parts:
                old = item[key]
                new = " | ".join(parts.get(p, p) for p in old.split(" | "))
                if new != old:
                    self._set(item, key, old, new)

    def _set(self, item: dict[str, Any], key: str, old: str, new: str) -> None:
        self.count += 1
        item[key] = new
        self.quoted[repr(old)] = repr(new)
        if old.endswith("…"):  # structured content cuts a label; the listing quotes the cut part
            self.quoted[repr(old[:-1])] = repr(new[:-1])

    def text(self, value: str) -> str:
        if self.quoted:
            if self._quoted is None:  # one pass over each text, whatever the number of labels masked
                longest_first = sorted(self.quoted, key=len, reverse=True)
                self._quoted = re.compile("|".join(map(re.escape, longest_first)))
            value, found = self._quoted.subn(lambda m: self.quoted[m.group()], value)
            self.count += found
        masked, found = mask_text(value)
        self.count += found
        return masked

    def value(self, value: Any, key: str = "") -> Any:
        if key in _KEPT_KEYS:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            drawn = id(value) in self.elements  # its labels were masked in the order drawn (``labels``)
            return {k: v if drawn and k in _LABEL_KEYS else self.value(v, k if isinstance(k, str) else "")
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def prepare(self, value: Any) -> None:
        """Find the lists of elements first: their labels' masked forms are then applied to every text."""
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                if any(isinstance(e, dict) and any(k in e for k in _LABEL_KEYS) for e in item):
                    self.labels(item)
                stack.extend(item)


def masked(result: CallToolResult, screen_shows: bool) -> CallToolResult:
    """``result`` with its payment secrets masked; ``screen_shows``: a screen the call read shows one (an
    image of it is dropped)."""
    masker = _Masker()
    structured = result.structured_content
    if structured is not None:
        structured = _copy(structured)
        masker.prepare(structured)
    meta = _copy(result.meta) if result.meta else result.meta
    if meta:
        masker.prepare(meta)
    content: list[Any] = []
    dropped = False
    for part in result.content:
        if isinstance(part, TextContent):
            content.append(part.model_copy(update={"text": masker.text(part.text)}))
        elif isinstance(part, ImageContent) and screen_shows:
            dropped = True
        else:
            content.append(part)
    structured = masker.value(structured) if structured is not None else None
    meta = masker.value(meta) if meta else meta
    if dropped:
        content.append(TextContent(type="text", text=(
            "The screenshot is not shown: the screen shows a payment card number, security code or IBAN. "
            f"Call it with personal=['{PAYMENT}'] to ask the user.")))
        masker.count += 1
    if not masker.count:
        return result
    if isinstance(structured, dict):
        structured = {**structured, MASKED_KEY: {"kinds": [PAYMENT], "image": dropped}}
    return result.model_copy(update={"content": content, "structured_content": structured, "meta": meta})


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
