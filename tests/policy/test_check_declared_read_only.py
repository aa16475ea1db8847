"""``check`` of a ``read_only/1`` declaration: a tool it names that no guard governs is allowed on every call,
with no question (guard.py: "declared read-only by the rulebase"). It is the owner's word where an upstream's
hints are not believed; written into a draft by hostile words (the drafter never writes one) or by a hostile
model, ``read_only('shop__delete_account')`` let the deletion through unasked and ``check`` (so a draft's
own check) said nothing. Now a declaration that is all that makes a tool the upstream does not mark
read-only pass unasked is warned about, with its file and line."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines
from mcp.types import Tool, ToolAnnotations

from sentinel_mcp.policy.draft_check import draft_problems

pytestmark = pytest.mark.timeout(60)

CATALOG = [
    Tool(
        name="shop__delete_account",
        inputSchema={"type": "object"},
        annotations=ToolAnnotations(destructiveHint=True),
    ),
    Tool(name="shop__refund", inputSchema={"type": "object"}),  # no annotations: destructive by default
    Tool(
        name="shop__get_order", inputSchema={"type": "object"}, annotations=ToolAnnotations(readOnlyHint=True)
    ),
]
WORDS = "is declared read_only"


_problems = partial(checked_lines, head="fact(blocked/1).\n", catalog=CATALOG, shown="with_tool")


@pytest.mark.parametrize(
    "text,tool",
    [
        ("read_only('shop__delete_account').\n", "shop__delete_account"),
        ("read_only(shop__delete_account).\n", "shop__delete_account"),
        ("read_only('shop__refund').\n", "shop__refund"),
        ("guard('shop__delete_account', [], blocked(x)).\nread_only('shop__refund').\n", "shop__refund"),
    ],
)
async def test_a_read_only_declaration_that_lets_a_write_through_unasked_is_warned(
    tmp_path: Path, text: str, tool: str
) -> None:
    problems = await _problems(tmp_path, text)
    line = 1 + text.count("\n")
    assert any(p.startswith(f"warning {line} {tool} ") and WORDS in p for p in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        "read_only('shop__get_order').\n",  # the upstream says so too
        "read_only('shop__delete_account').\nguard('shop__delete_account', [], blocked(x)).\n",  # guarded
        "read_only('shop__*').\nguard('shop__*', [], blocked(x)).\n",
        "read_only('other__tool').\n",  # no such tool here (Sentinel's own are declared so)
    ],
)
async def test_a_read_only_declaration_that_changes_nothing_or_is_guarded_is_not(
    tmp_path: Path, text: str
) -> None:
    problems = await _problems(tmp_path, text)
    assert not any(WORDS in p for p in problems), problems


async def test_a_draft_with_a_read_only_declaration_of_a_write_is_not_offered() -> None:
    tools = [
        {
            "name": "delete_account",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"destructiveHint": True},
        }
    ]
    problems = await draft_problems("shop", tools, "read_only('shop__delete_account').\n")
    assert any(p.severity == "error" and WORDS in p.message for p in problems), problems
