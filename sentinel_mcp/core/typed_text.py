"""Text a person typed, as it may be kept and sent on (a reply to another agent's help request).

What a person reads is made safe when it is shown (``display_text``); text a person *writes* that Sentinel
keeps
and passes to someone else is checked once, where it comes in, by the same rule: a character a person cannot
see as itself (``display_text.is_hidden``: controls and terminal escapes, bidi overrides and isolates,
zero-width and tag characters, surrogates, private use, unassigned) is refused with a message naming it and
where it is, rather than stored as given or silently dropped. Line ends are normalised (a browser's textarea
sends CRLF); tabs stay; the joiners and presentation selectors of emoji sequences (U+200D, U+FE0E, U+FE0F)
stay, since a person types them with an emoji and they change no other character.
"""

from __future__ import annotations

from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.core.errors import SentinelError

_KEPT = frozenset("\n\t\u200d\ufe0e\ufe0f")


class TypedTextRefused(SentinelError, ValueError):
    """Typed text that cannot be kept: blank, too long, or with a character that changes how text reads."""


def typed_text(text: str, *, limit: int, what: str = "a reply") -> str:
    """``text`` with line ends normalised and outer blanks stripped; ``TypedTextRefused`` says why not."""
    # only plain blanks are trimmed: a control or separator at either end is refused like any other
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip(" \t\n")
    if not text:
        raise TypedTextRefused(f"{what} needs some text")
    if len(text) > limit:
        raise TypedTextRefused(f"{what} is at most {limit} characters (this one has {len(text)})")
    for i, ch in enumerate(text):
        if ch not in _KEPT and is_hidden(ch):
            raise TypedTextRefused(
                f"{what} cannot hold control, invisible or direction-changing characters "
                f"(U+{ord(ch):04X} at character {i + 1}): type it again without it"
            )
    return text
