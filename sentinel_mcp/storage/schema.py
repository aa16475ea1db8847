"""A store's schema: numbered migrations, per backend, applied once each and recorded in the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union

# a migration is SQL (script) or a function of the backend's raw connection (for data rewrites): a
# ``sqlite3.Connection`` or a psycopg connection, whichever the backend it is listed under gives it
Migration = Union[str, Callable[[Any], None]]


@dataclass(frozen=True)
class Schema:
    store: str  # e.g. "audit", "facts": one version row per store in the same database
    migrations: dict[str, list[Migration]] = field(default_factory=dict)  # backend -> ordered steps

    def steps(self, backend: str) -> list[Migration]:
        try:
            return self.migrations[backend]
        except KeyError:
            raise ValueError(f"store {self.store!r} has no schema for the {backend} backend") from None

    def version(self, backend: str) -> int:
        return len(self.steps(backend))
