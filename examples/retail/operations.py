"""The operations of tau2-bench's retail domain over the in-memory database, with the checks its API makes.

Each method mirrors the tool of the same name (../shared/data/tau2-retail/API.md): same arguments, same
return value, same checks (raised as `RetailError`). Every check runs before the first write, so a refused
call changes nothing. The MCP layer (`server.py`) only adds argument validation and result encoding.
"""

from __future__ import annotations

from collections import Counter

from .database import RetailDatabase, RetailError
from .models import CANCEL_REASONS, Address, GiftCard, Order, OrderItem, OrderPayment, Product, User, Variant


def money(amount: float) -> float:
    return round(amount, 2)


def cancellation_refunds(order: Order) -> list[OrderPayment]:
    """A refund to each method of what it still has paid for the order (its payments less its refunds), in
    the order the methods first paid: the total, once. (tau2's API refunds every entry of the history, the
    refund of a payment change too, so a cancellation after a payment change credited a gift card again: the
    total out of nothing, policy.md's 'the total will be refunded' broken.)"""
    held: dict[str, float] = {}
    for p in order.payment_history:
        sign = 1 if p.transaction_type == "payment" else -1
        held[p.payment_method_id] = held.get(p.payment_method_id, 0.0) + sign * p.amount
    return [
        OrderPayment(transaction_type="refund", amount=money(amount), payment_method_id=method)
        for method, amount in held.items()
        if money(amount) > 0
    ]


