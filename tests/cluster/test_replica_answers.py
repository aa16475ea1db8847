"""Two replicas' gateways on one PostgreSQL (in one process here: each its own front, engine mirror, seal and
audit chain; the same seal key), spoken to by the real ``mcp`` client in the 2026-07-28 era: answers given on
replica A decide on replica B, a sealed retry lands on either replica, and racing the same answered retry on
both replicas runs the call exactly once, round after round."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
from tests.support.carried_session import Carried
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR
from tests.gateway.helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(180)
ROUNDS = 6  # races, bounded by count
RULES = """
askable(colour(P, C), "Which colour for ~w?", choice([red, green, blue]), [from([user, agent])]).
guard('tb__write_marker', [path = P, text = T], ( colour(P, _), confirmed('Write ~w into ~w?', [T, P]) )).
"""
KEY = "cluster-test-seal-key-0123456789abcdef"


def config(data_dir: Path, url: str, replica: str) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir.parent / "marker.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio()}, builtins=["sentinel"], store=url,
                       cluster={"replica": replica, "seal_key": KEY},
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


def accept(content: dict[str, Any]) -> ElicitResult:
    return ElicitResult(action="accept", content=content)


async def unused(ctx: Any, params: Any) -> ElicitResult:  # the client can elicit (answers go in the retry)
    raise AssertionError("nothing is pushed in the 2026-07-28 era")


def kinds(r: Any) -> list[str]:
    assert hasattr(r, "input_requests"), r.content[0].text
    return sorted("confirm" if ".confirm." in k else "colour" for k in r.input_requests)


async def test_answers_and_retries_across_two_replicas(tmp_path: Path, pg_url: str) -> None:
    marker = tmp_path / "marker.txt"
    args = {"path": str(marker), "text": "once"}
    async with contextlib.AsyncExitStack() as stack:
        rt_a = await stack.enter_async_context(running_gateway(config(tmp_path / "a", pg_url, "replica-a")))
        rt_b = await stack.enter_async_context(running_gateway(config(tmp_path / "b", pg_url, "replica-b")))
        ca = await stack.enter_async_context(
            Client(rt_a.front.server, mode="auto", elicitation_callback=unused)
        )
        cb = await stack.enter_async_context(
            Client(rt_b.front.server, mode="auto", elicitation_callback=unused)
        )
        a, b = Carried(ca.session), Carried(cb.session)

        # the conversation starts on A; B decides in it too (and so mirrors it) before anything is answered
        r = await a.call_tool("tb__write_marker", args, allow_input_required=True)
        assert "colour" in kinds(r), r
        b.session = a.session
        assert "colour" in kinds(await b.call_tool("tb__write_marker", args, allow_input_required=True))
        # on A: the colour is answered (a user fact in the shared store), the confirmation is not
        responses = {k: accept({"answer": "red"}) for k in r.input_requests if ".confirm." not in k}
        r = await a.call_tool(
            "tb__write_marker",
            args,
            allow_input_required=True,
            input_responses=responses,
            request_state=r.request_state,
        )
        assert kinds(r) == ["confirm"], r

        # on B, whose mirror of the conversation predates the answer: A's answer decides here (read through),
        # only the confirmation is asked
        for round_ in range(ROUNDS):
            r = await b.call_tool("tb__write_marker", args, allow_input_required=True)
            assert kinds(r) == ["confirm"], (round_, r)
            answer = {k: accept({"answer": True}) for k in r.input_requests}
            # the answered retry sent to both replicas at once: exactly one runs the call
            # (round 0: only to A, the replica that did not ask: a retry lands on any replica)
            targets = (ca.session,) if round_ == 0 else (ca.session, cb.session)
            results = await asyncio.gather(
                *(
                    c.call_tool(
                        "tb__write_marker",
                        args,
                        allow_input_required=True,
                        input_responses=answer,
                        request_state=r.request_state,
                        meta={"sentinel/session": a.session},
                    )
                    for c in targets
                )
            )
            ran = [x for x in results if type(x).__name__ == "CallToolResult" and not x.is_error]
            assert len(ran) == 1, (round_, results)
            assert marker.read_text().count("once") == round_ + 1
            # and a replay of that retry on either replica is refused
            again = await ca.session.call_tool(
                "tb__write_marker",
                args,
                allow_input_required=True,
                input_responses=answer,
                request_state=r.request_state,
                meta={"sentinel/session": a.session},
            )
            assert type(again).__name__ != "CallToolResult" or again.is_error, again
            assert marker.read_text().count("once") == round_ + 1

    # both replicas' records are in the one audit log, each in its own chain
    import psycopg

    with psycopg.connect(pg_url) as conn:
        chains = {c for (c,) in conn.execute("SELECT DISTINCT chain FROM audit")}
    assert chains == {"replica-a", "replica-b"}
