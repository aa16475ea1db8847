"""Write tools that check nothing: the retail API a policy must not rely on.

`python -m examples.retail --permissive` serves these. Every write is carried out as asked (any status, any
cancellation reason, a payment method of another user or none at all, a new item of another product or one
that is out of stock, a gift card without the balance, the same item twice), so a test against it shows what
the guard itself enforces. Only the record written to must exist (an unknown order or user is still an error:
there is nothing to write to), and a new item must exist somewhere (its price and options are copied).
"""

from __future__ import annotations

from .database import RetailError
from .models import CANCEL_REASONS, Address, GiftCard, Order, OrderItem, Variant
from .operations import RetailOperations, cancellation_refunds, money


class PermissiveOperations(RetailOperations):
    """`RetailOperations` whose writes only look up what they write to, then write."""

    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        order = self.database.order(order_id)
        user = self.database.user(order.user_id)
        refunds = cancellation_refunds(order)
        for refund in refunds:
            method = user.payment_methods.get(refund.payment_method_id)
            if isinstance(method, GiftCard):
                method.balance = money(method.balance + refund.amount)
        order.status = "cancelled"
        # the model keeps only the two reasons; any other is carried out all the same (and not recorded)
        order.cancel_reason = reason if reason in CANCEL_REASONS else None  # type: ignore[assignment]
        order.payment_history.extend(refunds)
        return order

    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> Order:
        order = self.database.order(order_id)
        order.address = Address(
            address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
        )
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        order = self.database.order(order_id)
        first = order.payment_history[0] if order.payment_history else None
        old_id = first.payment_method_id if first else payment_method_id
        amount = first.amount if first else 0.0
        self._switch_payment(order, old_id, payment_method_id, amount)
        return order

    def _pairs(
        self, order: Order, item_ids: list[str], new_item_ids: list[str]
    ) -> list[tuple[OrderItem, Variant]]:
        pairs = []
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            item = next((i for i in order.items if i.item_id == item_id), None)
            if item is None:
                raise RetailError(f"Item {item_id} not found")  # nothing to write to
            pairs.append((item, self.database.item(new_item_id)[1]))
        return pairs

    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Order:
        order = self.database.order(order_id)
        pairs = self._pairs(order, item_ids, new_item_ids)
        difference = money(sum(v.price - i.price for i, v in pairs))
        # _replace_items swaps one ordered item per pair: more pairs than items of an id is a missing record
        self._replace_items(order, pairs, difference, payment_method_id)
        return order

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> Order:
        order = self.database.order(order_id)
        order.status = "return requested"
        order.return_items = sorted(item_ids)
        order.return_payment_method_id = payment_method_id
        return order

    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Order:
        order = self.database.order(order_id)
        pairs = self._pairs(order, item_ids, new_item_ids)
        difference = money(sum(v.price - i.price for i, v in pairs))
        self._request_exchange(order, item_ids, new_item_ids, payment_method_id, difference)
        return order
