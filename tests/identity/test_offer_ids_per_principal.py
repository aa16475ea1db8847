"""Sentinel offers intents to its orchestrator under one identity for all its principals, so the orchestrator
cannot tell whose intent an ``intent_id`` names: Sentinel does. Through ``a2a_offer``, a principal's intent
id (and the context its offer opens) goes out in its own form (``peer_threads``): two principals naming an
intent "trip" make two intents there, and an id copied from another principal's offer is one of the caller's
own. Before: the id went as given, and an orchestrator that keeps offers by their intent id (an idempotent
one: a repeated offer is the same intent) answered bob's "trip" with alice's, her words and its result.

A real Sentinel over HTTP (the identity rig: alice and bob), an orchestrator on 127.0.0.1 that keeps offers
by intent id."""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.served_app import served_app

from .identity_rig import ALICE, BOB, http_client, http_sentinel, text, write_config

pytestmark = pytest.mark.timeout(180)
_numbers = itertools.count(1)


@contextlib.asynccontextmanager
async def idempotent_orchestrator() -> AsyncIterator[tuple[int, list[dict[str, Any]]]]:
    """An orchestrator that takes each offer (COMPLETED, the intent's words as its artifact) and keeps it by
    its intent id: an offer under an id it has already taken answers with that task. Records each offer."""
    got: list[dict[str, Any]] = []
    by_intent: dict[str, dict[str, Any]] = {}

    async def rpc(request: Request) -> JSONResponse:
        body = await request.json()
        message = (body.get("params") or {}).get("message") or {}
        [offer] = [p["data"] for p in message.get("parts", []) if isinstance(p.get("data"), dict)]
        got.append({"intent_id": offer["intent_id"], "context": message.get("contextId")})
        task = by_intent.get(offer["intent_id"])
        if task is None:
            n = next(_numbers)
            task = {"id": f"orch-task-{n}", "contextId": message.get("contextId") or f"orch-context-{n}",
                    "status": {"state": "TASK_STATE_COMPLETED"},
                    "artifacts": [{"artifactId": f"a-{n}", "parts": [{"text": f"done: {offer['intent']}"}]}]}
            by_intent[offer["intent_id"]] = task
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {"task": task}})

    async with served_app(lambda port: Starlette(routes=[Route("/a2a", rpc, methods=["POST"])]),
                          log_level="warning") as port:
        yield port, got


async def test_a_principals_intent_ids_at_the_orchestrator_are_its_own(tmp_path: Path) -> None:
    async with idempotent_orchestrator() as (port, got):
        cfg = write_config(tmp_path, builtins=["sentinel", "a2a"], policy={"allow": ["a2a__a2a_offer"]},
                           a2a={"name": "identity-test", "task_db": "",
                                "orchestrator_url": f"http://127.0.0.1:{port}/a2a"})
        with http_sentinel(cfg) as (base, _proc):
            async with http_client(base, ALICE, "auto") as alice, http_client(base, BOB, "auto") as bob:
                offer = "a2a__a2a_offer"
                a = await alice.call_tool(offer, {"intent": "alice's secret plan", "intent_id": "trip"})
                assert not a.is_error and "alice's secret plan" in text(a), text(a)
                alice_sent = got[-1]
                b = await bob.call_tool(offer, {"intent": "bob's errand", "intent_id": "trip"})
                assert not b.is_error, text(b)
                assert "alice" not in text(b) and "bob's errand" in text(b), text(b)
                assert got[-1]["intent_id"] != alice_sent["intent_id"]
                # the id alice's offer went under, copied: still bob's own
                c = await bob.call_tool(offer, {"intent": "bob again", "intent_id": alice_sent["intent_id"]})
                assert "alice" not in text(c) and "bob again" in text(c), text(c)
                assert got[-1]["intent_id"] != alice_sent["intent_id"]
                # alice repeating hers is the same intent there (as named, or as it went)
                for named in ("trip", alice_sent["intent_id"]):
                    again = await alice.call_tool(offer, {"intent": "alice's plan", "intent_id": named})
                    assert "alice's secret plan" in text(again), text(again)  # the first offer's task
                    assert got[-1]["intent_id"] == alice_sent["intent_id"]
                # each offer opens a context of its principal's, never one the orchestrator makes up
                assert all(g["context"] and g["context"].startswith(("alice:", "bob:")) for g in got), got
                assert {g["context"].split(":", 1)[0] for g in got[:2]} == {"alice", "bob"}, got
