"""Another customer's data is not read: the retail read tools that return a customer's data (an order's
details, a profile) are guarded by retail.pl ("authenticate the user first", "one user per conversation"),
through the real gateway over the real retail example and SWI-Prolog. The client's own reads are guarded
whichever way they come (the tool itself, ``sentinel_query``, ``sentinel_why_not``, ``sentinel_facts``,
``sentinel_bind``), while the policy's own look-ups (the facts a write's guard reads) still work and ask
nothing more.

The user is Olivia Ito (olivia_ito_3591, order #W5442520 pending); the other customer is Emma Smith
(emma_smith_8564: order #W2417020, a 13-inch Laptop paid by gift_card_8541487, 243 Hillcrest Drive, New
York)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.types import ElicitResult
from tests.retail.retail_rig import (
    OLIVIA,
    Asked,
    AnsweringUser,
    conversation,
    data_of,
    retail_gateway,
    retail_runtime,
    text_of,
)

from sentinel_mcp.identity.principal import OWNER_NAME

pytestmark = pytest.mark.timeout(120)

CONSENT = ("customer profile", True)


class ConsentingUser(AnsweringUser):
    """Answers as AnsweringUser; a consent to read the customer profile is given for the one call."""

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        if "customer profile" in params.message and "allow" in params.requested_schema.get("properties", {}):
            self.asked.append(Asked(params.message, params.requested_schema))
            return ElicitResult(action="accept", content={"allow": True, "remember": False})
        return await super().__call__(context, params)


EMMA_ORDER = "#W2417020"
EMMA = "emma_smith_8564"
# what only Emma's order or profile holds: none of it may reach Olivia's conversation
EMMA_DATA = (
    "Laptop",
    "8997785118",
    "gift_card_8541487",
    "Hillcrest",
    "2674.4",
    "paypal_6228291",
    "emma.smith3991",
    "#W5605613",
    "#W3614011",
)
# spellings of Emma's ids a client might try (the tool looks ids up exactly; whatever it accepts is guarded)
ORDER_SPELLINGS = (EMMA_ORDER, f" {EMMA_ORDER}", f"{EMMA_ORDER} ", "#w2417020", "W2417020", f"{EMMA_ORDER}\n")
USER_SPELLINGS = (EMMA, f" {EMMA}", f"{EMMA} ", EMMA.upper(), f"{EMMA}\t")
ONE_USER = "You can only help one user per conversation"
AUTHENTICATE = "you have to authenticate the user identity"


def everything(result: Any) -> str:
    """All a result tells the client: its text, structured content and _meta."""
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(dumped)


def assert_no_emma(result: Any) -> None:
    told = everything(result)
    leaked = [d for d in EMMA_DATA if d in told]
    assert not leaked, (leaked, told[:2000])


async def test_another_customers_order_is_not_read_before_the_user_is_authenticated(tmp_path: Path) -> None:
    user = AnsweringUser([])  # declines everything: nobody is authenticated
    async with retail_gateway(tmp_path, user) as c:
        for oid in ORDER_SPELLINGS:
            r = await c.call_tool("retail__get_order_details", {"order_id": oid})
            assert r.is_error, (oid, text_of(r))
            assert_no_emma(r)
        r = await c.call_tool("retail__get_user_details", {"user_id": EMMA})
        assert r.is_error, text_of(r)
        assert_no_emma(r)
        for goal in (
            f"order_status('{EMMA_ORDER}', S)",
            f"order_user('{EMMA_ORDER}', U)",
            f"order_item('{EMMA_ORDER}', K, I, P, Price)",
            f"customer_payment({EMMA}, Id, S)",
        ):
            r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
            assert data_of(r)["solutions"] == [], (goal, text_of(r))
            assert_no_emma(r)
        # what a call on Emma's order would need names nothing of hers (her user id, read from the order)
        for tool, args in (
            ("retail__cancel_pending_order", {"order_id": EMMA_ORDER, "reason": "no longer needed"}),
            ("retail__modify_pending_order_payment", {"order_id": EMMA_ORDER, "payment_method_id": "x"}),
            (
                "retail__return_delivered_order_items",
                {"order_id": EMMA_ORDER, "item_ids": ["8997785118"], "payment_method_id": "x"},
            ),
            ("retail__get_order_details", {"order_id": EMMA_ORDER}),
        ):
            r = await c.call_tool("sentinel__sentinel_why_not", {"tool": tool, "arguments": args})
            assert data_of(r)["decision"] != "allow", text_of(r)
            assert_no_emma(r)
            assert EMMA not in everything(r), text_of(r)
    # asked who the user is (and, for a profile, the consent to read it), nothing about an order
    assert all("email address" in m or "customer profile" in m for m in user.messages()), user.messages()


async def test_another_customers_order_and_profile_are_not_read_by_an_authenticated_user(
    tmp_path: Path,
) -> None:
    user = ConsentingUser([OLIVIA, CONSENT])
    async with retail_gateway(tmp_path, user) as c:
        own = await c.call_tool("retail__get_order_details", {"order_id": "#W5442520"})
        assert not own.is_error and data_of(own)["user_id"] == "olivia_ito_3591", text_of(own)
        for oid in (*ORDER_SPELLINGS, 2417020, [EMMA_ORDER], {"id": EMMA_ORDER}, None):
            r = await c.call_tool("retail__get_order_details", {"order_id": oid})
            assert r.is_error, (oid, text_of(r))
            assert_no_emma(r)
        r = await c.call_tool("retail__get_order_details", {"order_id": EMMA_ORDER})
        assert ONE_USER in text_of(r), text_of(r)  # refused by its rule, citing the policy
        for uid in USER_SPELLINGS:
            r = await c.call_tool("retail__get_user_details", {"user_id": uid})
            assert r.is_error, (uid, text_of(r))
            assert_no_emma(r)
        mine = await c.call_tool("retail__get_user_details", {"user_id": "olivia_ito_3591"})
        assert not mine.is_error and data_of(mine)["user_id"] == "olivia_ito_3591", text_of(mine)
    assert user.messages().count("What is the email address of your account?") == 1


async def test_the_policy_tools_read_no_other_customers_data(tmp_path: Path) -> None:
    """A write on Emma's order makes the guard read it (to find it is not Olivia's): its facts stay inside."""
    user = ConsentingUser([OLIVIA, CONSENT])
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": EMMA_ORDER, "reason": "no longer needed"}
        )
        assert r.is_error and ONE_USER in text_of(r), text_of(r)
        assert_no_emma(r)
        r = await c.call_tool(
            "retail__modify_user_address",
            {
                "user_id": EMMA,
                "address1": "x",
                "address2": "",
                "city": "x",
                "state": "x",
                "country": "x",
                "zip": "x",
            },
        )
        assert r.is_error, text_of(r)
        assert_no_emma(r)
        for goal in (
            f"order_status('{EMMA_ORDER}', S)",
            "order_item(O, K, I, P, Price)",
            "order_user(O, U)",
            "order_payment(O, K, T, A, M)",
            "customer_payment(U, Id, S)",
            "customer_address(U, A1, A2, C, S, Co, Z)",
            f"own_order({EMMA}, O)",
            f"order_label('{EMMA_ORDER}', L)",
            f"order_items_text('{EMMA_ORDER}', T)",
            "customer_order(U, O)",
        ):
            r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
            assert_no_emma(r)
            assert all(EMMA not in json.dumps(s) for s in data_of(r)["solutions"]), (goal, text_of(r))
        r = await c.call_tool("sentinel__sentinel_facts", {})
        assert_no_emma(r)
        assert EMMA not in text_of(r), text_of(r)
        for tool, args in (
            ("retail__get_order_details", {"order_id": EMMA_ORDER}),
            ("retail__get_user_details", {"user_id": EMMA}),
            ("retail__cancel_pending_order", {"order_id": EMMA_ORDER, "reason": "no longer needed"}),
        ):
            r = await c.call_tool("sentinel__sentinel_why_not", {"tool": tool, "arguments": args})
            assert data_of(r)["decision"] != "allow", text_of(r)
            assert_no_emma(r)
            assert EMMA not in everything(r), text_of(r)
        r = await c.call_tool(
            "sentinel__sentinel_bind", {"context": "order_of_interest", "value": EMMA_ORDER}
        )
        assert r.is_error, text_of(r)
        assert_no_emma(r)
        r = await c.call_tool(
            "sentinel__sentinel_bind", {"context": "order_of_interest", "value": "#W5442520"}
        )
        assert not r.is_error, text_of(r)
        assert_no_emma(r)
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "order_status(order_of_interest, S)"})
        assert data_of(r)["solutions"][0]["bindings"]["S"] == "pending", text_of(r)
        # the user's own order reads through the same tools
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "order_status('#W5442520', S)"})
        assert data_of(r)["solutions"] and data_of(r)["solutions"][0]["bindings"]["S"] == "pending", text_of(
            r
        )
        r = await c.call_tool(
            "sentinel__sentinel_why_not",
            {"tool": "retail__get_order_details", "arguments": {"order_id": "#W5442520"}},
        )
        assert data_of(r)["decision"] == "allow", text_of(r)


async def test_an_unauthenticated_query_reads_no_order_even_the_users_own(tmp_path: Path) -> None:
    async with retail_gateway(tmp_path, AnsweringUser([])) as c:
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "order_status('#W5442520', S)"})
        assert data_of(r)["solutions"] == [], text_of(r)
        r = await c.call_tool(
            "sentinel__sentinel_why_not",
            {"tool": "retail__get_order_details", "arguments": {"order_id": "#W5442520"}},
        )
        assert data_of(r)["decision"] != "allow", text_of(r)


async def test_the_users_own_writes_ask_nothing_more(tmp_path: Path) -> None:
    """The guards of cancel, return and exchange read the order's details themselves: no extra question."""
    user = AnsweringUser(
        [
            OLIVIA,
            ("Why do you want to cancel", "no longer needed"),
            ("Cancel this order?", True),
            ("Return these items?", True),
            ("Exchange these items?", True),
        ]
    )
    async with retail_gateway(tmp_path, user) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool(
            "retail__return_delivered_order_items",
            {"order_id": "#W5866402", "item_ids": ["9727387530"], "payment_method_id": "paypal_8049766"},
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W5866402"})
        assert data_of(r)["status"] == "return requested", text_of(r)
    asked = [m.split("?")[0] for m in user.messages()]
    assert asked == [
        "What is the email address of your account",
        "Why do you want to cancel order #W5442520",
        "Cancel this order",
        "Return these items",
    ], asked


async def test_a_write_on_another_customers_order_tells_only_that_it_is_not_the_users(tmp_path: Path) -> None:
    """The write's other rules (status, items, payments) are checked only for the user's own order: what else
    a call on Emma's order breaks would tell her order's status and contents, one bit a call."""
    user = AnsweringUser([OLIVIA])
    async with retail_gateway(tmp_path, user) as c:
        said = set()
        for oid in (EMMA_ORDER, "#W5605613", "#W3614011"):  # pending and not
            r = await c.call_tool(
                "retail__cancel_pending_order", {"order_id": oid, "reason": "no longer needed"}
            )
            said.add(text_of(r).replace(oid, "#"))
        for items in (["8997785118"], ["1111111111"]):  # in Emma's order and not
            for tool, extra in (
                ("retail__return_delivered_order_items", {}),
                ("retail__exchange_delivered_order_items", {"new_item_ids": ["2913673670"]}),
                ("retail__modify_pending_order_items", {"new_item_ids": ["2913673670"]}),
            ):
                r = await c.call_tool(
                    tool,
                    {
                        "order_id": EMMA_ORDER,
                        "item_ids": items,
                        "payment_method_id": "paypal_8049766",
                        **extra,
                    },
                )
                assert r.is_error and ONE_USER in text_of(r), text_of(r)
                said.add(f"{tool}: {text_of(r)}")
        for pay in (
            "paypal_8049766",
            "gift_card_8541487",
        ):  # Olivia's, and the one Emma's order was paid with
            r = await c.call_tool(
                "retail__modify_pending_order_payment", {"order_id": EMMA_ORDER, "payment_method_id": pay}
            )
            said.add(text_of(r))
    assert len(said) == 1 + 3 + 1, "\n".join(sorted(said))  # one answer per tool, whatever the order holds
    assert all(
        s.count("Unmet:") == 1 and "pending order" not in s and "must be in the order" not in s for s in said
    ), "\n".join(sorted(said))


async def test_the_consoles_view_of_the_session_leaves_the_other_customers_facts_out(tmp_path: Path) -> None:
    """The console shows a principal's sessions as its own look would: Emma's facts, read by the guard, stay
    out; the owner at the CLI (no principal) sees them, so they are there to leave out."""
    async with retail_runtime(tmp_path) as rt, conversation(rt, AnsweringUser([OLIVIA])) as c:
        r = await c.call_tool(
            "retail__cancel_pending_order", {"order_id": EMMA_ORDER, "reason": "no longer needed"}
        )
        assert r.is_error and ONE_USER in text_of(r), text_of(r)
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W5442520"})
        assert not r.is_error, text_of(r)
        guard = rt.gateway.guard
        (session,) = [s for s in await guard.session_facts(None).sessions() if s != "default"] or ["default"]
        everything_held = " ".join(f.fact for f in await guard.session_facts(None).valid(session))
        assert "Laptop" in everything_held and EMMA in everything_held
        view = guard.session_facts(OWNER_NAME)
        shown = " ".join(f.fact for f in await view.valid(session))
        assert "#W5442520" in shown  # the user's own order
        assert not [d for d in (*EMMA_DATA, EMMA) if d in shown], shown
        assert await view.count(session) == len(await view.valid(session))
        emma_fact = next(f.fact for f in await guard.session_facts(None).valid(session) if "Laptop" in f.fact)
        assert not await view.revoke(session, emma_fact)


CATALOG = (
    ("retail__list_all_product_types", {}),
    ("retail__get_product_details", {"product_id": "3377618313"}),
    ("retail__get_item_details", {"item_id": "6700049080"}),
)


async def test_the_catalog_is_read_once_the_user_is_authenticated(tmp_path: Path) -> None:
    """The policy gives product information, like an order's, only "once the user has been authenticated":
    before, the catalog answered anyone. Nobody authenticated (every question declined): each catalog read is
    denied and tells nothing of the catalog; the user who says who they are reads it."""
    nobody = AnsweringUser([])
    async with retail_gateway(tmp_path / "nobody", nobody) as c:
        for tool, args in CATALOG:
            r = await c.call_tool(tool, args)
            # the guard asked who the user is; declined, the call is denied before the tool is reached
            assert r.is_error and (r.meta or {}).get("sentinel/decision") == "deny", (tool, text_of(r))
            assert "466.75" not in everything(r) and "Action Camera" not in everything(r), text_of(r)
    assert nobody.messages() and all("email address" in m for m in nobody.messages()), nobody.messages()
    olivia = AnsweringUser([OLIVIA])
    async with retail_gateway(tmp_path / "olivia", olivia) as c:
        told = [await c.call_tool(tool, args) for tool, args in CATALOG]
        assert not any(r.is_error for r in told), [text_of(r) for r in told]
        assert data_of(told[2])["price"] == 466.75, text_of(told[2])
    assert olivia.messages().count("What is the email address of your account?") == 1, olivia.messages()
