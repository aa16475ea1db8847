"""Screen labels as the rules read them: what a person would read, in plain Latin letters.

The risk rules match English words ("delete", "buy", "send"). A hostile screen spells them so a reader sees
the word and a matcher does not: fullwidth letters ("Ｄｅｌｅｔｅ"), combining accents ("Délete"), letters of
another script that look Latin ("Dеlete" with a Cyrillic е, "Вuy", "Ρublish" with a Greek Ρ), Latin letters
that NFKC keeps ("ᴅᴇʟᴇᴛᴇ" in small capitals, "Unınstall" with a dotless ı), whole words in a script whose
letters look Latin (Cherokee "ᎠᎬᏞᎬᎢᎬ", Greek capitals "ΡΑΥΜΕΝΤ"). ``fold`` undoes them (compatibility forms,
marks, and every letter Unicode's TR39 confusables read as one Latin letter: ``core/confusable_table``, the
product's one copy of ``confusables.txt``) after the invisible characters are dropped. A table may still miss
a letter, so ``mixes_scripts`` tells a word that mixes Latin with any script that may imitate it (everything
but CJK, kana and Hangul), which no honest label does: the firewall asks whatever the word says.
"""

from __future__ import annotations

import functools
import unicodedata

from sentinel_mcp.core.confusable_table import prototypes
from sentinel_mcp.core.display_text import is_hidden

# Letters that a reader takes for plain Latin ones (Unicode TR39 confusables, the common part)
_LOOK_ALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "ӏ": "l", "ү": "y", "һ": "h", "ɡ": "g", "ь": "b", "п": "n", "г": "r", "д": "d", "л": "n", "и": "u",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "ω": "w", "μ": "u", "ς": "c", "σ": "o", "ϲ": "c", "ϳ": "j",
    # Latin letters that NFKC keeps and a reader takes for plain ones: small capitals ("ᴅᴇʟᴇᴛᴇ"), IPA
    # letters, the dotless i ("Unınstall"), letters with a stroke; "ß" is what casefold makes of it
    "ı": "i", "ɩ": "i", "ɪ": "i", "ʟ": "l", "ᴅ": "d", "ᴇ": "e", "ᴛ": "t", "ʙ": "b", "ᴜ": "u", "ʏ": "y",
    "ɴ": "n", "ꜱ": "s", "ᴘ": "p", "ᴀ": "a", "ᴄ": "c", "ᴏ": "o", "ʀ": "r", "ᴍ": "m", "ᴋ": "k", "ᴡ": "w",
    "ᴠ": "v", "ᴢ": "z", "ʜ": "h", "ᴊ": "j", "ɑ": "a", "ɵ": "o", "ł": "l", "ø": "o", "đ": "d",
    "ħ": "h", "ŧ": "t", "ƚ": "l", "ȷ": "j", "ɾ": "r", "ʋ": "u", "ɯ": "w",
})
# Scripts a word may mix with Latin letters without looking like a Latin word (CJK labels do: "Wi-Fi设置");
# any other letter next to Latin ones in one word (Cyrillic, Greek, Armenian, Cherokee, Lisu, ...) is how a
# look-alike is spelled, so the allow list is what is known to be fine, not a list of the bad scripts
_SCRIPTS_MIXED_HONESTLY = frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL"})
CACHED_LENGTH = 200  # labels are short: thousands of them are kept folded
# the window of a label too long to read whole (label_window.py, at most 4,097 characters) is folded several
# times in one rating (firewall, rules, question): a few are kept; anything longer is folded each time
WINDOW_LENGTH = 8192


class FoldWork:
    """How many characters were handed to ``fold`` and ``mixes_scripts``: the work tests bound (a rating
    must not grow with a hostile label's length), instead of a clock."""

    characters = 0


work = FoldWork()


def fold(text: str) -> str:
    """``text`` lower-cased, without invisible characters or marks, with look-alike letters made Latin."""
    work.characters += len(text)
    if text.isascii() and text.isprintable():
        return text.lower()
    if len(text) <= CACHED_LENGTH:
        return _fold_label(text)
    return _fold_window(text) if len(text) <= WINDOW_LENGTH else _fold(text)


