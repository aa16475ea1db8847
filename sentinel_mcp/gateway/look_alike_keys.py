"""Argument names that read as another name: ``currency\\u200b``, ``\\u0441urrency`` (a Cyrillic es) or
``curr\\u00adency`` beside a declared ``currency``. A person, and an upstream that drops what it cannot see,
normalizes or matches names loosely, reads the declared name; the guard reads another key, and the declared
one as missing (or its default). Two allow-listed definitions of "reads as":

- as a declared name (``declared_read_as``): the names share a confusable skeleton
  (``core/look_alike_names.skeletons``: NFKC, default-ignorable and other invisible characters removed,
  combining marks dropped, UTS #39's prototypes, in either case). A skeleton costs ~165 us a short name
  (load 11), so the names compared so per call are bounded (``LookBudget``): past it the call is refused;
- as another key of the same object, at any level (``read_fold``): NFKC, the characters no one sees removed,
  case-folded; C-speed, so an object of any size is folded whole.

Only a pair with a name outside ASCII counts: two ASCII names are two names to every reader (``item_1`` and
``item_l``, ``arn`` and ``am`` are honest neighbours that a skeleton would join)."""

from __future__ import annotations

import functools
import re
import unicodedata

from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.look_alike_names import skeletons

# characters of text compared by skeleton in one call: ~30 ms under load 11 (a skeleton is ~7.5 us a
# character there); no honest call sends this many undeclared names outside ASCII beside declared ones
MAX_LOOKED_CHARS = 4_096
# default-ignorable characters that are printable to Python (variation selectors, fillers, the CGJ); the
# others (format, control, unassigned characters) are not printable (``display_text``'s hidden set)
_IGNORABLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                        "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


class TooManyToLook(GatewayError):
    """More names outside ASCII to compare with the declared ones than one call may have compared."""


class LookBudget:
    """The characters one call may still have compared by skeleton (``MAX_LOOKED_CHARS``)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_LOOKED_CHARS

    def spend(self, name: str) -> None:
        self.left -= len(name)
        if self.left < 0:
            raise TooManyToLook(
                f"the arguments hold more than {MAX_LOOKED_CHARS} characters of names outside ASCII that the "
                "tool does not declare, each to be compared with the names it declares; send fewer")


def read_fold(key: str) -> str:
    """``key`` as a loose reader reads it: NFKC (other spaces become U+0020), the characters no one sees
    removed, case-folded. ASCII: lower-cased (its own NFKC; nothing in it is unseen but controls, which a
    JSON key may hold and a reader keeps)."""
    if key.isascii():
        return key.lower()
    folded = unicodedata.normalize("NFKC", key)
    if not folded.isprintable():
        folded = "".join(filter(str.isprintable, folded))
    if _IGNORABLE.search(folded):
        folded = _IGNORABLE.sub("", folded)
    return folded.casefold()


def declared_read_as(name: str, declared: frozenset[str], budget: LookBudget) -> str | None:
    """The declared name (not ``name`` itself) that ``name`` reads as, or None; a pair of ASCII names is
    none. Raises ``TooManyToLook`` past the call's ``budget``."""
    if name in declared:
        return None
    looks, ascii_only = _looks_of(declared)
    if ascii_only and name.isascii():
        return None  # two ASCII names are two names (a call's many undeclared keys cost no skeleton)
    budget.spend(name)
    for look in skeletons(name):
        other = looks.get(look)
        if other is not None and not (other.isascii() and name.isascii()):
            return other
    return None


@functools.lru_cache(maxsize=1024)
def _looks_of(declared: frozenset[str]) -> tuple[dict[str, str], bool]:
    """Each skeleton of the ``declared`` names, and the name, and whether the names are all ASCII (a schema's
    names: cached per set)."""
    looks: dict[str, str] = {}
    for name in declared:
        for look in skeletons(name):
            looks.setdefault(look, name)
    return looks, all(name.isascii() for name in declared)
