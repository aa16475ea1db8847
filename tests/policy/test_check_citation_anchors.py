"""``check`` of what a citation claims: its anchor must name one sentence of the policy, in whole words. A
draft (or a person) citing ``policy_ref(shop, 'the')``, ``'e'`` or ``'efunds may'`` passed: the anchor was
found "in" the document, and every denial then quoted the first sentence holding it as the rule's basis, a
sentence that says nothing of the rule (a quote the policy does not make)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(60)

POLICY = """# Shop policy

## Refunds

Refunds may only be issued for delivered orders. The user must confirm the amount.

## Accounts

Never delete a customer's **account**. The user must confirm the deletion in person.

## Exchanges

The user must confirm the amount.
"""


def _rulebase(anchor: str) -> str:
    quoted = anchor.replace("\\", "\\\\").replace("'", "\\'")
    return (
        "policy_document(shop, 'policy.md').\n"
        f"guard('shop__refund', [], require(true, 'refunds', policy_ref(shop, '{quoted}'))).\n"
    )


_problems = partial(checked_lines, policy=POLICY)


@pytest.mark.parametrize(
    "anchor",
    [
        "the",  # in every paragraph
        "e",
        "efunds may",  # not whole words
        "may only be issue",
        "The user must confirm",  # in three paragraphs
        "The user must confirm the amount",  # word for word under two sections
        "Accounts \u203a the",  # one paragraph, two sentences
    ],
)
async def test_an_anchor_that_names_no_one_sentence_is_warned_about(tmp_path: Path, anchor: str) -> None:
    problems = await _problems(tmp_path, _rulebase(anchor))
    assert any(p.startswith("warning 2 ") and "names no one sentence" in p for p in problems), problems


@pytest.mark.parametrize(
    "anchor",
    [
        "Refunds may only be issued",
        "refunds  MAY only be issued for delivered orders.",  # case, spacing
        "never delete a customer's account",  # markup
        "Exchanges \u203a The user must confirm the amount",  # a repeated sentence, named by its section
        "Refunds \u203a The user must confirm the amount",
        "delivered orders. The user must",  # across two sentences of one paragraph
    ],
)
async def test_an_anchor_that_names_one_sentence_is_clean(tmp_path: Path, anchor: str) -> None:
    assert await _problems(tmp_path, _rulebase(anchor)) == []
