"""Hostile data as the console renders it: a call's arguments and a proof are what a client (or a tampered
audit row) made them, so their number is the client's too. Every page stays bounded, and says what it left out
rather than dropping it silently. A real Sentinel over HTTP on 127.0.0.1 (the console rig)."""

from __future__ import annotations

import html
import re

import pytest

from sentinel_mcp.console.proof_view import proof_nodes
from tests.console.console_rig import (BOB, console_config, http_sentinel, items_of, mcp_client, signed_in,
                                      text)

pytestmark = pytest.mark.timeout(240)
ITEM = re.compile(r'<li class="card item.*?</li>\n', re.S)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-hostile-render"))
    with http_sentinel(cfg) as (base, proc):
        yield base, proc


async def test_a_held_call_of_very_many_arguments_makes_a_bounded_item_that_says_what_it_left_out(sentinel):
    """Before, the inbox listed every argument: a call of 40,000 made a 1.5 MB page, with the argument that
    mattered (``name``, sorted last) 40,000 rows below the question and nothing saying it was there."""
    base, _ = sentinel
    async with signed_in(base, BOB) as bob, mcp_client(base, BOB) as c:
        for n, spelling in ((5_000, "k{:05d}"), (3_000, "\u202e{}\u200b")):
            args = {spelling.format(i): "x" for i in range(n)}
            args["name"] = "victim"
            first = await c.call_tool("tb__delete_thing", args)
            assert first.is_error and "waiting for the user" in text(first)
            page = await bob.wait_items(1)
            [item] = items_of(page)
            [card] = ITEM.findall(page)
            rows = card.count("<dt>")
            assert 0 < rows <= 200, rows  # bounded, whatever the client sent
            said = re.search(r"(\d+) more arguments? not shown", card)
            assert said is not None, card[-2000:]
            assert rows + int(said.group(1)) == n + 1, (rows, said.group(1))  # the count is exact
            assert len(card) < 300_000, len(card)
            assert "\u202e" not in html.unescape(card)  # a key is shown as what it is, too
            r = await bob.post(f"/console/inbox/{item}", {"decision": "deny"})
            assert r.status_code == 303


def test_a_proof_of_very_many_branches_makes_a_bounded_tree_that_says_it_was_cut():
    """Before, the node budget cut each branch past it into its own "proof cut here" node: a list of a million
    made a million nodes (one page row each)."""

    def count(node) -> int:
        return 1 + sum(count(c) for c in node.children)

    for tree in (
        {"all": [{"fact": f"f({i})"} for i in range(100_000)]},
        [{"goal": f"g({i})", "by": "native"} for i in range(100_000)],
        {f"k{i}": {"all": [{"fact": "x"}] * 50} for i in range(5_000)},
    ):
        root, _ = proof_nodes({"tree": tree})
        assert root is not None
        total = count(root)
        assert total <= 2_100, total
        labels = []
        stack = [root]
        while stack:
            n = stack.pop()
            labels.append(n.label)
            stack.extend(n.children)
        assert any("cut" in label for label in labels)
