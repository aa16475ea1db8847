"""Unicode's table of look-alike characters (UTS #39 ``confusables.txt``, version 14.0.0, as Python's
``unicodedata`` here), shipped whole beside this module and read as published: each source character and the
prototype it reads as (one or more characters). It is the one definition of "reads as" that the skeletons
(``look_alike_names``) and the person key (``person_keys``; ``policy/person_key_table.py`` writes the
runtime's table from it) share: a copy rebuilt from it by hand (``confusable_homoglyphs``' JSON) recovered
the directions by guess and turned 272 pairs round."""

from __future__ import annotations

import functools
from importlib import resources

VERSION = "14.0.0"


def entries(text: str) -> dict[str, str]:
    """The ``source ; target ; type`` lines of a ``confusables.txt`` text: source character -> prototype."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 3:
            continue  # a comment or a blank line
        source = fields[0].strip().lstrip("\ufeff")
        out[chr(int(source, 16))] = "".join(chr(int(c, 16)) for c in fields[1].split())
    return out


def data_text() -> str:
    """The shipped file's text."""
    return resources.files("sentinel_mcp.core").joinpath("confusables.txt").read_text("utf-8-sig")


@functools.cache
def prototypes() -> dict[str, str]:
    """Each character of the shipped table mapped to its prototype."""
    return entries(data_text())
