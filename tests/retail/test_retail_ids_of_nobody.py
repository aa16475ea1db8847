"""'must deny any requests for tasks related to any other user' / 'you have to authenticate the user identity'
first: an id that names nothing is answered as another customer's id is, so the agent cannot tell which order
ids and user ids exist. Before, a made-up order id was refused at once with the store's "Order not found"
(and a made-up user id of modify_user_address with "User not found"), before any authentication, while
another customer's id asked for the user's email (or, once the user was known, was refused as not theirs):
an oracle of the store's orders and customers, one id a call.

One gateway over the permissive retail server for the module; each call is a conversation of its own."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from tests.retail.retail_rig import OLIVIA, YES, AnsweringUser, conversation, held_runtime, text_of

pytestmark = [pytest.mark.timeout(180), pytest.mark.asyncio(loop_scope="module")]

EMMAS_ORDER, NO_ORDER = "#W8770097", "#W0000000"  # Emma Smith's pending order; an id no order has
EMMA, NOBODY = "emma_smith_8564", "nobody_0000"
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX", "country": "USA",
           "zip": "78701"}


def _order_calls(oid: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("retail__get_order_details", {"order_id": oid}),
        ("retail__cancel_pending_order", {"order_id": oid, "reason": "no longer needed"}),
        ("retail__modify_pending_order_address", {"order_id": oid} | ADDRESS),
        ("retail__modify_pending_order_payment", {"order_id": oid, "payment_method_id": "paypal_8049766"}),
        ("retail__modify_pending_order_items", {"order_id": oid, "item_ids": ["1355937109"],
                                                "new_item_ids": ["2226219750"],
                                                "payment_method_id": "paypal_8049766"}),
        ("retail__return_delivered_order_items", {"order_id": oid, "item_ids": ["9727387530"],
                                                  "payment_method_id": "paypal_8049766"}),
        ("retail__exchange_delivered_order_items", {"order_id": oid, "item_ids": ["9727387530"],
                                                    "new_item_ids": ["2509076505"],
                                                    "payment_method_id": "paypal_8049766"}),
    ]


CASES = {tool: (tool, (real, made_up), EMMAS_ORDER, NO_ORDER)
         for (tool, real), (_, made_up) in zip(_order_calls(EMMAS_ORDER), _order_calls(NO_ORDER))}
CASES["retail__modify_user_address"] = (
    "retail__modify_user_address", ({"user_id": EMMA} | ADDRESS, {"user_id": NOBODY} | ADDRESS), EMMA, NOBODY)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held_runtime(tmp_path_factory.mktemp("retail")):
        yield rt


async def _answer(
    runtime: Any, rules: list[tuple[str, Any]], tool: str, args: dict[str, Any]
) -> tuple[str, list[str]]:
    user = AnsweringUser(rules)
    async with conversation(runtime, user) as c:
        r = await c.call_tool(tool, args)
    assert r.is_error, text_of(r)
    return text_of(r), user.messages()


@pytest.mark.parametrize("who", ["before authentication", "the user known"])
@pytest.mark.parametrize("case", sorted(CASES))
async def test_an_id_of_nobody_reads_as_another_customers(runtime: Any, case: str, who: str) -> None:
    tool, (real, made_up), real_id, made_up_id = CASES[case]
    # before authentication the user declines to say who they are; else Olivia, who says yes to everything
    rules = [] if who == "before authentication" else [OLIVIA, *YES, ("Change your default address?", True)]
    text, asked = await _answer(runtime, rules, tool, real)
    made_up_text, made_up_asked = await _answer(runtime, rules, tool, made_up)
    assert "Sentinel refused this call" in made_up_text, made_up_text
    assert made_up_text.replace(made_up_id, real_id) == text
    assert made_up_asked == asked


async def _why_not(runtime: Any, known: bool, tool: str, args: dict[str, Any]) -> str:
    async with conversation(runtime, AnsweringUser([OLIVIA])) as c:
        if known:  # Olivia authenticated by reading an order of hers
            r = await c.call_tool("retail__get_order_details", {"order_id": "#W7941031"})
            assert not r.is_error, text_of(r)
        return text_of(await c.call_tool("sentinel__sentinel_why_not", {"tool": tool, "arguments": args}))


@pytest.mark.parametrize("who", ["before authentication", "the user known"])
@pytest.mark.parametrize("case", sorted(CASES))
async def test_why_not_tells_no_more_of_an_id_of_nobody(runtime: Any, case: str, who: str) -> None:
    """The same through sentinel_why_not, which asks nothing: before, for another customer's order it said,
    before authentication, that the call rests on facts the caller may not see (the guard had read her order,
    taking its owner for the user), and for a made-up id that the user's email is needed."""
    tool, (real, made_up), real_id, made_up_id = CASES[case]
    known = who == "the user known"
    text = await _why_not(runtime, known, tool, real)
    assert (await _why_not(runtime, known, tool, made_up)).replace(made_up_id, real_id) == text
