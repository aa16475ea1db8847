"""Markdown as a person cites it: paragraphs under their headings, with line ranges and sentences.

A paragraph is a block of text between blank lines, or one top-level list item with its sub-items (a rule in a
policy is usually a bullet). A short line ending in ":" that opens a list ("Payment:") is a label: it joins
the
heading path of the items below it instead of being a paragraph of its own. These paragraphs are both the
chunks the index searches and the units a rule's citation resolves to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_MARKUP = re.compile(r"\*\*|__|`|\*")


@dataclass(frozen=True)
class Paragraph:
    document: str
    heading: tuple[str, ...]  # the heading path, outermost first (labels like "Payment" included)
    text: str  # markup removed, lines joined
    line_start: int  # 1-based, inclusive
    line_end: int
    sentences: tuple[str, ...] = field(default=())

    @property
    def heading_text(self) -> str:
        return " › ".join(self.heading)


def normalize(text: str) -> str:
    """For matching an anchor: no markup, lower case, straight quotes, single spaces."""
    text = _MARKUP.sub("", text).replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    return " ".join(text.replace("\u201d", '"').lower().split())


def _clean(line: str) -> str:
    return " ".join(_MARKUP.sub("", line).split())


def _sentences(parts: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for part in parts:
        out += [s.strip() for s in _SENTENCE_END.split(part) if s.strip()]
    return tuple(out)


def _joined(parts: list[str]) -> str:
    text = ""
    for part in parts:
        if not text:
            text = part
        elif text.endswith((".", ":", ";", "!", "?")):
            text += " " + part
        else:
            text += "; " + part
    return text


def split_markdown(text: str, document: str) -> list[Paragraph]:
    """The paragraphs of a markdown text, in order."""
    out: list[Paragraph] = []
    headings: list[tuple[int, str]] = []
    block: list[tuple[int, str]] = []

    def emit(lines: list[tuple[int, str]], heading: tuple[str, ...]) -> None:
        parts = [t for t in (_clean(_ITEM.sub(r"\2", raw)) for _, raw in lines) if t]
        if parts:
            out.append(
                Paragraph(document, heading, _joined(parts), lines[0][0], lines[-1][0], _sentences(parts))
            )

    def flush() -> None:
        nonlocal block
        if block:
            _split_block(block, tuple(h for _, h in headings), emit)
        block = []

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            headings = [(lv, h) for lv, h in headings if lv < level] + [(level, _clean(heading.group(2)))]
        elif not line.strip():
            flush()
        else:
            block.append((number, line))
    flush()
    return out


def _split_block(block: list[tuple[int, str]], heading: tuple[str, ...], emit) -> None:  # noqa: ANN001
    """One block between blank lines: plain text is one paragraph; a list is one paragraph per top-level item,
    unless its items are fragments of one sentence (a list of attributes or of alternative conditions), which
    stay together with the line that introduces them."""
    intro: list[tuple[int, str]] = []
    items: list[list[tuple[int, str]]] = []
    for number, line in block:
        item = _ITEM.match(line)
        if item and not item.group(1):
            items.append([(number, line)])
        elif items:
            items[-1].append((number, line))
        else:
            intro.append((number, line))
    if not items:
        emit(intro, heading)
        return
    firsts = [_clean(_ITEM.sub(r"\2", it[0][1])) for it in items]
    fragments = (
        all(not f.endswith((".", "!", "?", ":")) for f in firsts[:-1])
        and len(items) > 1
        and all(len(it) == 1 for it in items)
    )
    intro_text = _clean(" ".join(raw for _, raw in intro))
    if fragments and intro_text.endswith(":"):
        emit(intro + [line for it in items for line in it], heading)
        return
    if intro_text.endswith(":") and len(intro_text) <= 40:
        heading = heading + (intro_text.rstrip(":").strip(),)  # "Payment:" names the list below it
    elif intro:
        emit(intro, heading)
    for it in items:
        emit(it, heading)
