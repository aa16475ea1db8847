"""Screen labels as the rules read them: what a person would read, in plain Latin letters.

The risk rules match English words ("delete", "buy", "send"). A hostile screen spells them so a reader sees
the word and a matcher does not: fullwidth letters ("Ｄｅｌｅｔｅ"), combining accents ("Délete"), letters of
another script that look Latin ("Dеlete" with a Cyrillic е, "Вuy", "Ρublish" with a Greek Ρ). ``fold``
undoes all three (compatibility forms, marks, the look-alike letters of Cyrillic and Greek) after the
invisible characters are dropped; ``mixes_scripts`` tells a word that mixes Latin with such a script, which
no honest label does, so the firewall asks whatever the word says.
"""

from __future__ import annotations

import functools
import unicodedata

from sentinel_mcp.core.display_text import is_hidden

# Cyrillic and Greek letters that a reader takes for Latin ones (Unicode TR39 confusables, the common part)
_LOOK_ALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "ӏ": "l", "ү": "y", "һ": "h", "ɡ": "g", "ь": "b", "п": "n", "г": "r", "д": "d", "л": "n", "и": "u",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "ω": "w", "μ": "u", "ς": "c", "σ": "o", "ϲ": "c", "ϳ": "j",
})
_CONFUSABLE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "GLAGOLITIC"})
CACHED_LENGTH = 200  # labels are short; a hostile screen's long text is folded each time, never kept


def fold(text: str) -> str:
    """``text`` lower-cased, without invisible characters or marks, with look-alike letters made Latin."""
    if text.isascii() and text.isprintable():
        return text.lower()
    return _fold_label(text) if len(text) <= CACHED_LENGTH else _fold(text)


def mixes_scripts(text: str) -> bool:
    """Whether one word of ``text`` has Latin letters and letters of a script that imitates Latin."""
    if text.isascii():
        return False
    return _mixes_label(text) if len(text) <= CACHED_LENGTH else _mixes(text)


def _fold(text: str) -> str:
    visible = "".join(ch for ch in text if not is_hidden(ch))
    plain = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", visible))
    bare = "".join(ch for ch in plain if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare).lower().translate(_LOOK_ALIKES)


def _mixes(text: str) -> bool:
    for word in unicodedata.normalize("NFKC", text).split():
        scripts = {unicodedata.name(ch, "?").split(" ", 1)[0] for ch in word if ch.isalpha()}
        if "LATIN" in scripts and scripts & _CONFUSABLE_SCRIPTS:
            return True
    return False


_fold_label = functools.lru_cache(maxsize=4096)(_fold)
_mixes_label = functools.lru_cache(maxsize=4096)(_mixes)
