"""The retail MCP server: tau2-bench's retail tools over the in-memory database.

Arguments are validated by pydantic (from the signatures below). A failed API check comes back as a tool
error (`isError`) whose text is `Error: <message>`. A result carries the value as JSON text and as structured
content: objects as they are (`/status`, `/items/0/item_id`), strings under `result` (`/result` of
`find_user_id_by_email`), with an output schema for each tool.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from examples.tool_results import HANDOFF, READ, WRITE, run_tool

from .database import POLICY_PATH, RetailDatabase, RetailError
from .models import Order, Product, User, Variant
from .operations import RetailOperations

SERVER_NAME = "retail"
SERVER_VERSION = "1.0.0"


OrderId = Annotated[
    str,
    Field(
        description="The order id, such as '#W0000000'. Be careful there is a '#' symbol "
        "at the beginning of the order id."
    ),
]
UserId = Annotated[str, Field(description="The user id, such as 'sara_doe_496'.")]
ItemIds = Annotated[
    list[str],
    Field(description="The item ids, each such as '1008292230'. There could be duplicate items in the list."),
]
NewItemIds = Annotated[
    list[str],
    Field(
        description="The new item ids, each such as '1008292230'; each matches "
        "the item id in the same position and is of the same product."
    ),
]
PaymentMethodId = Annotated[
    str,
    Field(
        description="The payment method id, such as 'gift_card_0000000' or "
        "'credit_card_0000000'; it is in the user's or order's details."
    ),
]
Address1 = Annotated[str, Field(description="The first line of the address, such as '123 Main St'.")]
Address2 = Annotated[str, Field(description="The second line of the address, such as 'Apt 1' or ''.")]
City = Annotated[str, Field(description="The city, such as 'San Francisco'.")]
State = Annotated[str, Field(description="The state, such as 'CA'.")]
Country = Annotated[str, Field(description="The country, such as 'USA'.")]
Zip = Annotated[str, Field(description="The zip code, such as '12345'.")]


def _run(operation: Any, *args: Any) -> CallToolResult:
    return run_tool(RetailError, operation, *args)


def create_server(database: RetailDatabase | None = None, *, permissive: bool = False) -> MCPServer:
    """The retail server over `database` (default: a fresh load of db.json or $RETAIL_DB).

    Tools are async and never await, so each call runs to completion on the event loop: concurrent calls
    cannot interleave their checks and writes. ``permissive``: the write tools check nothing.
    """
    from .permissive import PermissiveOperations

    db = database if database is not None else RetailDatabase.load()
    ops = PermissiveOperations(db) if permissive else RetailOperations(db)
    mcp = MCPServer(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=POLICY_PATH.read_text(encoding="utf-8"),
        log_level=os.environ.get("RETAIL_LOG_LEVEL", "WARNING"),
    )  # type: ignore[arg-type]

    # -- reads ---------------------------------------------------------------------------------------
    @mcp.tool(
        annotations=READ,
        description=(
            "Find user id by email. If the user is not found, the function will return an error message."
        ),
    )
    async def find_user_id_by_email(
        email: Annotated[str, Field(description="The email of the user, such as 'something@example.com'.")],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.find_user_id_by_email, email)

    @mcp.tool(
        annotations=READ,
        description=(
            "Find user id by first name, last name, and zip code. If the user is not found, the function "
            "will "
            "return an error message. By default, find user id by email, and only call this function if the "
            "user "
            "is not found by email or cannot remember email."
        ),
    )
    async def find_user_id_by_name_zip(
        first_name: Annotated[str, Field(description="The first name of the customer, such as 'John'.")],
        last_name: Annotated[str, Field(description="The last name of the customer, such as 'Doe'.")],
        zip: Annotated[str, Field(description="The zip code of the customer, such as '12345'.")],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.find_user_id_by_name_zip, first_name, last_name, zip)

    # a customer's profile (address, email, payment methods) is personal: Sentinel asks the user's consent
    @mcp.tool(
        annotations=READ,
        description="Get the details of a user, including their orders.",
        meta={"sentinel/personal": "customer profile"},
    )
    async def get_user_details(user_id: UserId) -> Annotated[CallToolResult, User]:
        return _run(ops.get_user_details, user_id)

    @mcp.tool(annotations=READ, description="Get the status and details of an order.")
    async def get_order_details(order_id: OrderId) -> Annotated[CallToolResult, Order]:
        return _run(ops.get_order_details, order_id)

    @mcp.tool(annotations=READ, description="Get the inventory details of a product.")
    async def get_product_details(
        product_id: Annotated[
            str,
            Field(
                description="The product id, such as '6086499569'. Be careful the "
                "product id is different from the item id."
            ),
        ],
    ) -> Annotated[CallToolResult, Product]:
        return _run(ops.get_product_details, product_id)

    @mcp.tool(annotations=READ, description="Get the details of an item (one variant of a product).")
    async def get_item_details(
        item_id: Annotated[
            str,
            Field(
                description="The item id, such as '6086499569'. Be careful the item id "
                "is different from the product id."
            ),
        ],
    ) -> Annotated[CallToolResult, Variant]:
        return _run(ops.get_item_details, item_id)

    @mcp.tool(
        annotations=READ,
        description=(
            "List the name and product id of all product types. Each product type has a variety of different "
            "items with unique item ids and options. There are only 50 product types in the store."
        ),
    )
    async def list_all_product_types() -> Annotated[CallToolResult, dict[str, str]]:
        return _run(ops.list_all_product_types)

    @mcp.tool(annotations=READ, description="Calculate the result of a mathematical expression.")
    async def calculate(
        expression: Annotated[
            str,
            Field(
                description="The mathematical expression to calculate, such as '2 + 2'. "
                "The expression can contain numbers, operators (+, -, *, /), "
                "parentheses, and spaces."
            ),
        ],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.calculate, expression)

    # -- writes --------------------------------------------------------------------------------------
    @mcp.tool(
        annotations=WRITE,
        description=(
            "Cancel a pending order. If the order is already processed or delivered, it cannot be cancelled. "
            "The "
            "agent needs to explain the cancellation detail and ask for explicit user confirmation (yes/no) "
            "to "
            "proceed. If the user confirms, the order status will be changed to 'cancelled' and the payment "
            "will be "
            "refunded: to a gift card at once, otherwise within 5-7 business days."
        ),
    )
    async def cancel_pending_order(
        order_id: OrderId,
        reason: Annotated[
            str,
            Field(
                description="The reason for cancellation, which should be either 'no longer "
                "needed' or 'ordered by mistake'."
            ),
        ],
    ) -> Annotated[CallToolResult, Order]:
        return _run(ops.cancel_pending_order, order_id, reason)

    @mcp.tool(
        annotations=WRITE,
        description=(
            "Exchange items in a delivered order to new items of the same product type. For a delivered "
            "order, "
            "return or exchange can be only done once by the agent. The agent needs to explain the exchange "
            "detail "
            "and ask for explicit user confirmation (yes/no) to proceed."
        ),
    )
    async def exchange_delivered_order_items(
        order_id: OrderId, item_ids: ItemIds, new_item_ids: NewItemIds, payment_method_id: PaymentMethodId
    ) -> Annotated[CallToolResult, Order]:
        return _run(ops.exchange_delivered_order_items, order_id, item_ids, new_item_ids, payment_method_id)

    @mcp.tool(
        annotations=WRITE,
        description=(
            "Modify the shipping address of a pending order. The agent needs to explain the modification "
            "detail "
            "and ask for explicit user confirmation (yes/no) to proceed."
        ),
    )
    async def modify_pending_order_address(
        order_id: OrderId,
        address1: Address1,
        address2: Address2,
        city: City,
        state: State,
        country: Country,
        zip: Zip,
    ) -> Annotated[CallToolResult, Order]:
        return _run(ops.modify_pending_order_address, order_id, address1, address2, city, state, country, zip)

    @mcp.tool(
        annotations=WRITE,
        description=(
            "Modify items in a pending order to new items of the same product type. For a pending order, "
            "this "
            "function can only be called once. The agent needs to explain the exchange detail and ask for "
            "explicit "
            "user confirmation (yes/no) to proceed."
        ),
    )
    async def modify_pending_order_items(
        order_id: OrderId, item_ids: ItemIds, new_item_ids: NewItemIds, payment_method_id: PaymentMethodId
    ) -> Annotated[CallToolResult, Order]:
        return _run(ops.modify_pending_order_items, order_id, item_ids, new_item_ids, payment_method_id)

    @mcp.tool(
        annotations=WRITE,
        description=(
            "Modify the payment method of a pending order. The agent needs to explain the modification "
            "detail and "
            "ask for explicit user confirmation (yes/no) to proceed."
        ),
    )
    async def modify_pending_order_payment(
        order_id: OrderId, payment_method_id: PaymentMethodId
    ) -> Annotated[CallToolResult, Order]:
        return _run(ops.modify_pending_order_payment, order_id, payment_method_id)

    @mcp.tool(
        annotations=WRITE,
        description=(
            "Modify the default address of a user. The agent needs to explain the modification detail and "
            "ask for "
            "explicit user confirmation (yes/no) to proceed."
        ),
    )
    async def modify_user_address(
        user_id: UserId,
        address1: Address1,
        address2: Address2,
        city: City,
        state: State,
        country: Country,
        zip: Zip,
    ) -> Annotated[CallToolResult, User]:
        return _run(ops.modify_user_address, user_id, address1, address2, city, state, country, zip)

    @mcp.tool(
        annotations=WRITE,
        description=(
            "Return some items of a delivered order. The order status will be changed to 'return requested'. "
            "The "
            "agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to "
            "proceed. "
            "The user will receive follow-up email for how and where to return the item."
        ),
    )
    async def return_delivered_order_items(
        order_id: OrderId, item_ids: ItemIds, payment_method_id: PaymentMethodId
    ) -> Annotated[CallToolResult, Order]:
        return _run(ops.return_delivered_order_items, order_id, item_ids, payment_method_id)

    @mcp.tool(
        annotations=HANDOFF,
        description=(
            "Transfer the user to a human agent, with a summary of the user's issue.\n"
            "Only transfer if\n"
            " -  the user explicitly asks for a human agent\n"
            " -  given the policy and the available tools, you cannot solve the user's issue."
        ),
    )
    async def transfer_to_human_agents(
        summary: Annotated[str, Field(description="A summary of the user's issue.")],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.transfer_to_human_agents, summary)

    @mcp.resource(
        "retail://policy",
        name="policy",
        mime_type="text/markdown",
        description="The retail agent policy (tau2-bench policy.md).",
    )
    def policy() -> str:
        return POLICY_PATH.read_text(encoding="utf-8")

    return mcp
