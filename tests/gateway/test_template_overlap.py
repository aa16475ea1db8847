"""Which servers' URI templates could match one URI (gateway/template_overlap.py): conservative (literal
prefixes), and linear however hostile the templates (counts, not timings)."""

from __future__ import annotations

import pytest

from sentinel_mcp.gateway import template_overlap
from sentinel_mcp.gateway.template_overlap import literal_prefix, overlapping


@pytest.mark.parametrize("template,prefix", [
    ("a://x/{k}", "a://x/"), ("a://x", "a://x"), ("{k}", ""), ("a://{+p}{?q}", "a://"), ("", ""),
])
def test_literal_prefix(template, prefix):
    assert literal_prefix(template) == prefix


@pytest.mark.parametrize("templates,hit", [
    ([("a", "t://item/{k}"), ("b", "t://item/{k}")], {0, 1}),  # the same template
    ([("a", "t://item/{k}"), ("b", "t://{rest}")], {0, 1}),  # one over the other
    ([("a", "t://item/{k}"), ("b", "t://item/{k}/x")], {0, 1}),
    ([("a", "{k}"), ("b", "zz://x")], {0, 1}),  # a template that starts with a variable claims everything
    ([("a", "t://x/{k}"), ("b", "u://x/{k}")], set()),  # different schemes
    ([("a", "t://x/{k}"), ("a", "t://{k}")], set()),  # one server's own templates never conflict
    ([("a", "t://x/{k}"), ("b", "t://y/{k}"), ("a", "t://{k}"), ("c", "c://")], {1, 2}),
    ([("a", "t://a/{k}"), ("a", "t://{k}"), ("b", "t://a/b/{k}")], {0, 1, 2}),
    ([("b", "t://a/b/{k}"), ("a", "t://{k}"), ("a", "t://a/{k}"), ("c", "t://c{k}")], {0, 1, 2, 3}),
    ([("a", "t://\U0010ffff{k}"), ("b", "t://\U0010ffff\U0010ffffx{k}")], {0, 1}),
])
def test_overlapping(templates, hit):
    assert overlapping(templates) == hit
    # the answer does not depend on the order the servers listed them in
    flipped = list(reversed(templates))
    assert overlapping(flipped) == {len(templates) - 1 - i for i in hit}


def brute(templates: list[tuple[str, str]]) -> set[int]:
    found = set()
    for i, (si, ti) in enumerate(templates):
        for sj, tj in templates:
            pi, pj = literal_prefix(ti), literal_prefix(tj)
            if si != sj and (pi.startswith(pj) or pj.startswith(pi)):
                found.add(i)
    return found


def test_agrees_with_the_pairwise_rule_on_many_mixes():
    import random

    rng = random.Random(7)
    for _ in range(300):
        templates = [(rng.choice("abc"), "".join(rng.choice("xy") for _ in range(rng.randint(0, 4))) + "{k}")
                     for _ in range(rng.randint(0, 12))]
        assert overlapping(templates) == brute(templates), templates


def test_hostile_listings_stay_linear(monkeypatch):
    """Thousands of equal templates, or one long chain of nested prefixes: each prefix is compared a few
    times, never with every other one."""
    calls = 0

    def counted(text: str, prefix: str) -> bool:
        nonlocal calls
        calls += 1
        return text.startswith(prefix)

    monkeypatch.setattr(template_overlap, "_starts", counted)
    n = 3000
    equal = [("a", "t://{k}")] * n + [("b", "t://{k}")] * n
    assert overlapping(equal) == set(range(2 * n)) and calls <= 2 * 2 * n
    calls = 0
    chain = [("a", "t" * i + "{k}") for i in range(1, n + 1)] + [("b", "u{k}")]
    assert overlapping(chain) == set() and calls <= 2 * (n + 1)
