"""The retail policy enforced by retail.pl alone, through the real gateway: the retail example with write
tools
that check nothing (``--permissive``) behind Sentinel, and a client whose user answers Sentinel's questions
(MCP elicitation). Each rule is refused with the sentence of policy.md it cites when broken, and allowed when
kept; nothing refused reaches the store.

The user is Olivia Ito (olivia_ito_3591): a gift card with $56, a PayPal account and a Visa card; orders
#W5442520 and #W7941031 pending (paid by the Visa card), #W3657213 pending (paid by the gift card), #W5866402
delivered (paid by PayPal), #W5353646 processed. The other user is Emma Smith (emma_smith_8564)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.retail.retail_rig import (
    DONT_KNOW,
    OLIVIA,
    AnsweringUser,
    conversation,
    data_of,
    order,
    retail_gateway,
    retail_runtime,
    text_of,
)

pytestmark = pytest.mark.timeout(120)

EMMA = ("email address of your account", "emma.smith3991@example.com")
INTERNAL = re.compile(r"json\(|\b_[A-Z0-9]\w*|missing fact|\$dont_know|\bnull\b|\[\]")
ONE_USER = "You can only help one user per conversation"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_cancel_asks_who_then_why_then_confirms_what_it_will_do(tmp_path: Path, mode: str) -> None:
    user = AnsweringUser(
        [OLIVIA, ("Why do you want to cancel", "no longer needed"), ("Cancel this order?", True)]
    )
    async with retail_gateway(tmp_path, user, mode=mode) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        assert (await order(c, "#W5442520"))["status"] == "cancelled"
    who, why, confirm = user.asked
    # authentication first: the email, from the user (an id the agent passes proves nothing)
    assert who.message == "What is the email address of your account?"
    assert set(why.options) == {"no longer needed", "ordered by mistake", "i_dont_know"}
    assert confirm.message.startswith(
        # what the store's tools wrote reads quoted where it is more than one word (readable_terms.pl)
        "Cancel this order? Order: #W5442520 (pending): \u201cGaming Mouse\u201d, "
        "\u201cPatio Umbrella\u201d, \u201cHiking Boots\u201d. Items: \u201cGaming Mouse\u201d "
        "(color black, \u201csensor type\u201d optical, connectivity wired) at $137.32; "
    )
    assert "Reason: I no longer need it." in confirm.message
    assert "Refund: $663.85 to Visa card ending 9182, within 5 to 7 business days." in confirm.message
    assert not INTERNAL.search(confirm.message), confirm.message


async def test_cancel_rules_refused_with_their_sentences(tmp_path: Path) -> None:
    user = AnsweringUser(
        [OLIVIA, ("Why do you want to cancel", "ordered by mistake"), ("Cancel this order?", True)]
    )
    async with retail_gateway(tmp_path, user) as c:
        # a delivered and a processed order cannot be cancelled
        for oid in ("#W5866402", "#W5353646"):
            r = await c.call_tool(
                "retail__cancel_pending_order", {"order_id": oid, "reason": "no longer needed"}
            )
            assert r.is_error and "only a pending order can be cancelled" in text_of(r), text_of(r)
            assert "An order can only be cancelled if its status is 'pending'" in text_of(r)
        # a reason that is not on the policy's list, whatever its spelling
        for reason in ("changed my mind", "No Longer Needed", "no longer needed ", ""):
            r = await c.call_tool("retail__cancel_pending_order", {"order_id": "#W5442520", "reason": reason})
            assert r.is_error and 'must be "no longer needed" or "ordered by mistake"' in text_of(r), (
                reason,
                text_of(r),
            )
            assert "either 'no longer needed' or 'ordered by mistake'" in text_of(r)  # the policy's sentence
        assert not any("Why do you want to cancel" in m for m in user.messages())  # refused before asking
        # the agent's reason must be the user's
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert r.is_error and "the reason must be the one the user gave" in text_of(r), text_of(r)
        assert "The user needs to confirm the order id and the reason" in text_of(r)
        assert (await order(c, "#W5442520"))["status"] == "pending"
        assert not any("Cancel this order?" in m for m in user.messages())
        # kept: the user's reason
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "ordered by mistake"}
        )
        assert not r.is_error, text_of(r)
        # cancelled now: not again
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "ordered by mistake"}
        )
        assert r.is_error and "only a pending order can be cancelled" in text_of(r)


async def test_a_reason_the_user_does_not_know_is_no_reason(tmp_path: Path) -> None:
    user = AnsweringUser([OLIVIA, ("Why do you want to cancel", DONT_KNOW)])
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert r.is_error and "no other reason is accepted" in text_of(r), text_of(r)
        assert not INTERNAL.search(text_of(r)), text_of(r)
        assert (await order(c, "#W5442520"))["status"] == "pending"


async def test_authentication_by_name_and_zip_when_the_email_is_unknown(tmp_path: Path) -> None:
    user = AnsweringUser(
        [
            ("email address of your account", DONT_KNOW),
            ("first name", "olivia"),
            ("last name", "Ito"),
            ("zip code", "80218"),
            ("Change your default address?", True),
        ]
    )
    address = {
        "address1": "1 Main St",
        "address2": "",
        "city": "Boulder",
        "state": "CO",
        "country": "USA",
        "zip": "80301",
    }
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool("retail__modify_user_address", {"user_id": "olivia_ito_3591", **address})
        assert not r.is_error, text_of(r)
        assert data_of(r)["address"]["city"] == "Boulder"
    confirm = user.messages()[-1]
    assert "Account: Olivia Ito (olivia_ito_3591)." in confirm
    # each part of an address of more than one word reads as one quoted value (readable_terms.pl)
    now = "Default address now: \u201c570 Elm Avenue\u201d, \u201cSuite 175\u201d, Denver, CO 80218, USA."
    assert now in confirm
    assert "New default address: \u201c1 Main St\u201d, Boulder, CO 80301, USA." in confirm


async def test_a_second_user_is_refused_in_the_same_conversation(tmp_path: Path) -> None:
    user = AnsweringUser(
        [OLIVIA, ("Why do you want to cancel", "no longer needed"), ("Cancel", True), ("Change", True)]
    )
    address = {
        "address1": "1 Main St",
        "address2": "",
        "city": "Boulder",
        "state": "CO",
        "country": "USA",
        "zip": "80301",
    }
    async with retail_runtime(tmp_path) as rt, conversation(rt, user) as c:
        # Emma's orders and profile, by their ids: the conversation's user is Olivia
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W2417020", "reason": "no longer needed"}
        )
        assert r.is_error and "one user per conversation" in text_of(r) and ONE_USER in text_of(r), text_of(r)
        r = await c.call_tool("retail__modify_user_address", {"user_id": "emma_smith_8564", **address})
        assert r.is_error and "must deny any requests for tasks related to any other user" in text_of(r), (
            text_of(r)
        )
        r = await c.call_tool(
            "retail__modify_pending_order_payment",
            {"order_id": "#W2417020", "payment_method_id": "paypal_6228291"},
        )
        assert r.is_error and ONE_USER in text_of(r)
        # the agent tries to look Emma up by her email: refused (her user id is not learnt), and still
        # Olivia's conversation (the email asked once, from the user)
        r = await c.call_tool("retail__find_user_id_by_email", {"email": "emma.smith3991@example.com"})
        assert r.is_error and "emma_smith_8564" not in text_of(r), text_of(r)
        assert "only the email the user gave can be looked up" in text_of(r), text_of(r)
        assert "must deny any requests for tasks related to any other user" in text_of(r), text_of(r)
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W2417020", "reason": "no longer needed"}
        )
        assert r.is_error and ONE_USER in text_of(r)
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W2417020"})  # nor read
        assert r.is_error and ONE_USER in text_of(r) and "Laptop" not in text_of(r), text_of(r)
        assert user.messages().count("What is the email address of your account?") == 1
        # Olivia's own request goes through
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        # Emma, in a conversation of her own, finds her order as it was
        async with conversation(rt, AnsweringUser([EMMA])) as emma:
            assert (await order(emma, "#W2417020"))["status"] == "pending"


async def test_focus_shifts_between_two_orders_of_the_user(tmp_path: Path) -> None:
    user = AnsweringUser(
        [
            OLIVIA,
            ("cancel order #W5442520", "no longer needed"),
            ("cancel order #W7941031", "ordered by mistake"),
            ("Cancel this order?", True),
        ]
    )
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        # the second order: its own reason asked, its own details confirmed (the first one's answer does not
        # carry)
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W7941031", "reason": "no longer needed"}
        )
        assert r.is_error and "the reason must be the one the user gave" in text_of(r)
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W7941031", "reason": "ordered by mistake"}
        )
        assert not r.is_error, text_of(r)
    asked = user.messages()
    assert asked[1] == "Why do you want to cancel order #W5442520?"
    assert asked[3] == "Why do you want to cancel order #W7941031?"
    second = asked[-1]
    assert "#W7941031 (pending): Wristwatch, Backpack" in second and "Gaming Mouse" not in second
    assert (
        "Reason: I ordered it by mistake." in second and "Refund: $2198.09 to Visa card ending 9182" in second
    )


async def test_modify_items_rules(tmp_path: Path) -> None:
    user = AnsweringUser(
        [
            OLIVIA,
            ("Modify the items of this order?", True),
            ("Cancel", True),
            ("Why do you want to cancel", "no longer needed"),
        ]
    )
    oid, watch, backpack = "#W7941031", "1355937109", "5917587651"

    def items(old: list[str], new: list[str], pay: str = "gift_card_7794233") -> dict:
        return {"order_id": oid, "item_ids": old, "new_item_ids": new, "payment_method_id": pay}

    async with retail_gateway(tmp_path, user) as c:
        same_product = "each new item must be an available item of the same product"
        cases = [
            (items([watch], ["3928046918"]), same_product),  # a backpack for a watch: another product
            (items([watch], [watch]), same_product),  # the same item: no other option
            (items(["5886093635"], ["3358616356"]), "must be in the order"),  # a helmet of another order
            (
                items([watch, watch], ["2226219750", "2226219750"]),
                "must be in the order",
            ),  # one watch, listed twice
            (items([watch], ["2226219750", "3928046918"]), "exactly one new item"),
            (
                items([watch], ["4510078629"]),
                "gift card balance does not cover the price difference",
            ),  # +$142.32
            (
                items([watch], ["2226219750"], "paypal_6228291"),
                "one of the user's own payment methods",
            ),  # Emma's
        ]
        for args, reason in cases:
            r = await c.call_tool("retail__modify_pending_order_items", args)
            assert r.is_error and reason in text_of(r), (args, text_of(r))
        r = await c.call_tool(
            "retail__modify_pending_order_items", items([watch], ["2226219750"], "paypal_6228291")
        )
        assert (
            "The user must provide a payment method to pay or receive refund of the price difference"
            in text_of(r)
        )
        assert "Modify items" in text_of(
            r
        )  # the sentence of its own section (the policy repeats it for exchanges)
        # an unavailable item of the same product (a mouse of #W5442520)
        r = await c.call_tool(
            "retail__modify_pending_order_items",
            {
                "order_id": "#W5442520",
                "item_ids": ["3330317167"],
                "new_item_ids": ["7420906769"],
                "payment_method_id": "gift_card_7794233",
            },
        )
        assert r.is_error and "of the same product but of different product option" in text_of(r), text_of(r)
        assert (await order(c, oid))["status"] == "pending"
        assert not any("Modify the items" in m for m in user.messages())
        # kept: watch +$23.73, backpack -$14.79: $8.94 from the gift card ($56)
        r = await c.call_tool(
            "retail__modify_pending_order_items", items([watch, backpack], ["2226219750", "3928046918"])
        )
        assert not r.is_error, text_of(r)
        assert (await order(c, oid))["status"] == "pending (item modified)"
        confirm = next(m for m in user.messages() if m.startswith("Modify the items"))
        assert (
            "Wristwatch (\u201cstrap material\u201d leather, \u201cdial color\u201d white) at $1985.30 "
            "becomes Wristwatch ("
            in confirm
        )
        assert "Price difference: $8.94 charged to gift card 7794233." in confirm
        assert "items can be modified only once" in confirm
        # only once; and the order cannot be modified or cancelled any more
        r = await c.call_tool("retail__modify_pending_order_items", items(["2226219750"], ["2226219750"]))
        assert r.is_error and "This action can only be called once" in text_of(r), text_of(r)
        r = await c.call_tool("retail__cancel_pending_order", {"order_id": oid, "reason": "no longer needed"})
        assert r.is_error and "only a pending order can be cancelled" in text_of(r)
        r = await c.call_tool(
            "retail__modify_pending_order_payment", {"order_id": oid, "payment_method_id": "paypal_8049766"}
        )
        assert r.is_error and "only a pending order can be modified" in text_of(r)


async def test_modify_payment_and_address_rules(tmp_path: Path) -> None:
    user = AnsweringUser([OLIVIA, ("Change the payment method", True), ("Change the shipping address", True)])
    oid = "#W5442520"  # $663.85 by the Visa card
    async with retail_gateway(tmp_path, user) as c:
        for pay, reason, quote in [
            (
                "credit_card_9753331",
                "must differ from the original one",
                "different from the original payment method",
            ),
            (
                "gift_card_7794233",
                "gift card balance does not cover the order total",
                "enough balance to cover the total amount",
            ),
            ("paypal_6228291", "one of the user's own", "The user can only choose a single payment method"),
        ]:
            r = await c.call_tool(
                "retail__modify_pending_order_payment", {"order_id": oid, "payment_method_id": pay}
            )
            assert r.is_error and reason in text_of(r) and quote in text_of(r), (pay, text_of(r))
        # a delivered order's payment or address cannot be modified
        r = await c.call_tool(
            "retail__modify_pending_order_payment",
            {"order_id": "#W5866402", "payment_method_id": "credit_card_9753331"},
        )
        assert r.is_error and "An order can only be modified if its status is 'pending'" in text_of(r)
        address = {
            "address1": "1 Main St",
            "address2": "Apt 2",
            "city": "Boulder",
            "state": "CO",
            "country": "USA",
            "zip": "80301",
        }
        r = await c.call_tool("retail__modify_pending_order_address", {"order_id": "#W5353646", **address})
        assert r.is_error and "only a pending order can be modified" in text_of(r)
        # kept
        r = await c.call_tool(
            "retail__modify_pending_order_payment", {"order_id": oid, "payment_method_id": "paypal_8049766"}
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool("retail__modify_pending_order_address", {"order_id": oid, **address})
        assert not r.is_error, text_of(r)
        # paid once by PayPal now (after the change the history has two payments): no second change
        r = await c.call_tool(
            "retail__modify_pending_order_payment",
            {"order_id": oid, "payment_method_id": "credit_card_9753331"},
        )
        assert r.is_error and "paid with a single payment method" in text_of(r), text_of(r)
    pay, addr = (m for m in user.messages() if m.startswith("Change the"))
    assert "Paid now: $663.85 from PayPal account 8049766." in pay
    assert (
        "Refund of the original payment: $663.85 to Visa card ending 9182, within 5 to 7 business days."
        in pay
    )
    assert "New shipping address: \u201c1 Main St\u201d, \u201cApt 2\u201d, Boulder, CO 80301, USA." in addr


async def test_return_rules(tmp_path: Path) -> None:
    user = AnsweringUser([OLIVIA, ("Return these items?", True)])
    oid, sneakers = "#W5866402", "9727387530"  # delivered, paid by PayPal

    def ret(items: list[str], pay: str) -> dict:
        return {"order_id": oid, "item_ids": items, "payment_method_id": pay}

    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool("retail__return_delivered_order_items", ret([sneakers], "credit_card_9753331"))
        assert (
            r.is_error
            and "The refund must either go to the original payment method, or an existing gift card."
            in text_of(r)
        )
        for items in ([], [sneakers, sneakers], ["5489028872"]):
            r = await c.call_tool("retail__return_delivered_order_items", ret(items, "paypal_8049766"))
            assert r.is_error and "every item to return must be in the order" in text_of(r), (
                items,
                text_of(r),
            )
        r = await c.call_tool(
            "retail__return_delivered_order_items",
            {"order_id": "#W5353646", "item_ids": ["5489028872"], "payment_method_id": "paypal_8049766"},
        )
        assert r.is_error and "An order can only be returned if its status is 'delivered'" in text_of(r)
        assert (await order(c, oid))["status"] == "delivered"
        r = await c.call_tool("retail__return_delivered_order_items", ret([sneakers], "gift_card_7794233"))
        assert not r.is_error, text_of(r)
        r = await c.call_tool("retail__return_delivered_order_items", ret(["6242772310"], "paypal_8049766"))
        assert r.is_error and "only a delivered order can be returned" in text_of(r)
    (confirm,) = [m for m in user.messages() if m.startswith("Return")]
    assert "Items to return: Sneakers (size 11, color black, material synthetic) at $207.75." in confirm
    assert (
        "Refund: $207.75 to gift card 7794233." in confirm
        and "receive an email about how to return" in confirm
    )


async def test_exchange_rules(tmp_path: Path) -> None:
    user = AnsweringUser([OLIVIA, ("Exchange these items?", True)])
    oid, sneakers, espresso = "#W5866402", "9727387530", "6242772310"

    def exchange(old: list[str], new: list[str], pay: str = "paypal_8049766") -> dict:
        return {"order_id": oid, "item_ids": old, "new_item_ids": new, "payment_method_id": pay}

    async with retail_gateway(tmp_path, user) as c:
        for args, quote in [
            (
                exchange([sneakers], ["3709608322"]),
                "each item can be exchanged to an available new item of the same product",
            ),
            (
                exchange([sneakers], ["3631875806"]),
                "each item can be exchanged to an available new item of the same product",
            ),
            (
                exchange([espresso], ["7407838442"], "gift_card_7794233"),
                "Exchange delivered order",
            ),  # +$85.88 > $56
            (
                exchange([sneakers], ["2509076505"], "credit_card_5869505"),
                "to pay or receive refund of the price difference",
            ),
        ]:
            r = await c.call_tool("retail__exchange_delivered_order_items", args)
            assert r.is_error and quote in text_of(r), (args, text_of(r))
        r = await c.call_tool(
            "retail__exchange_delivered_order_items",
            {
                "order_id": "#W5442520",
                "item_ids": ["3330317167"],
                "new_item_ids": ["8896479688"],
                "payment_method_id": "paypal_8049766",
            },
        )
        assert r.is_error and "An order can only be exchanged if its status is 'delivered'" in text_of(r)
        assert (await order(c, oid))["status"] == "delivered"
        r = await c.call_tool("retail__exchange_delivered_order_items", exchange([sneakers], ["2509076505"]))
        assert not r.is_error, text_of(r)
        # only once
        r = await c.call_tool("retail__exchange_delivered_order_items", exchange([espresso], ["3709608322"]))
        assert r.is_error and "only a delivered order can be exchanged, and only once" in text_of(r)
    (confirm,) = [m for m in user.messages() if m.startswith("Exchange")]
    assert "Price difference: $18.25 refunded to PayPal account 8049766." in confirm
    assert "this must be every item you want to exchange" in confirm and "no new order is needed" in confirm


async def test_a_no_changes_nothing(tmp_path: Path) -> None:
    user = AnsweringUser(
        [OLIVIA, ("Why do you want to cancel", "no longer needed"), ("Cancel this order?", False)]
    )
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert r.is_error and "you declined" in text_of(r), text_of(r)
        assert (await order(c, "#W5442520"))["status"] == "pending"


async def test_a_transfer_to_a_human_asks_nothing(tmp_path: Path) -> None:
    """'You should transfer the user to a human agent if and only if the request cannot be handled within the
    scope of your actions': the hand-over changes no data and the policy sets it no condition Sentinel could
    check (which requests are out of scope is the request's words), so it goes through as asked, even before
    the user is known, asking nothing (no authentication, no confirmation)."""
    user = AnsweringUser([])  # declines anything it is asked
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool("retail__transfer_to_human_agents", {"summary": "wants a refund to a new card"})
        assert not r.is_error, text_of(r)
        assert user.messages() == []
