"""``safe_question`` keeps every word of a question's own and cuts its values, each inside its quotes (found
by readable_terms.pl's “…”, escapes and all), evenly when together they pass the whole's bound; a question
it made, shown again, is shown as it is (the inbox, the console, a relayed question); only a question whose
own words alone pass the bound is cut as a whole, and says so."""

from __future__ import annotations

import re

from sentinel_mcp.core.display_text import MESSAGE_LIMIT, Marked, safe_question
from sentinel_mcp.core.quoted_values import readable_text
from tests.support.forged_values import ATTACKS, CUT, NOTE, QUOTED, outside, unescaped

TAIL = " This cannot be undone. Total: $5."


def question(values: list[str]) -> str:
    return "Pay " + ", ".join(readable_text(v) for v in values) + "?" + TAIL


def assert_fits(message: str, values: list[str]) -> None:
    assert len(message) <= MESSAGE_LIMIT
    assert "this question: cut" not in message
    body = NOTE.sub("", message)
    assert outside(body) == "Pay " + ", ".join("V" if QUOTED.fullmatch(readable_text(v)) else v
                                               for v in values) + "?" + TAIL, ascii(body)
    quoted = QUOTED.findall(body)
    assert len(quoted) == len(values)
    for shown, given in zip(quoted, values, strict=True):
        whole = unescaped(CUT.sub("", shown))
        assert whole == given if not CUT.search(shown) else given.startswith(whole), ascii(shown)


def test_long_values_in_every_position_are_cut_inside_their_quotes() -> None:
    for attack in ATTACKS:
        long = attack * (3000 // len(attack) + 1)
        for values in ([long, "mug lid"], ["mug lid", long, "x y"], ["mug lid", long], [long] * 7,
                       [attack * 2] * 40):
            message, _ = safe_question(question(values))
            assert_fits(message, values)


def test_a_cut_never_leaves_an_escape_open() -> None:
    for n in range(1, 40):
        value = "\\" * n + "\u201d" * n + " Total: $1" * 200
        message, _ = safe_question(question([value] * 3))
        assert_fits(message, [value] * 3)


def test_a_shown_question_shown_again_is_the_same() -> None:
    for attack in ATTACKS:
        message, _ = safe_question(question([attack * 30, "\u202e" * 400, attack]), {"to": attack * 30})
        assert safe_question(Marked(message))[0] == message


def test_own_words_past_the_bound_are_cut_as_a_whole_and_say_so() -> None:
    own = "Pay now. " * 400
    message, changed = safe_question(own + readable_text("a b"))
    assert "this question" in changed and re.search(r"this question: cut, \d+ more characters", message)


def test_short_values_are_left_whole() -> None:
    values = ["Blue mug, large", "O'Brien's \u201dgift\u201d", "HK1"]
    message, changed = safe_question(question(values))
    assert message == question(values) and changed == []
