"""A screen's words as an answer shows them: cut to a few hundred characters, and the cut said in Sentinel's
own words outside the quotes. An app writes what it likes in a node's text, content-desc, class, resource id
or package, a megabyte of it if it likes; the element keeps every character (ids, fingerprints and the risk
rules read them whole), only what is shown is cut."""

from __future__ import annotations

LABEL_LIMIT = 200  # characters of one label shown; a real label is a few words
READ_LIMIT = 4096  # characters of one field the risk rules read whole (label_window.py)


def was_cut(text: str, limit: int = LABEL_LIMIT) -> bool:
    return len(text) > limit


def cut(text: str, limit: int = LABEL_LIMIT) -> str:
    """``text`` as structured content holds it: its first ``limit`` characters and "…" when longer (the full
    length is given beside it, under ``cut``)."""
    return text if len(text) <= limit else text[:limit] + "…"


def label_repr(text: str, limit: int = LABEL_LIMIT) -> str:
    """``text`` quoted (``repr``: one line, control and invisible characters escaped), cut to ``limit``
    characters with the cut named after the closing quote, where no screen text can be."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}…(+{len(text) - limit:,} characters cut)"
