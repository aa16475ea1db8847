"""Pydantic data model of the tau2-bench retail domain (db.json records and tool results).

Field names follow tau2-bench's retail data model, so tool results have tau2's JSON shape and a policy reads
them with JSON paths (`/status`, `/items/0/item_id`, `/payment_methods/<id>/balance`, ...).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

OrderStatus = Literal["processed", "pending", "pending (item modified)", "delivered", "cancelled",
                      "exchange requested", "return requested"]
CancelReason = Literal["no longer needed", "ordered by mistake"]
CANCEL_REASONS: tuple[str, ...] = ("no longer needed", "ordered by mistake")


class Variant(BaseModel):
    item_id: str = Field(description="Unique identifier of the item (the variant)")
    options: dict[str, str] = Field(description="Option names to values, e.g. {'color': 'blue', 'size': 'M'}")
    available: bool = Field(description="Whether this item can be ordered now")
    price: float = Field(description="Price of this item in dollars")


class Product(BaseModel):
    name: str = Field(description="Name of the product type")
    product_id: str = Field(description="Unique identifier of the product (unrelated to item ids)")
    variants: dict[str, Variant] = Field(description="The product's items, by item id")


class Name(BaseModel):
    first_name: str = Field(description="First name")
    last_name: str = Field(description="Last name")


class Address(BaseModel):
    address1: str = Field(description="Primary address line")
    address2: str = Field(description="Secondary address line (may be empty)")
    city: str = Field(description="City")
    country: str = Field(description="Country")
    state: str = Field(description="State or province")
    zip: str = Field(description="Postal code")


class CreditCard(BaseModel):
    source: Literal["credit_card"] = Field(description="A credit card")
    id: str = Field(description="Payment method id")
    brand: str = Field(description="Card brand (visa, mastercard, ...)")
    last_four: str = Field(description="Last four digits of the card")


class Paypal(BaseModel):
    source: Literal["paypal"] = Field(description="A PayPal account")
    id: str = Field(description="Payment method id")


class GiftCard(BaseModel):
    source: Literal["gift_card"] = Field(description="A gift card")
    id: str = Field(description="Payment method id")
    balance: float = Field(description="Balance left on the gift card, in dollars")


PaymentMethod = Annotated[CreditCard | Paypal | GiftCard, Field(discriminator="source")]


class User(BaseModel):
    user_id: str = Field(description="Unique identifier of the user")
    name: Name = Field(description="The user's full name")
    address: Address = Field(description="The user's default address")
    email: str = Field(description="The user's email address")
    payment_methods: dict[str, PaymentMethod] = Field(description="The user's payment methods, by id")
    orders: list[str] = Field(description="The user's order ids")


class Fulfillment(BaseModel):
    tracking_id: list[str] = Field(description="Tracking ids of the shipment")
    item_ids: list[str] = Field(description="Item ids in the shipment")


class OrderItem(BaseModel):
    name: str = Field(description="Product name")
    product_id: str = Field(description="Product id")
    item_id: str = Field(description="Item id (the variant ordered)")
    price: float = Field(description="Price paid for the item")
    options: dict[str, str] = Field(description="Options of the item ordered")


class OrderPayment(BaseModel):
    transaction_type: Literal["payment", "refund"] = Field(description="A payment or a refund")
    amount: float = Field(description="Amount in dollars")
    payment_method_id: str = Field(description="The payment method used")


class Order(BaseModel):
    order_id: str = Field(description="Unique identifier of the order, such as '#W0000000'")
    user_id: str = Field(description="The user who placed the order")
    address: Address = Field(description="Shipping address")
    items: list[OrderItem] = Field(description="Items ordered (an item id may occur several times)")
    status: OrderStatus = Field(description="Status of the order")
    fulfillments: list[Fulfillment] = Field(description="Shipments")
    payment_history: list[OrderPayment] = Field(description="Payments and refunds, oldest first")
    cancel_reason: CancelReason | None = Field(None, description="Why the order was cancelled")
    exchange_items: list[str] | None = Field(None, description="Items to be exchanged")
    exchange_new_items: list[str] | None = Field(None, description="Items they are exchanged for")
    exchange_payment_method_id: str | None = Field(
        None, description="Payment method of the exchange's difference"
    )
    exchange_price_difference: float | None = Field(None, description="Price difference of the exchange")
    return_items: list[str] | None = Field(None, description="Items to be returned")
    return_payment_method_id: str | None = Field(None, description="Payment method that receives the refund")


class RetailDB(BaseModel):
    """The whole database: products, users and orders, each by id."""

    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]
