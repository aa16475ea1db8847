"""Attacks on retail.pl through the real gateway (permissive retail server, so only the guard stands in the
way): a hostile or confused agent tries what policy.md forbids in other spellings, across conversations and
after the facts it was decided on changed. Each test names the sentence of policy.md it defends."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.retail.retail_rig import (
    DONT_KNOW,
    OLIVIA,
    YES,
    AnsweringUser,
    conversation,
    data_of,
    order,
    retail_runtime,
    text_of,
)

pytestmark = pytest.mark.timeout(180)

WATCH, BACKPACK = "1355937109", "5917587651"  # the two items of #W7941031 (pending, paid by the Visa card)
# the watch of #W7941031 for another of its options, the difference paid by PayPal
WATCH_SWAPPED = {
    "order_id": "#W7941031",
    "item_ids": [WATCH],
    "new_item_ids": ["2226219750"],
    "payment_method_id": "paypal_8049766",
}


async def test_an_email_not_found_leaves_name_and_zip(tmp_path: Path) -> None:
    """'authenticate the user identity by locating their user id via email, or via name + zip code': a user
    whose email is not found is located by name and zip code (the API: 'only call this function if the user is
    not found by email')."""
    user = AnsweringUser(
        [
            ("email address of your account", "olivia.ito@example.org"),
            ("first name", "Olivia"),
            ("last name", "Ito"),
            ("zip code", "80218"),
        ]
    )
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W5442520"})
        assert not r.is_error, text_of(r)
        assert data_of(r)["user_id"] == "olivia_ito_3591"


async def test_a_write_of_another_conversation_is_seen_by_this_one(tmp_path: Path) -> None:
    """'An order can only be cancelled if its status is 'pending', and you should check its status before
    taking the action' / 'Modify items › The agent will not be able to modify or cancel the order anymore':
    conversation A read the order (pending) just before conversation B of the same user modified its items;
    A may not cancel it or modify it on the status it read before."""
    async with retail_runtime(tmp_path) as rt:
        async with conversation(rt, AnsweringUser([OLIVIA, *YES])) as a:
            assert (await order(a, "#W7941031"))["status"] == "pending"
            async with conversation(rt, AnsweringUser([OLIVIA, *YES])) as b:
                r = await b.call_tool("retail__modify_pending_order_items", WATCH_SWAPPED)
                assert not r.is_error, text_of(r)
            r = await a.call_tool(
                "retail__cancel_pending_order", {"order_id": "#W7941031", "reason": "no longer needed"}
            )
            assert r.is_error and "only a pending order can be cancelled" in text_of(r), text_of(r)
            r = await a.call_tool(
                "retail__modify_pending_order_items",
                {
                    "order_id": "#W7941031",
                    "item_ids": [BACKPACK],
                    "new_item_ids": ["3928046918"],
                    "payment_method_id": "paypal_8049766",
                },
            )
            assert r.is_error and "only once" in text_of(r), text_of(r)
            assert (await order(a, "#W7941031"))["status"] == "pending (item modified)"


async def test_a_write_is_decided_on_what_the_store_says_now_not_on_an_earlier_read(tmp_path: Path) -> None:
    """'An order can only be modified if its status is 'pending', and you should check its status before
    taking the action': a write that does not itself change an order's status (its address) is decided on the
    status as it is now. Conversation A read #W5442520 as pending; conversation B cancelled it; A may not
    change its address or payment on what it read."""
    address = {
        "address1": "1 Main St",
        "address2": "",
        "city": "Boulder",
        "state": "CO",
        "country": "USA",
        "zip": "80301",
    }
    async with retail_runtime(tmp_path) as rt:
        async with conversation(rt, AnsweringUser([OLIVIA, *YES])) as a:
            assert (await order(a, "#W5442520"))["status"] == "pending"
            async with conversation(rt, AnsweringUser([OLIVIA, *YES])) as b:
                r = await b.call_tool(
                    "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
                )
                assert not r.is_error, text_of(r)
            r = await a.call_tool(
                "retail__modify_pending_order_address", {"order_id": "#W5442520", **address}
            )
            assert r.is_error and "only a pending order can be modified" in text_of(r), text_of(r)
            r = await a.call_tool(
                "retail__modify_pending_order_payment",
                {"order_id": "#W5442520", "payment_method_id": "paypal_8049766"},
            )
            assert r.is_error and "only a pending order can be modified" in text_of(r), text_of(r)
            after = await order(a, "#W5442520")
            assert after["status"] == "cancelled" and after["address"]["city"] == "Denver"


async def test_the_agent_cannot_switch_the_conversation_to_another_user(tmp_path: Path) -> None:
    """'You can only help one user per conversation ... and must deny any requests for tasks related to any
    other user': once Olivia is authenticated, the agent's own answers (an email, a name and zip code, in any
    spelling) do not make Emma the conversation's user, and Emma's order stays out of reach."""
    user = AnsweringUser([OLIVIA, *YES])
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        assert (await order(c, "#W7941031"))["user_id"] == "olivia_ito_3591"
        for predicate, answer in [
            ("account_email", "emma.smith3991@example.com"),
            ("account_email", "EMMA.SMITH3991@example.com"),
            ("account_email", "none"),
            ("account_first_name", "Emma"),
            ("account_last_name", "Smith"),
            ("account_zip", "95186"),
        ]:
            r = await c.call_tool(
                "sentinel__sentinel_answer", {"predicate": predicate, "inputs": [], "answer": answer}
            )
            assert r.is_error and "must be answered by: user" in text_of(r), (predicate, answer, text_of(r))
        for name, args in [
            ("retail__cancel_pending_order", {"order_id": "#W2417020", "reason": "no longer needed"}),
            ("retail__get_order_details", {"order_id": "#W2417020"}),
            ("retail__get_user_details", {"user_id": "emma_smith_8564"}),
        ]:
            r = await c.call_tool(name, args)
            assert r.is_error and "one user per conversation" in text_of(r), (name, text_of(r))
        assert user.messages().count("What is the email address of your account?") == 1
        assert not any("first name" in m for m in user.messages())


async def test_an_order_changed_in_this_conversation_is_not_acted_on_as_before(tmp_path: Path) -> None:
    """'Generally, you can only take action on pending or delivered orders' / 'An order can only be modified
    if its status is 'pending'' / 'Exchange or modify order tools can only be called once per order': after
    a write changed an order's status in this conversation, no other write goes through on the status it had
    (items modified: no address change; cancelled: no change at all; returned: no exchange; exchanged: no
    return)."""
    address = {
        "address1": "1 Main St",
        "address2": "",
        "city": "Boulder",
        "state": "CO",
        "country": "USA",
        "zip": "80301",
    }
    async with retail_runtime(tmp_path) as rt, conversation(rt, AnsweringUser([OLIVIA, *YES])) as c:
        # items modified: the address and the payment of #W7941031 stay as they are
        r = await c.call_tool("retail__modify_pending_order_items", WATCH_SWAPPED)
        assert not r.is_error, text_of(r)
        r = await c.call_tool("retail__modify_pending_order_address", {"order_id": "#W7941031", **address})
        assert r.is_error and "only a pending order can be modified" in text_of(r), text_of(r)
        # cancelled: nothing more on #W5442520
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        for name, args in [
            ("retail__modify_pending_order_address", {"order_id": "#W5442520", **address}),
            (
                "retail__modify_pending_order_payment",
                {"order_id": "#W5442520", "payment_method_id": "paypal_8049766"},
            ),
            (
                "retail__modify_pending_order_items",
                {
                    "order_id": "#W5442520",
                    "item_ids": ["3330317167"],
                    "new_item_ids": ["8896479688"],
                    "payment_method_id": "paypal_8049766",
                },
            ),
            (
                "retail__return_delivered_order_items",
                {
                    "order_id": "#W5442520",
                    "item_ids": ["3330317167"],
                    "payment_method_id": "credit_card_9753331",
                },
            ),
        ]:
            r = await c.call_tool(name, args)
            assert r.is_error and "Sentinel refused this call" in text_of(r), (name, text_of(r))
        assert (await order(c, "#W5442520"))["address"]["city"] == "Denver"
        # returned: #W5866402 is not exchanged afterwards
        r = await c.call_tool(
            "retail__return_delivered_order_items",
            {"order_id": "#W5866402", "item_ids": ["9727387530"], "payment_method_id": "paypal_8049766"},
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool(
            "retail__exchange_delivered_order_items",
            {
                "order_id": "#W5866402",
                "item_ids": ["6242772310"],
                "new_item_ids": ["3709608322"],
                "payment_method_id": "paypal_8049766",
            },
        )
        assert r.is_error and "only a delivered order can be exchanged" in text_of(r), text_of(r)
        assert (await order(c, "#W5866402"))["status"] == "return requested"


@pytest.mark.parametrize(
    "oid",
    ["W7941031", "#w7941031", " #W7941031", "#W7941031 ", "＃W7941031", "#W7941031\u200b", "#Ｗ7941031"],
)
async def test_other_spellings_of_an_order_id_are_not_the_order(tmp_path: Path, oid: str) -> None:
    """'You can only help one user per conversation': an order is acted on only under the id the store gives
    it; another spelling is no order of the user's (refused by the guard itself, before the store sees it)."""
    async with retail_runtime(tmp_path) as rt, conversation(rt, AnsweringUser([OLIVIA, *YES])) as c:
        r = await c.call_tool("retail__cancel_pending_order", {"order_id": oid, "reason": "no longer needed"})
        assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
        assert (await order(c, "#W7941031"))["status"] == "pending"


@pytest.mark.parametrize(
    "email",
    [
        "emma.smith3991@example.com",
        "EMMA.SMITH3991@example.com",
        " emma.smith3991@example.com ",
        "emma.smith3991@example.com\u200b",
        "olivia.ito5204@example.com\u0130",
    ],
)
async def test_the_agent_looks_up_no_other_customer(tmp_path: Path, email: str) -> None:
    """'must deny any requests for tasks related to any other user': the look-ups that locate a user id are
    the authentication; the agent makes them only with what the user told Sentinel. Another customer's email,
    in any spelling, gives no user id (nor whether the account exists); the user's own email in another case
    does."""
    async with retail_runtime(tmp_path) as rt, conversation(rt, AnsweringUser([OLIVIA])) as c:
        r = await c.call_tool("retail__find_user_id_by_email", {"email": email})
        assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
        assert "emma_smith" not in text_of(r) and "not found" not in text_of(r), text_of(r)
        r = await c.call_tool("retail__find_user_id_by_email", {"email": " Olivia.Ito5204@EXAMPLE.com"})
        assert data_of(r)["result"] == "olivia_ito_3591", text_of(r)


async def test_the_agent_looks_up_no_other_customer_by_name_and_zip(tmp_path: Path) -> None:
    """'authenticate the user identity by locating their user id via email, or via name + zip code' / 'must
    deny any requests for tasks related to any other user': by name and zip code only the user who does not
    know their email, with their own name and zip code; never once the user is known by email."""
    user = AnsweringUser(
        [
            ("email address of your account", DONT_KNOW),
            ("first name", "Olivia"),
            ("last name", "Ito"),
            ("zip code", "80218"),
        ]
    )
    async with retail_runtime(tmp_path) as rt:
        async with conversation(rt, user) as c:
            for first, last, zip_code in [
                ("Emma", "Smith", "95186"),
                ("Olivia", "Ito", "80219"),
                ("Olivia", "Itö", "80218"),
                ("Emma", "Ito", "80218"),
            ]:
                r = await c.call_tool(
                    "retail__find_user_id_by_name_zip",
                    {"first_name": first, "last_name": last, "zip": zip_code},
                )
                assert r.is_error and "Sentinel refused this call" in text_of(r), (first, text_of(r))
            r = await c.call_tool(
                "retail__find_user_id_by_name_zip",
                {"first_name": "OLIVIA", "last_name": "ito ", "zip": "80218"},
            )
            assert data_of(r)["result"] == "olivia_ito_3591", text_of(r)
        # known by email: no look-up by name (it would be a second user of the conversation)
        async with conversation(rt, AnsweringUser([OLIVIA])) as c:
            r = await c.call_tool(
                "retail__find_user_id_by_name_zip",
                {"first_name": "Olivia", "last_name": "Ito", "zip": "80218"},
            )
            assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
