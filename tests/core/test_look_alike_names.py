"""Names that read as another (``core/look_alike_names.py``): a name of one script with nothing hidden reads
as itself; two names read alike when their UTS #39 skeletons (case-insensitive) meet. The table is Unicode's
(``confusable_homoglyphs``' copy), so look-alikes of scripts no test names are caught too, and names that
merely share letters are not."""

from __future__ import annotations

import unicodedata

import pytest

from sentinel_mcp.core.look_alike_names import looks_alike, name_flaw


@pytest.mark.parametrize("name", [
    "booking", "Booking Agent", "home-hub 2", "Бронирование", "Κράτηση", "東京タワー Tower", "Wi-Fi 设置",
    "서울 Hub", "ＡＬＩＣＥ", "José", "naïve café", "שלום", "مرحبا",
])
def test_a_name_of_one_script_reads_as_itself(name: str) -> None:
    assert name_flaw(name) is None


@pytest.mark.parametrize("name", [
    "b\u043eoking",  # a Cyrillic о among Latin letters
    "\u0392ooking",  # a Greek Β
    "\u13a0elete",  # a Cherokee Ꭰ
    "pay\u0440al",  # a Cyrillic р
    "Вова Laptop",  # Cyrillic and Latin words in one name
])
def test_a_name_that_mixes_scripts_is_flagged(name: str) -> None:
    assert "look-alike" in (name_flaw(name) or "")


@pytest.mark.parametrize("name", [
    "boo\u200bking", "\u202ebooking", "book\u2066ing\u2069", "book\u00ading", "book\ufe0f", "book\U000e0041",
    "book\x1b[2Jing", "book\u061cing",
])
def test_a_name_with_a_hidden_character_is_flagged(name: str) -> None:
    assert "invisible" in (name_flaw(name) or "")


@pytest.mark.parametrize("spelling", [
    "BOOK", "\u0412\u041e\u041e\u041a", "\u0392\u039f\u039f\u039a", "b\u043eok", "B00K", "Bo\u0307ok",
    "b\u200book", "\uff42\uff4f\uff4f\uff4b", "\U0001d41b\U0001d428\U0001d428\U0001d424", "\u13f4OOK",
])
def test_spellings_that_read_as_book_look_alike(spelling: str) -> None:
    assert looks_alike(spelling, "book") and looks_alike("book", spelling)


@pytest.mark.parametrize("a,b", [
    ("alice", "bob"), ("book", "books"), ("rat", "tau"), ("Бронирование", "Бронированная"),
    ("Κράτηση", "Κρατήσεις"), ("kitchen", "kitchens"), ("home-hub", "home-hub-2"),
])
def test_different_names_do_not_look_alike(a: str, b: str) -> None:
    assert not looks_alike(a, b)


def test_a_name_too_long_to_read_at_a_glance_is_flagged() -> None:
    assert name_flaw("a" * 200) is None and "longer than" in (name_flaw("a" * 201) or "")


def _table_entries() -> list[tuple[str, str]]:
    """Every entry of the shipped ``confusables.txt`` whose source a skeleton sees as it is: not hidden (it is
    dropped) and unchanged by NFD (a skeleton takes its marks off: "ö" is "o", whatever the table pairs "ö"
    with)."""
    from sentinel_mcp.core.confusable_table import data_text, entries
    from sentinel_mcp.core.display_text import is_hidden

    table = entries(data_text())
    assert len(table) > 6000  # the whole file, not a part of it
    return [(s, p) for s, p in table.items() if not is_hidden(s) and unicodedata.normalize("NFD", s) == s]


@pytest.mark.parametrize("start", range(8))
def test_every_entry_of_unicodes_table_reads_as_its_prototype(start: int) -> None:
    """Each entry of Unicode's data file, inside a word: the source character reads as its prototype (the
    Greek lunate sigma "ϲ" as "c": NFKC, taken first, made it a final sigma, which reads as "o")."""
    entries = _table_entries()[start::8]
    wrong = [(f"U+{ord(s):04X}", p) for s, p in entries if not looks_alike(f"curr{s}ncy", f"curr{p}ncy")]
    assert not wrong, wrong


@pytest.mark.parametrize("spelling", ["curren\u03f2y", "\u03f2urrency", "CURREN\u03f9Y",
                                      "\u03f2urren\u03f2y"])
def test_a_greek_lunate_sigma_reads_as_c(spelling: str) -> None:
    assert looks_alike(spelling, "currency")


def test_an_ascii_name_has_the_scripts_the_table_gives_it() -> None:
    """``scripts_of`` answers an ASCII name without the script table (its load is a cold start's cost, issue
    21): the answer is the table's, for every ASCII character alone and in a name."""
    from confusable_homoglyphs import categories

    from sentinel_mcp.core.look_alike_names import _ANY_SCRIPT, scripts_of

    for ch in map(chr, range(128)):
        assert scripts_of(ch) == frozenset({categories.alias(ch)}) - _ANY_SCRIPT, repr(ch)
    for name in ("airline", "get_weather-2", "", "  ", "A.B/c", "42"):
        table = frozenset(categories.alias(ch) for ch in name) - _ANY_SCRIPT
        assert scripts_of(name) == table, name
