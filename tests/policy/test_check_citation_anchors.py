"""``check`` of what a citation claims: its anchor must name one sentence of the policy, in whole words. A
draft (or a person) citing ``policy_ref(shop, 'the')``, ``'e'`` or ``'efunds may'`` passed: the anchor was
found "in" the document, and every denial then quoted the first sentence holding it as the rule's basis, a
sentence that says nothing of the rule (a quote the policy does not make)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(60)

POLICY = """# Shop policy

## Refunds

Refunds may only be issued for delivered orders. The user must confirm the amount.

## Accounts

Never delete a customer's **account**. The user must confirm the deletion in person.

## Exchanges

The user must confirm the amount.
"""


async def _problems(tmp_path: Path, anchor: str) -> list[str]:
    (tmp_path / "policy.md").write_text(POLICY)
    f = tmp_path / "rb.pl"
    quoted = anchor.replace("\\", "\\\\").replace("'", "\\'")
    f.write_text(
        "policy_document(shop, 'policy.md').\n"
        f"guard('shop__refund', [], require(true, 'refunds', policy_ref(shop, '{quoted}'))).\n"
    )
    return [f"{p.severity} {p.line} {p.message}" for p in await check_files(shared_engine(), [f])]


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
    problems = await _problems(tmp_path, anchor)
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
    assert await _problems(tmp_path, anchor) == []
