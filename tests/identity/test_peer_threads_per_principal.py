"""Sentinel talks to another agent under one identity for all its principals (its token, its card), so that
agent cannot keep them apart: Sentinel does. Through ``a2a_send`` (and ``a2a_relay``), a principal's context
at a peer is its own whatever id it picks (two models naming a context "trip" do not share one; a context id
copied from another principal's answer opens a context of its own), and a task continues only in a context
of the caller's (the peer is asked for it first): another principal's task id is refused before anything is
sent, exactly as a made-up one is. Before: both ids went to the peer as given, and bob read and continued
alice's thread there.

A real Sentinel over HTTP (the identity rig: alice and bob), an A2A agent that keeps its tasks, on
127.0.0.1, listed by name (``sentinel.a2a.bridge_targets``)."""

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

from tests.a2a.test_card_signatures import card_at
from tests.support.served_app import served_app

from sentinel_mcp.paths import RULEBASES_DIR

from .identity_rig import ALICE, BOB, BOOKINGS_PL, http_client, http_sentinel, text, write_config

pytestmark = pytest.mark.timeout(180)
PEER = "helper"
_numbers = itertools.count(1)


@contextlib.asynccontextmanager
async def keeping_agent() -> AsyncIterator[tuple[int, list[dict[str, Any]]]]:
    """An A2A agent that keeps its tasks: a message opens one (in the context it names, else one it makes
    up) or continues the one it names; ``GetTask`` answers a task it has, or TaskNotFound. It records every
    ``SendMessage`` it was sent, and serves its card."""
    got: list[dict[str, Any]] = []
    tasks: dict[str, dict[str, Any]] = {}

    async def rpc(request: Request) -> JSONResponse:
        body = await request.json()
        params = body.get("params") or {}
        if body.get("method") == "GetTask":
            found = tasks.get(params.get("id"))
            if found is None:
                return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"),
                                     "error": {"code": -32001, "message": "Task not found"}})
            return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": found})
        message = params.get("message") or {}
        got.append({"body": body})
        task = tasks.get(message.get("taskId") or "")
        if task is None:
            n = next(_numbers)
            task = {"id": f"peer-task-{n}", "contextId": message.get("contextId") or f"peer-context-{n}",
                    "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}
            tasks[task["id"]] = task
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {"task": task}})

    def app_at(port: int) -> Starlette:
        async def card(request: Request) -> JSONResponse:
            return JSONResponse(card_at(port, PEER))

        return Starlette(routes=[Route("/a2a", rpc, methods=["POST"]),
                                 Route("/.well-known/agent-card.json", card)])

    async with served_app(app_at, log_level="warning") as port:
        yield port, got


def _sent(got: list[dict[str, Any]]) -> dict[str, Any]:
    return got[-1]["body"]["params"]["message"]


def _answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    task: dict[str, Any] = result.structured_content["task"]
    return task


async def test_a_principals_threads_at_a_peer_are_its_own(tmp_path: Path) -> None:
    async with keeping_agent() as (port, got):
        rulebases = [str(RULEBASES_DIR / "default.pl"), str(BOOKINGS_PL), str(RULEBASES_DIR / "a2a.pl")]
        cfg = write_config(tmp_path, builtins=["sentinel", "a2a"], rulebases=rulebases,
                           a2a={"name": "identity-test", "task_db": "", "allow_loopback_plaintext": True,
                                "bridge_targets": {PEER: f"http://127.0.0.1:{port}/a2a"}})
        with http_sentinel(cfg) as (base, _proc):
            async with http_client(base, ALICE, "auto") as alice, http_client(base, BOB, "auto") as bob:
                send = "a2a__a2a_send"
                # the same word for a context: two contexts at the peer
                a = _answer(await alice.call_tool(send, {"peer": PEER, "text": "alice's plans",
                                                         "context_id": "trip"}))
                alice_context = _sent(got)["contextId"]
                b = _answer(await bob.call_tool(send, {"peer": PEER, "text": "bob's", "context_id": "trip"}))
                assert _sent(got)["contextId"] != alice_context
                # the context id alice was shown, copied: still not hers
                assert a["contextId"] == alice_context
                copied = {"peer": PEER, "text": "bob's", "context_id": alice_context}
                _answer(await bob.call_tool(send, copied))
                assert _sent(got)["contextId"] != alice_context
                # alice carries her own back (as shown, or as she named it): the same context
                for named in (alice_context, "trip"):
                    _answer(await alice.call_tool(send, {"peer": PEER, "text": "more", "context_id": named}))
                    assert _sent(got)["contextId"] == alice_context
                # no context named: one is made up for the caller, and carrying it back keeps it
                fresh = _answer(await alice.call_tool(send, {"peer": PEER, "text": "new"}))
                made_up = _sent(got)["contextId"]
                assert made_up and made_up not in (alice_context, b["contextId"])
                carried = {"peer": PEER, "text": "on", "context_id": fresh["contextId"]}
                _answer(await alice.call_tool(send, carried))
                assert _sent(got)["contextId"] == made_up

                # a task continues for the principal whose context it is in, and for no one else
                before = len(got)
                stolen = await bob.call_tool(send, {"peer": PEER, "text": "yes, do it", "task_id": a["id"]})
                unknown = await bob.call_tool(send, {"peer": PEER, "text": "yes, do it",
                                                     "task_id": "peer-task-999999"})
                assert stolen.is_error and unknown.is_error, text(stolen)
                assert len(got) == before, "bob's message reached alice's task at the peer"
                shown = text(stolen).replace(a["id"], "<id>")
                assert shown == text(unknown).replace("peer-task-999999", "<id>")
                mine = _answer(await alice.call_tool(send, {"peer": PEER, "text": "yes", "task_id": a["id"]}))
                assert mine["id"] == a["id"] and _sent(got)["taskId"] == a["id"]
                # the relay (a bridged chat's door) keeps threads apart the same way
                relay = "a2a__a2a_relay"
                before = len(got)
                stolen = await bob.call_tool(relay, {"target": PEER, "text": "hi", "context_id": "c",
                                                     "task_id": a["id"]})
                assert stolen.is_error and len(got) == before, text(stolen)
                await alice.call_tool(relay, {"target": PEER, "text": "hi", "context_id": "c"})
                alice_relay = _sent(got)["contextId"]
                await bob.call_tool(relay, {"target": PEER, "text": "hi", "context_id": "c"})
                assert _sent(got)["contextId"] != alice_relay