class RetailOperations:
    """tau2's retail tools, over a `RetailDatabase`."""

    def __init__(self, database: RetailDatabase) -> None:
        self.database = database

    # -- read -------------------------------------------------------------------------------------

    def find_user_id_by_email(self, email: str) -> str:
        wanted = email.strip().casefold()
        for user_id, user in self.database.db.users.items():
            if user.email.casefold() == wanted:
                return user_id
        raise RetailError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        first, last = first_name.strip().casefold(), last_name.strip().casefold()
        for user_id, user in self.database.db.users.items():
            if (user.name.first_name.casefold() == first and user.name.last_name.casefold() == last
                    and user.address.zip == zip.strip()):
                return user_id
        raise RetailError("User not found")

    def get_user_details(self, user_id: str) -> User:
        return self.database.user(user_id)

    def get_order_details(self, order_id: str) -> Order:
        return self.database.order(order_id)

    def get_product_details(self, product_id: str) -> Product:
        return self.database.product(product_id)

    def get_item_details(self, item_id: str) -> Variant:
        return self.database.item(item_id)[1]

    def list_all_product_types(self) -> dict[str, str]:
        return dict(sorted((p.name, p.product_id) for p in self.database.db.products.values()))

    # -- generic ----------------------------------------------------------------------------------

    def calculate(self, expression: str) -> str:
        from examples.airline.calculator import calculate as evaluate
        from examples.airline.database import AirlineError

        try:
            return evaluate(expression)
        except AirlineError as error:
            raise RetailError(str(error)) from error

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write ------------------------------------------------------------------------------------

    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        order = self.database.order(order_id)
        if order.status != "pending":
            raise RetailError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise RetailError("Invalid reason")
        user = self.database.user(order.user_id)
        refunds = cancellation_refunds(order)
        for refund in refunds:  # a gift card gets its refund at once
            method = user.payment_methods.get(refund.payment_method_id)
            if isinstance(method, GiftCard):
                method.balance = money(method.balance + refund.amount)
        order.status = "cancelled"
        order.cancel_reason = reason  # type: ignore[assignment]
        order.payment_history.extend(refunds)
        return order

    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> Order:
        order = self.database.order(order_id)
        if "pending" not in order.status:
            raise RetailError("Non-pending order cannot be modified")
        order.address = Address(
            address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
        )
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        order = self.database.order(order_id)
        if "pending" not in order.status:
            raise RetailError("Non-pending order cannot be modified")
        method = self.database.payment_method(order.user_id, payment_method_id)
        history = order.payment_history
        if len(history) != 1 or history[0].transaction_type != "payment":
            raise RetailError("There should be exactly one payment for a pending order")
        old_id = history[0].payment_method_id
        if old_id == payment_method_id:
            raise RetailError("The new payment method should be different from the current one")
        amount = history[0].amount
        if isinstance(method, GiftCard) and method.balance < amount:
            raise RetailError("Insufficient gift card balance to pay for the order")
        self._switch_payment(order, old_id, payment_method_id, amount)
        return order

    def _switch_payment(self, order: Order, old_id: str, new_id: str, amount: float) -> None:
        user = self.database.user(order.user_id)
        order.payment_history.extend(
            [
                OrderPayment(transaction_type="payment", amount=amount, payment_method_id=new_id),
                OrderPayment(transaction_type="refund", amount=amount, payment_method_id=old_id),
            ]
        )
        new, old = user.payment_methods.get(new_id), user.payment_methods.get(old_id)
        if isinstance(new, GiftCard):
            new.balance = money(new.balance - amount)
        if isinstance(old, GiftCard):
            old.balance = money(old.balance + amount)

    def _replacements(
        self, order: Order, item_ids: list[str], new_item_ids: list[str], distinct: bool
    ) -> list[tuple[OrderItem, Variant]]:
        """(ordered item, new variant) per pair, after the API's checks: the items are in the order (as many
        times as listed), as many new items, each an available variant of the same product."""
        held = Counter(item.item_id for item in order.items)
        for item_id, count in Counter(item_ids).items():
            if count > held[item_id]:
                raise RetailError(f"{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise RetailError("The number of items to be exchanged should match")
        pairs = []
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            if distinct and item_id == new_item_id:
                raise RetailError("The new item id should be different from the old item id")
            item = next(i for i in order.items if i.item_id == item_id)
            variant = self.database.variant(item.product_id, new_item_id)
            if not variant.available:
                raise RetailError(f"New item {new_item_id} not found or available")
            pairs.append((item, variant))
        return pairs

    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Order:
        order = self.database.order(order_id)
        if order.status != "pending":
            raise RetailError("Non-pending order cannot be modified")
        pairs = self._replacements(order, item_ids, new_item_ids, distinct=True)
        method = self.database.payment_method(order.user_id, payment_method_id)
        difference = money(sum(v.price - i.price for i, v in pairs))
        if isinstance(method, GiftCard) and method.balance < difference:
            raise RetailError("Insufficient gift card balance to pay for the new item")
        self._replace_items(order, pairs, difference, payment_method_id)
        return order

    def _replace_items(
        self, order: Order, pairs: list[tuple[OrderItem, Variant]], difference: float, payment_method_id: str
    ) -> None:
        indices: list[int] = []  # each listed item replaces one ordered item (duplicates one by one)
        for item, _ in pairs:
            index = next(
                (n for n, i in enumerate(order.items) if i.item_id == item.item_id and n not in indices), None
            )
            if index is None:
                raise RetailError(f"{item.item_id} not found")
            indices.append(index)
        order.payment_history.append(
            OrderPayment(
                transaction_type="payment" if difference > 0 else "refund",
                amount=abs(difference),
                payment_method_id=payment_method_id,
            )
        )
        method = self.database.user(order.user_id).payment_methods.get(payment_method_id)
        if isinstance(method, GiftCard):
            method.balance = money(method.balance - difference)
        for index, (_, variant) in zip(indices, pairs):
            target = order.items[index]
            target.item_id, target.price, target.options = (
                variant.item_id,
                variant.price,
                dict(variant.options),
            )
        order.status = "pending (item modified)"

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> Order:
        order = self.database.order(order_id)
        if order.status != "delivered":
            raise RetailError("Non-delivered order cannot be returned")
        method = self.database.payment_method(order.user_id, payment_method_id)
        if (
            not isinstance(method, GiftCard)
            and payment_method_id != order.payment_history[0].payment_method_id
        ):
            raise RetailError("Payment method should be the original payment method")
        held = Counter(item.item_id for item in order.items)
        if any(count > held[item_id] for item_id, count in Counter(item_ids).items()):
            raise RetailError("Some item not found")
        order.status = "return requested"
        order.return_items = sorted(item_ids)
        order.return_payment_method_id = payment_method_id
        return order

    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Order:
        order = self.database.order(order_id)
        if order.status != "delivered":
            raise RetailError("Non-delivered order cannot be exchanged")
        pairs = self._replacements(order, item_ids, new_item_ids, distinct=False)
        difference = money(sum(v.price - i.price for i, v in pairs))
        method = self.database.payment_method(order.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < difference:
            raise RetailError("Insufficient gift card balance to pay for the price difference")
        self._request_exchange(order, item_ids, new_item_ids, payment_method_id, difference)
        return order

    @staticmethod
    def _request_exchange(
        order: Order, item_ids: list[str], new_item_ids: list[str], payment_method_id: str, difference: float
    ) -> None:
        order.status = "exchange requested"
        order.exchange_items = sorted(item_ids)
        order.exchange_new_items = sorted(new_item_ids)
        order.exchange_payment_method_id = payment_method_id
        order.exchange_price_difference = difference

    def modify_user_address(
        self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> User:
        user = self.database.user(user_id)
        user.address = Address(
            address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
        )
        return user
