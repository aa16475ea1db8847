"""Lines of a rulebase that read otherwise than they are ("trojan source"): an editor, a terminal or a code
review lays a file out as Unicode says, while Prolog reads the characters as they are. A direction override
or isolate (U+202E, U+2066..U+2069) reorders what follows it on screen and a zero-width or other
default-ignorable character splits an atom unseen (``'admin\\u200b'`` is not ``admin``), so a rule can look
commented out, or an atom look like another. Each such line is a warning (the checker's, shown by
``sentinel-mcp check`` and the console alike) naming each character as ``U+XXXX NAME (column N)``; letters
of any script are just text."""

from __future__ import annotations

import unicodedata

from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.policy.rulebase import Problem

MAX_LINES = 50  # warned lines of one text; the rest are counted in one last warning
MAX_NAMED = 8  # characters named on one line


def _named(ch: str) -> str:
    """``U+XXXX NAME``; a control or unassigned code point has no name and is said to be one."""
    category = unicodedata.category(ch)
    fallback = {"Cc": "<control>", "Cn": "<unassigned>", "Co": "<private use>", "Cs": "<surrogate>"}
    return f"U+{ord(ch):04X} {unicodedata.name(ch, fallback.get(category, '<unnamed>'))}"


def hidden_character_problems(file: str, text: str) -> list[Problem]:
    out: list[Problem] = []
    more = 0
    # a byte order mark opening the file is passed over by SWI-Prolog and an editor alike (Windows' editors
    # write one): no character of the first line
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        # a tab lays out as what it is; every other control, format or unassigned character does not
        found = {ch: column for column, ch in reversed(list(enumerate(line.rstrip("\r"), start=1)))
                 if ch != "\t" and is_hidden(ch)}  # each character at its first column
        if not found:
            continue
        if len(out) >= MAX_LINES:
            more += 1
            continue
        first = sorted(found.items(), key=lambda item: item[1])
        named = ", ".join(f"{_named(ch)} (column {column})" for ch, column in first[:MAX_NAMED])
        if len(first) > MAX_NAMED:
            named += f" and {len(first) - MAX_NAMED} more"
        out.append(
            Problem(
                severity="warning",
                file=file,
                line=number,
                column=first[0][1],
                message=(
                    f"invisible, control or direction-changing character(s): {named}: an editor shows this "
                    "line otherwise than Prolog reads it"
                ),
            )
        )
    if more:
        out.append(
            Problem(
                severity="warning",
                file=file,
                line=out[-1].line,
                message=f"{more} more line(s) after this one hold such characters",
            )
        )
    return out

