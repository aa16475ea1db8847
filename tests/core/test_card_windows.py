"""Card windows read off prefix sums (``card_numbers._in_group``) agree with checking every window's digits by
Luhn one by one, over many random texts of digits, separators, letters and other scripts' digits."""

import random

from sentinel_mcp.core import card_numbers
from sentinel_mcp.core.card_numbers import card_spans, luhn


def _by_each_window(text: str) -> list[tuple[int, int]]:
    runs = card_numbers._runs(text)
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        group = [runs[k]]
        while k + len(group) < len(runs) and card_numbers._joined(
            text, group[-1][1], runs[k + len(group)][0]
        ):
            group.append(runs[k + len(group)])
        for i in range(len(group)):
            for j in range(i, len(group)):
                digits = "".join(text[a:b] for a, b in group[i : j + 1])
                if len(digits) > 19:
                    break
                if luhn(digits):
                    a, b = group[i][0], group[j][1]
                    if spans and a <= spans[-1][1]:
                        spans[-1] = (spans[-1][0], max(spans[-1][1], b))
                    else:
                        spans.append((a, b))
        k += len(group)
    return spans


def test_windows_agree_with_luhn_over_each_window():
    rng = random.Random(20261203)
    others = " -./a٣²_\n\u200b"
    for _ in range(4000):
        text = "".join(
            rng.choice(others) if rng.random() < 0.35 else rng.choice("0123456789")
            for _ in range(rng.randint(0, 90))
        )
        assert card_spans(text) == _by_each_window(text), repr(text)


def test_known_cards_in_many_runs():
    assert card_spans("4111 1111 1111 1111") == [(0, 19)]
    assert card_spans("4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1") == [(0, 31)]
    assert card_spans("٤١١١١١١١١١١١١١١١") == [(0, 16)]  # Arabic-Indic digits
    assert card_spans("1 " * 5000) == _by_each_window("1 " * 5000)


def test_the_two_readings_of_one_module() -> None:
    """The records read every spacing (a writer spaces a number to slip it by); a screen as an app draws it
    (a date's and a phone's short runs part numbers). Both find a card glued to its brand word."""
    from sentinel_mcp.core.card_numbers import card_spans_as_drawn

    pan = "4000056655665556"
    for text in (f"VISA{pan}", f"card:{pan[:4]}-{pan[4:8]}-{pan[8:12]}-{pan[12:]}", f"Card {pan} ok"):
        assert card_spans(text) and card_spans_as_drawn(text), text
    for text in ("4 0 0 0 0 5 6 6 5 5 6 6 5 5 5 6", "4000  --  0566  --  5566  --  5556"):
        assert card_spans(text) and not card_spans_as_drawn(text), text
    assert not card_spans_as_drawn("1Z999AA10123456784") and not card_spans_as_drawn("12.06.2026 14.06.2026")
