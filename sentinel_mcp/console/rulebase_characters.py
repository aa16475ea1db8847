"""Lines of a rulebase that read otherwise than they are: the policy editor is a textarea, which shows a
file as the browser lays it out. A direction override (U+202E, U+2066..U+2069) reorders what follows it on
screen and a zero-width character splits a word unseen, so a rule can look commented out, or an atom look
like another, while Prolog reads the characters as they are ("trojan source"). Each such line is a warning
naming its line and the characters (as ``U+XXXX``); letters of any script are just text."""

from __future__ import annotations

from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.policy.rulebase import Problem

MAX_LINES = 50  # warned lines of one text; the rest are counted in one last warning
MAX_NAMED = 8  # characters named on one line


def hidden_character_problems(file: str, text: str) -> list[Problem]:
    out: list[Problem] = []
    more = 0
    for number, line in enumerate(text.split("\n"), start=1):
        # a tab lays out as what it is; every other control, format or unassigned character does not
        found = [ch for ch in line.rstrip("\r") if ch != "\t" and is_hidden(ch)]
        if not found:
            continue
        if len(out) >= MAX_LINES:
            more += 1
            continue
        codes = list(dict.fromkeys(f"U+{ord(ch):04X}" for ch in found))
        named = ", ".join(codes[:MAX_NAMED])
        if len(codes) > MAX_NAMED:
            named += f" and {len(codes) - MAX_NAMED} more"
        out.append(
            Problem(
                severity="warning",
                file=file,
                line=number,
                message=(
                    f"{len(found)} invisible, control or direction-changing character(s) ({named}): the "
                    "editor shows this line otherwise than Prolog reads it"
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
