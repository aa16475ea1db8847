"""A call's arguments as the person approving it reads them: what will run, but the tool's own secrets.

The inbox showed a call's arguments as the audit keeps them (``core.redactor.redact_value``), whose scrubber
masks any text shaped like a secret (``token="..."``, ``bearer ...``, a nested key named ``password``). The
client writes that text: it wrapped the part that mattered in such a shape, the card read
``token=[redacted]``, and the person approved a call whose hidden part ran. Only a value the tool itself
says is a secret is masked here, by its argument's name: one the tool's schema declares sensitive
(``writeOnly``, ``format: password``, ``_meta["sentinel/sensitive"]``) or a property the schema lists under a
secret's name (``password``, ``api_key``). A client chooses neither; every other value is shown as sent
(marked where it is shown, never changed).

And shown whole: a card listed 100 arguments and 1,000 characters of each, so the part of a value past its
cut (a file's content after 1,000 harmless characters) ran unread once approved. A call whose arguments fit
``CARD_CHARS`` is listed whole; a longer one (or a shared store's cut copy) is listed cut as before, and
"Approve" is refused for it (``shown_whole``): Deny, or answer it from a client that shows the whole call.
A word mixing the letters of different scripts ("pаypal.com" with a Cyrillic а) is said on the card
(``look_alike_words``): only the default policy's own question said so, never a rulebase's or a tool's.
"""

from __future__ import annotations

import json
from typing import Any

from sentinel_mcp.core.display_text import shown
from sentinel_mcp.core.record_bounds import was_cut
from sentinel_mcp.core.redactor import mask
from sentinel_mcp.core.secret_names import secret_arguments_of

CARD_CHARS = 20_000  # characters of a call's argument names and values a card lists whole (50 cards: ~1 MB)
MAX_ARGUMENTS = 100  # arguments a card lists (the rest are counted, never listed)
CUT_NAME = 200  # characters of each name a card lists of a call too long to list whole
CUT_VALUE = 1000  # characters of each value a card lists of a call too long to list whole


def approval_arguments(tool: Any, arguments: Any) -> Any:
    """``arguments`` with the values of the tool's own secret arguments masked, the rest as sent."""
    if not isinstance(arguments, dict):
        return arguments
    secret = secret_arguments_of(tool)
    return {
        k: (_masked(v) if k in secret and v not in (None, "", [], {}) else v) for k, v in arguments.items()
    }


def _masked(value: Any) -> str:
    return "[redacted]" if isinstance(value, (dict, list)) else mask(value)


def shown_whole(arguments: Any) -> bool:
    """Whether a card lists every argument whole: at most ``MAX_ARGUMENTS``, their names and values within
    ``CARD_CHARS`` together, and not a cut copy (``record_bounds.bounded``)."""
    if arguments is None:
        return True
    if was_cut(arguments):
        return False
    if not isinstance(arguments, dict):
        return shown(arguments, CARD_CHARS).cut == 0
    if len(arguments) > MAX_ARGUMENTS:
        return False
    left = CARD_CHARS - sum(len(str(k)) for k in arguments)
    if left < 0:
        return False
    for value in arguments.values():
        text = shown(value, left)
        if text.cut:
            return False
        left -= len(value) if isinstance(value, str) else len(text.text)
    return True


def look_alike_words(arguments: Any) -> int:
    """How many words of the arguments' names and values, as a card lists them, mix the letters of scripts
    no honest word mixes (``core.look_alike_names.mixed_words``)."""
    if arguments is None:
        return 0
    if not isinstance(arguments, dict):
        text = _text(arguments)[:CARD_CHARS]
    else:
        whole = shown_whole(arguments)
        name, value = (CARD_CHARS, CARD_CHARS) if whole else (CUT_NAME, CUT_VALUE)
        pairs = sorted(arguments.items(), key=lambda kv: str(kv[0]))[:MAX_ARGUMENTS]
        text = "\n".join(f"{str(k)[:name]} {_text(v)[:value]}" for k, v in pairs)
    if text.isascii():
        return 0
    from sentinel_mcp.core.look_alike_names import mixed_words  # its script table is read on first use

    return mixed_words(text)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
