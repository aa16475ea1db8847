"""What a client declared decides what the front may ask it: ``declared(ctx)`` is the one read of its
capabilities on a call (``Front._call_tool``), so it must say what ``can_elicit`` and ``can_be_asked``
say, for every combination a client can declare."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from mcp.types import ClientCapabilities

from sentinel_mcp.gateway.front_link import can_be_asked, can_elicit, declared
from sentinel_mcp.gateway.input_rounds import ELICITATION

ELICITATIONS = [None, {}, {"form": {}}, {"url": {}}, {"form": {}, "url": {}}]


def test_what_a_client_declared_says_whether_it_can_elicit_and_be_asked() -> None:
    seen, outcomes = 0, set()
    for elicitation, sampling, roots in itertools.product(ELICITATIONS, (None, {}), (None, {})):
        raw = {k: v for k, v in (("elicitation", elicitation), ("sampling", sampling), ("roots", roots))
               if v is not None}
        for caps in (ClientCapabilities.model_validate(raw), None):
            ctx = SimpleNamespace(session=SimpleNamespace(client_capabilities=caps))
            may_ask = declared(ctx)  # type: ignore[arg-type]
            assert (ELICITATION in may_ask) == can_elicit(ctx)  # type: ignore[arg-type]
            assert bool(may_ask) == can_be_asked(ctx)  # type: ignore[arg-type]
            seen += 1
            outcomes.add((can_elicit(ctx), can_be_asked(ctx)))  # type: ignore[arg-type]
    assert seen == 40 and outcomes == {(True, True), (False, True), (False, False)}


def test_declared_names_each_capability_the_predicates_name() -> None:
    """``declared`` reads the capabilities once; what it names is what the four predicates say, one by one."""
    from sentinel_mcp.gateway.front_link import can_sample, has_roots
    from sentinel_mcp.gateway.input_rounds import ROOTS, SAMPLING, URL_ELICITATION

    for elicitation, sampling, roots in itertools.product(ELICITATIONS, (None, {}), (None, {})):
        raw = {k: v for k, v in (("elicitation", elicitation), ("sampling", sampling), ("roots", roots))
               if v is not None}
        for caps in (ClientCapabilities.model_validate(raw), None):
            ctx = SimpleNamespace(session=SimpleNamespace(client_capabilities=caps))
            said = {ELICITATION: can_elicit(ctx), URL_ELICITATION: can_elicit(ctx, "url"),  # type: ignore[arg-type]
                    SAMPLING: can_sample(ctx), ROOTS: has_roots(ctx)}  # type: ignore[arg-type]
            assert declared(ctx) == frozenset(k for k, v in said.items() if v)  # type: ignore[arg-type]
            assert type(declared(ctx)) is frozenset  # type: ignore[arg-type]