def mixes_scripts(text: str) -> bool:
    """Whether one word of ``text`` has Latin letters and letters of a script that may imitate Latin (any
    script but the few known not to: ``_SCRIPTS_MIXED_HONESTLY``)."""
    work.characters += len(text)
    if text.isascii():
        return False
    if len(text) <= CACHED_LENGTH:
        return _mixes_label(text)
    return _mixes_window(text) if len(text) <= WINDOW_LENGTH else _mixes(text)


def _fold(text: str) -> str:
    visible = "".join(ch for ch in text if not is_hidden(ch)).translate(_before_compatibility())
    plain = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", visible))
    bare = "".join(ch for ch in plain if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare).casefold().translate(_look_alikes())


@functools.cache
def _look_alikes() -> dict[int, str]:
    """Every letter that Unicode's confusables (TR39 ``confusables.txt``, ``core/confusable_table``) read as
    one Latin letter or digit, folded to it: Cherokee "ᎠᎬᏞᎬᎢᎬ", Lisu, Warang Citi, Canadian syllabics,
    Hebrew, Arabic... no hand-written table covers every script a screen may borrow from. Ours is the floor
    (it also has what TR39 maps to letter pairs or leaves out); a letter is keyed by its case-folded form too
    (Cherokee small letters fold to capitals), after every letter of the table keyed by itself. Loaded on the
    first label that is not plain ASCII."""
    readings = _table_readings()
    table = dict(_LOOK_ALIKES)
    for char, latin in readings:
        table.setdefault(ord(char), latin)
    for char, latin in readings:
        key = char.casefold()
        if len(key) == 1 and not key.isascii():
            table.setdefault(ord(key), latin)
    return table


@functools.cache
def _before_compatibility() -> dict[int, str]:
    """The letters of the table that compatibility forms (NFKC) or case folding would turn into another
    non-Latin letter, read first as the table reads them: a Greek capital eta is an H (its small letter
    reads as n), a capital mu an M (its small letter as u), so "ΡΑΥΜΕΝΤ" is "payment"; a lunate sigma "ϲ" is
    a c (NFKC makes it a final sigma, which case folding makes a σ, an o). A letter NFKC makes Latin (a
    fullwidth "Ｓ", a long "ſ") is left to it."""
    out = {}
    for char, latin in _table_readings():
        made = unicodedata.normalize("NFKC", char)
        if not made.isascii() and (made.casefold() != made or made != char):
            out[ord(char)] = _LOOK_ALIKES.get(ord(char), latin)
    return out


@functools.cache
def _table_readings() -> tuple[tuple[str, str], ...]:
    """Each source character of the table that reads as one Latin letter or digit, with that letter in
    lower case. TR39 puts the capital I with l and 1 (one skeleton): a capital of that class is the I of a
    capital word ("ΙNSTALL" is "install"), its other members an l."""
    out = []
    for char, prototype in prototypes().items():
        if len(char) != 1 or char.isascii() or len(prototype) != 1:
            continue
        if not (prototype.isascii() and prototype.isalnum()):
            continue
        upper = char.casefold() != char
        out.append((char, "i" if prototype == "l" and upper else prototype.lower()))
    return tuple(out)


def _mixes(text: str) -> bool:
    visible = "".join(ch for ch in text if not is_hidden(ch))  # "D\u200bеlete" is one word to a reader
    for word in unicodedata.normalize("NFKC", visible).split():
        scripts = {unicodedata.name(ch, "?").split(" ", 1)[0] for ch in word if ch.isalpha()}
        if "LATIN" in scripts and scripts - _SCRIPTS_MIXED_HONESTLY:
            return True
    return False


_fold_label = functools.lru_cache(maxsize=4096)(_fold)
_mixes_label = functools.lru_cache(maxsize=4096)(_mixes)
_fold_window = functools.lru_cache(maxsize=32)(_fold)
_mixes_window = functools.lru_cache(maxsize=32)(_mixes)
