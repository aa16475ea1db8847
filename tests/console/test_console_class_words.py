"""A class attribute on a console page takes one word from data, never several: Jinja escapes quotes and
angle brackets but keeps spaces, so a stored status "x skip" gave its row the class ``skip`` (moved off the
page by the style) and "x approve" dressed it as the Approve button."""

from __future__ import annotations

import re
import pytest

from sentinel_mcp.console.web import HERE, css_word

CLASS_WITH_DATA = re.compile(r'class="([^"]*\{\{[^"]*)"')
LITERAL_CHOICE = re.compile(r"\{\{ '[a-z]+' if [^}]* else '[a-z]+' \}\}")  # one of two fixed words


SPELLINGS = ["x skip", "x\tapprove", "a\nb", "<b>", "x\u00a0risky", "x\u2028y", "&quot;"]


@pytest.mark.parametrize("value", SPELLINGS)
def test_a_value_is_one_word(value):
    word = css_word(value)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", word), word


def test_ordinary_words_are_kept_and_long_ones_cut():
    assert css_word("completed") == "completed" and css_word("time_cap") == "time_cap"
    assert css_word(3) == "3" and len(css_word("a" * 500)) == 40


def test_every_class_attribute_that_names_data_takes_it_through_css_word():
    found = []
    for template in sorted((HERE / "templates").glob("*.html")):
        for attr in CLASS_WITH_DATA.findall(template.read_text()):
            for expr in re.findall(r"\{\{.*?\}\}", attr):
                if not LITERAL_CHOICE.fullmatch(expr) and not re.search(r"\|css_word \}\}$", expr):
                    found.append((template.name, expr))
    assert found == [], found
