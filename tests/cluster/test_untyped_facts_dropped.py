"""Facts stored before a text spelling a literal was kept apart from the literal are not trusted.

Before, a tool's text ``"true"`` and the JSON ``true`` were both stored as the atom ``true``
(``flag(d,true)``, args ``["d", true]``): a stored literal may have been a hostile upstream's text. Opening
such a store (its facts schema one step older) drops every fact holding a literal at any depth, with its value
rows, so none of them grants before it is read again, typed; facts without a literal, and contexts, stay as
written. On SQLite and PostgreSQL."""

from __future__ import annotations

import time

from sentinel_mcp.policy.fact_schema import STORE_SCHEMA
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.storage import Statement


def _fact(pred: str, args: list, text: str, provenance: str = "observed") -> Fact:  # type: ignore[type-arg]
    # alive for the test, whenever it runs (a time taken at import ran out before a long suite reached it)
    return Fact(session="s1", predicate=pred, args=args, fact=text, provenance=provenance,  # type: ignore[arg-type]
                expires_at=time.time() + 600)


def _old() -> list[Fact]:
    return [
        _fact("doc_approved", ["d1", True], "doc_approved(d1,true)"),
        _fact("doc_locked", ["d1", False], "doc_locked(d1,false)", "user"),
        _fact("doc_hold", ["d1", None], "doc_hold(d1,null)", "agent"),
        _fact("whole", ["d1", {"a": [1, {"b": True}]}], "whole(d1,json([a=[1,json([b=true])]]))"),
        _fact("flag", [True], "flag(true)", "seed"),
    ]


def _kept() -> list[Fact]:
    return [
        _fact("owns", ["u1", "d1"], "owns(u1,d1)"),
        _fact("doc_approved", ["d2", "true"], 'doc_approved(d2,"true")'),
        _fact("price", ["d1", 1.5, [0, "null"]], 'price(d1,1.5,[0,"null"])'),
    ]


async def test_a_stores_literals_from_before_typed_texts_are_dropped(store_location: str) -> None:
    old, kept = _old(), _kept()
    store = await FactStore(store_location).open()
    try:
        await store.add(old + kept)
        await store.bind_context("s1", "doc", "true")
        assert len(await store.valid("s1")) == len(old + kept)
        # the store as the version before this one left it: its facts schema before the step that drops them
        steps = STORE_SCHEMA.steps("postgres" if store.shared else "sqlite")
        older = next(i for i, s in enumerate(steps) if getattr(s, "__name__", "").startswith("_drop_untyped"))
        older_schema = Statement("UPDATE storage_schema SET version = ? WHERE store = ?", (older, "facts"))
        await store.db.run([older_schema])
    finally:
        await store.close()
    store = await FactStore(store_location).open()
    try:
        assert sorted(f.fact for f in await store.valid("s1")) == sorted(f.fact for f in kept)
        assert await store.known_values("s1", ["d1", "d2", "u1", "true", "null"]) == {
            "d1", "d2", "u1", "true", "null"}
        assert await store.contexts("s1") == {"doc": "true"}
        # once: facts with literals written from now on are typed, and stay
        await store.add(old)
    finally:
        await store.close()
    store = await FactStore(store_location).open()
    try:
        assert len(await store.valid("s1")) == len(old + kept)
    finally:
        await store.close()
