"""Screen labels as the rules read them: what a person would read, in plain Latin letters.

The risk rules match English words ("delete", "buy", "send"). A hostile screen spells them so a reader sees
the word and a matcher does not: fullwidth letters ("Ｄｅｌｅｔｅ"), combining accents ("Délete"), letters of
another script that look Latin ("Dеlete" with a Cyrillic е, "Вuy", "Ρublish" with a Greek Ρ), Latin letters
that NFKC keeps ("ᴅᴇʟᴇᴛᴇ" in small capitals, "Unınstall" with a dotless ı), whole words in a script whose
letters look Latin (Cherokee "ᎠᎬᏞᎬᎢᎬ"). ``fold`` undoes them (compatibility forms, marks, and every letter
Unicode's TR39 confusables fold to one Latin letter) after the invisible characters are dropped. A table may
still miss a letter, so ``mixes_scripts``
tells a word that mixes Latin with any script that may imitate it (everything but CJK, kana and Hangul),
which no honest label does: the firewall asks whatever the word says.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from importlib import resources

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
    visible = "".join(ch for ch in text if not is_hidden(ch))
    plain = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", visible))
    bare = "".join(ch for ch in plain if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", bare).casefold().translate(_look_alikes())


@functools.cache
def _look_alikes() -> dict[int, str]:
    """Every letter that Unicode's confusables (TR39, the ``confusable_homoglyphs`` data) say looks like one
    Latin letter or digit, folded to it: Cherokee "ᎠᎬᏞᎬᎢᎬ", Lisu, Warang Citi, Canadian syllabics... no
    hand-written table covers every script a screen may borrow from. Ours is the floor (it also has what TR39
    maps to letter pairs or leaves out); a letter is keyed by its case-folded form too (``_fold`` folds case
    first: Cherokee small letters fold to capitals). Loaded on the first label that is not plain ASCII."""
    table = dict(_LOOK_ALIKES)
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    for char, glyphs in json.loads(data).items():
        if len(char) != 1 or char.isascii():
            continue
        plain = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()]
        if not plain:
            continue
        latin = min(plain, key=str.isdigit).lower()  # a letter before a digit ("O", not "0")
        for key in {char, char.casefold()}:
            if len(key) == 1 and not key.isascii():
                table.setdefault(ord(key), latin)
    return table


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
