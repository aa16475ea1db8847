"""Writes ``prolog/code_words.pl``: the words a message speaks of a one-time code with and the letter fold
they are looked for under, as ``core/code_words.py`` has them, for ``sentinel_rt:speaks_of_a_code/1``.

One list, read alike by the device's SMS tool, the records' redactor and a rulebase (``device.pl``'s code
rule): a rulebase with its own English-only list let "Tu código es 730551" or "Ваш код 730551" through to a
question while the tool refused them. The fold is written out for every code point where it is not the
character itself (its Python reading depends on ``unicodedata``, which SWI-Prolog's 5.x tables cannot
reproduce), and only where its letter is one a word holds or the short words' test reads beside them (a-z):
a character folded to any other can match no word's character, folded or not (each of those folds to
itself: tests/policy/test_code_word_table.py), so its clause would change no verdict. That leaves a third of
the clauses SWI-Prolog compiles at every engine start and every rulebase rehearsal (5,812 were ~60 ms).

Run ``python -m sentinel_mcp.policy.code_word_table`` after changing the list (tests/policy/
test_code_word_table.py checks the file is what this writes).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from sentinel_mcp.core import code_words

TABLE = Path(__file__).parent / "prolog" / "code_words.pl"

HEADER = """\
/*  One-time code words and their letter fold (Unicode {version}), written by
    sentinel_mcp/policy/code_word_table.py from sentinel_mcp/core/code_words.py: do not edit.
    code_word(Codes): a word, as folded; short_code_word(Codes): a word that counts only standing apart from
    the letters a-z; letter_fold(Code, Folded): a code point whose fold is another that a word holds or is
    one of a-z (any other is left as it is: it can match no word's letter either way). */
:- module(code_words, [code_word/1, short_code_word/1, letter_fold/2]).

"""


def _codes(word: str) -> str:
    return "[" + ",".join(str(ord(c)) for c in word) + "]"


def table_text() -> str:
    lines = [f"code_word({_codes(w)})." for w in code_words.folded_words()]
    lines += [f"short_code_word({_codes(w)})." for w in code_words.SHORT_WORDS]
    readable = set("abcdefghijklmnopqrstuvwxyz").union(*code_words.folded_words(), *code_words.SHORT_WORDS)
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:  # no text holds a lone surrogate
            continue
        folded = code_words.fold_letters(chr(c))
        if folded != chr(c) and folded in readable:
            lines.append(f"letter_fold({c},{ord(folded)}).")
    return HEADER.format(version=unicodedata.unidata_version) + "\n".join(lines) + "\n"


def main() -> None:
    TABLE.write_text(table_text(), encoding="utf-8")
    print(f"wrote {TABLE} (Unicode {unicodedata.unidata_version})")


if __name__ == "__main__":
    main()
