"""``check`` of a rulebase whose text reads otherwise than Prolog loads it ("trojan source"): a direction
override or isolate reorders what follows it on screen, a zero-width or other default-ignorable character
splits an atom unseen (``'admin\u200b'`` is not ``admin``). The console's editor said so; ``sentinel-mcp check
FILE`` (the same check, run in a terminal, in CI, on a draft) did not. Each such character is named with its
file, line, column and Unicode name, whether the file loads or not; letters of other scripts are text."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines
from tests.policy.test_cli_and_checker import cli

pytestmark = pytest.mark.timeout(60)

HEAD = "fact(role/2).\n"

# (the line after HEAD, the character, its 1-based column, its Unicode name)
SPELLINGS = [
    ("guard('x__delete', [user = U], role(U, 'admin\u200b')).\n", "\u200b", 46, "ZERO WIDTH SPACE"),
    ("% allow only admins \u202e }\u2066 ,admin(U) \u2069 {\n", "\u202e", 21, "RIGHT-TO-LEFT OVERRIDE"),
    ("guard('x__drop', [], role(\"ops\u2067\", x)).\n", "\u2067", 31, "RIGHT-TO-LEFT ISOLATE"),
    ("guard('x__pay', [], role(x, ad\u00admin)).\n", "\u00ad", 31, "SOFT HYPHEN"),
    ("guard('x__ship', [], role(x, '\ufeffuser')).\n", "\ufeff", 31, "ZERO WIDTH NO-BREAK SPACE"),
    ("guard('x__tag', [], role(x, 'a\U000e0041')).\n", "\U000e0041", 31, "TAG LATIN CAPITAL LETTER A"),
    ("guard('x__rtl', [], role(x, 'a\u061cb')).\n", "\u061c", 31, "ARABIC LETTER MARK"),
    ("guard('x__fill', [], role(x, 'a\u3164')).\n", "\u3164", 32, "HANGUL FILLER"),
]


_problems = partial(checked_lines, shown="full")


@pytest.mark.parametrize("line, ch, column, name", SPELLINGS)
async def test_a_hidden_character_is_named_with_line_column_and_name(
    tmp_path: Path, line: str, ch: str, column: int, name: str
) -> None:
    problems = await _problems(tmp_path, HEAD + line)
    hidden = [p for p in problems if f"U+{ord(ch):04X}" in p]
    assert len(hidden) == 1, problems
    assert "rb.pl:2: warning:" in hidden[0] and f"column {column}" in hidden[0] and name in hidden[0], hidden
    assert ch not in hidden[0]  # named, never written as it is


async def test_a_file_that_does_not_load_still_has_its_hidden_characters_named(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, HEAD + "guard('x__y', [], role(x, 'a\u202e'))\nbroken(\n")
    assert any("syntax error" in p for p in problems), problems
    assert any("rb.pl:2: warning:" in p and "U+202E" in p and "column 29" in p for p in problems), problems


async def test_letters_of_other_scripts_and_tabs_are_just_text(tmp_path: Path) -> None:
    text = HEAD + "% café, 日本語, ελληνικά, עברית, العربية\n\tnote('naïve').\n"
    problems = await _problems(tmp_path, text)
    assert not any("U+" in p for p in problems), problems


def test_the_command_line_check_reports_them(tmp_path: Path) -> None:
    f = tmp_path / "rb.pl"
    f.write_text(HEAD + "".join(s[0] for s in SPELLINGS[:2]), encoding="utf-8")
    r = cli("check", str(f), cwd=tmp_path)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert f"{f}:2: warning:" in r.stdout and "U+200B ZERO WIDTH SPACE" in r.stdout, r.stdout
    assert f"{f}:3: warning:" in r.stdout and "U+202E RIGHT-TO-LEFT OVERRIDE" in r.stdout, r.stdout
    assert "\u200b" not in r.stdout and "\u202e" not in r.stdout


def test_a_byte_order_mark_at_the_start_is_no_hidden_character(tmp_path: Path) -> None:
    """Windows' editors save UTF-8 with a BOM; SWI-Prolog passes over it (the file's first clause is read as
    written) and so does an editor: the warning said the line read otherwise than it showed. A U+FEFF anywhere
    else still is one (inside an atom it is a character of the atom), at its column as an editor counts it."""
    f = tmp_path / "rb.pl"
    f.write_text("\ufeff" + HEAD + "guard('x__ship', [], role(x, '\ufeffuser')).\n", encoding="utf-8")
    r = cli("check", str(f), cwd=tmp_path)
    assert f"{f}:1:" not in r.stdout, r.stdout
    assert f"{f}:2: warning:" in r.stdout and "U+FEFF" in r.stdout and "column 31" in r.stdout, r.stdout
    f.write_text("\ufeffrole(a, \u200bb).\n", encoding="utf-8")
    r = cli("check", str(f), cwd=tmp_path)
    assert f"{f}:1: warning:" in r.stdout and "U+200B" in r.stdout and "column 9" in r.stdout, r.stdout
    assert "U+FEFF" not in r.stdout, r.stdout
