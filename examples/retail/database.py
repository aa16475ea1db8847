"""Loading the retail database and looking records up in it.

The database is read from the pristine `db.json` at every start and then lives only in memory: writes never
touch the file, so each run starts from the same state.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from .models import Order, PaymentMethod, Product, RetailDB, User, Variant

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_DB_PATH = DATA_DIR / "db.json"
POLICY_PATH = DATA_DIR / "policy.md"
DB_ENV_VAR = "RETAIL_DB"


class RetailError(ValueError):
    """A check of the retail API failed; the message is shown to the caller as a tool error."""


class DatabaseLoadError(RuntimeError):
    """The database file is missing or not a valid retail db.json."""


def database_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The db.json to load: an explicit path, else $RETAIL_DB, else the bundled pristine copy."""
    if explicit is not None:
        return Path(explicit)
    from_env = os.environ.get(DB_ENV_VAR)
    return Path(from_env) if from_env else DEFAULT_DB_PATH


def load_database(path: str | os.PathLike[str] | None = None) -> RetailDB:
    source = database_path(path)
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise DatabaseLoadError(f"cannot read retail database {source}: {exc.strerror or exc}") from exc
    try:
        return RetailDB.model_validate_json(raw)
    except ValidationError as exc:
        raise DatabaseLoadError(f"{source} is not a valid retail database: {exc.error_count()} errors, "
                                f"first: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}") from exc


class RetailDatabase:
    """The in-memory database with tau2's lookups (ids match exactly); the tools mutate its records."""

    def __init__(self, db: RetailDB) -> None:
        self.db = db

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> RetailDatabase:
        return cls(load_database(path))

    def user(self, user_id: str) -> User:
        found = self.db.users.get(user_id)
        if found is None:
            raise RetailError("User not found")
        return found

    def order(self, order_id: str) -> Order:
        found = self.db.orders.get(order_id)
        if found is None:
            raise RetailError("Order not found")
        return found

    def product(self, product_id: str) -> Product:
        found = self.db.products.get(product_id)
        if found is None:
            raise RetailError("Product not found")
        return found

    def variant(self, product_id: str, item_id: str) -> Variant:
        found = self.product(product_id).variants.get(item_id)
        if found is None:
            raise RetailError("Variant not found")
        return found

    def item(self, item_id: str) -> tuple[Product, Variant]:
        """The product and variant of an item id, whatever its product."""
        for product in self.db.products.values():
            if item_id in product.variants:
                return product, product.variants[item_id]
        raise RetailError("Item not found")

    def payment_method(self, user_id: str, payment_method_id: str) -> PaymentMethod:
        found = self.user(user_id).payment_methods.get(payment_method_id)
        if found is None:
            raise RetailError("Payment method not found")
        return found
