"""The retail example: its API's own checks (in process, on a fresh database each), what the permissive
variant carries out instead, and the server as a real stdio subprocess in both protocol eras."""

from __future__ import annotations

import sys

import pytest
from mcp import Client, StdioServerParameters

from examples.retail.database import DEFAULT_DB_PATH, RetailDatabase, RetailError
from examples.retail.operations import RetailOperations
from examples.retail.permissive import PermissiveOperations
from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(60)
PRISTINE = DEFAULT_DB_PATH.read_bytes()


def fresh(cls: type = RetailOperations) -> RetailOperations:
    from examples.retail.models import RetailDB

    return cls(RetailDatabase(RetailDB.model_validate_json(PRISTINE)))


def test_reads_find_users_by_email_and_by_name_and_zip() -> None:
    ops = fresh()
    assert ops.find_user_id_by_email("Olivia.Ito5204@EXAMPLE.com") == "olivia_ito_3591"
    assert ops.find_user_id_by_name_zip("OLIVIA", "ito", "80218") == "olivia_ito_3591"
    for bad in (lambda: ops.find_user_id_by_email("nobody@example.com"),
                lambda: ops.find_user_id_by_name_zip("Olivia", "Ito", "80219"),
                lambda: ops.get_order_details("W5442520"),  # the '#' belongs to the id
                lambda: ops.get_item_details("3377618313")):  # a product id is not an item id
        with pytest.raises(RetailError):
            bad()
    assert ops.get_item_details("6700049080").price == 466.75
    assert len(ops.list_all_product_types()) == 50


def test_the_api_checks_what_api_md_says() -> None:
    ops = fresh()
    cases = [
        (
            lambda: ops.cancel_pending_order("#W5866402", "no longer needed"),
            "Non-pending order cannot be cancelled",
        ),
        (lambda: ops.cancel_pending_order("#W5442520", "changed my mind"), "Invalid reason"),
        (lambda: ops.modify_pending_order_payment("#W5442520", "credit_card_9753331"), "should be different"),
        (
            lambda: ops.modify_pending_order_payment("#W5442520", "gift_card_7794233"),
            "Insufficient gift card",
        ),
        (lambda: ops.modify_pending_order_payment("#W5442520", "paypal_6228291"), "Payment method not found"),
        (
            lambda: ops.modify_pending_order_items(
                "#W7941031", ["1355937109"], ["3928046918"], "paypal_8049766"
            ),
            "Variant not found",
        ),
        (
            lambda: ops.modify_pending_order_items(
                "#W7941031", ["1355937109"], ["1355937109"], "paypal_8049766"
            ),
            "should be different",
        ),
        (
            lambda: ops.modify_pending_order_items(
                "#W7941031", ["1355937109"] * 2, ["2226219750"] * 2, "paypal_8049766"
            ),
            "not found",
        ),
        (
            lambda: ops.return_delivered_order_items("#W5866402", ["9727387530"], "credit_card_9753331"),
            "original payment method",
        ),
        (
            lambda: ops.exchange_delivered_order_items(
                "#W5866402", ["9727387530"], ["3631875806"], "paypal_8049766"
            ),
            "not found or available",
        ),
    ]
    for call, message in cases:
        with pytest.raises(RetailError, match=message):
            call()
    assert ops.get_order_details("#W5442520").status == "pending"  # a refused call changes nothing


def test_writes_as_the_api_carries_them_out() -> None:
    ops = fresh()
    order = ops.modify_pending_order_items(
        "#W7941031", ["1355937109", "5917587651"], ["2226219750", "3928046918"], "gift_card_7794233"
    )
    assert order.status == "pending (item modified)"
    assert [(i.item_id, i.price) for i in order.items] == [("2226219750", 2009.03), ("3928046918", 198.0)]
    assert order.payment_history[-1].amount == 8.94
    assert ops.get_user_details("olivia_ito_3591").payment_methods["gift_card_7794233"].balance == 47.06
    cancelled = ops.cancel_pending_order(
        "#W3657213", "ordered by mistake"
    )  # paid by the gift card: refunded at once
    assert cancelled.status == "cancelled" and cancelled.cancel_reason == "ordered by mistake"
    assert ops.get_user_details("olivia_ito_3591").payment_methods["gift_card_7794233"].balance == 3617.4
    returned = ops.return_delivered_order_items("#W5866402", ["9727387530"], "gift_card_7794233")
    assert returned.status == "return requested" and returned.return_items == ["9727387530"]


def test_the_permissive_api_checks_nothing() -> None:
    ops = fresh(PermissiveOperations)
    assert (
        ops.cancel_pending_order("#W5866402", "changed my mind").status == "cancelled"
    )  # delivered, any reason
    order = ops.modify_pending_order_items("#W5353646", ["5489028872"], ["3928046918"], "paypal_6228291")
    assert (
        order.items[0].item_id == "3928046918"
    )  # a processed order, a backpack for a skateboard, Emma's PayPal
    assert (
        ops.return_delivered_order_items("#W5442520", ["nope"], "credit_card_0").status == "return requested"
    )
    assert (
        ops.exchange_delivered_order_items(
            "#W7941031", ["1355937109"], ["3928046918"], "gift_card_7794233"
        ).status
        == "exchange requested"
    )
    with pytest.raises(RetailError):  # nothing to write to
        ops.cancel_pending_order("#W0000000", "no longer needed")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_server_over_stdio(mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "examples.retail"], cwd=str(PROJECT_ROOT)
    )
    async with Client(params, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        reads = {
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
            "get_user_details",
            "get_order_details",
            "get_product_details",
            "get_item_details",
            "list_all_product_types",
            "calculate",
        }
        writes = {
            "cancel_pending_order",
            "modify_pending_order_address",
            "modify_pending_order_payment",
            "modify_pending_order_items",
            "return_delivered_order_items",
            "exchange_delivered_order_items",
            "modify_user_address",
        }
        assert set(tools) == reads | writes | {"transfer_to_human_agents"}
        assert all(tools[n].annotations.read_only_hint for n in reads)
        assert all(
            tools[n].annotations.destructive_hint and not tools[n].annotations.read_only_hint for n in writes
        )
        assert all(t.output_schema for t in tools.values())
        r = await client.call_tool("find_user_id_by_email", {"email": "olivia.ito5204@example.com"})
        assert (
            r.structured_content == {"result": "olivia_ito_3591"} and r.content[0].text == "olivia_ito_3591"
        )
        r = await client.call_tool("get_order_details", {"order_id": "#W5442520"})
        assert (
            r.structured_content["status"] == "pending"
            and r.structured_content["items"][0]["name"] == "Gaming Mouse"
        )
        r = await client.call_tool(
            "cancel_pending_order", {"order_id": "#W5866402", "reason": "no longer needed"}
        )
        assert r.is_error and r.content[0].text == "Error: Non-pending order cannot be cancelled"
