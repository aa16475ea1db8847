"""An answer to an upstream's form is checked by one type-strict rule, whichever era the client speaks: a
2026-era client's answer to a held call's question (``held_calls``, input-required rounds) and a handshake
client's answer to the question pushed on to it (``front_link``). JSON types as they are: the string "true"
is no boolean, 1 is no ``true``, "1" no integer, ``true`` no number, a number no string; an integer field's
number is the integer it equals (1.0 reaches the upstream as 1, as an argument does: ``json_numbers``) and
one longer than the wire takes (1e300) is no answer. Each wrong answer is refused with a clear reason and the
tool never runs on it (the upstream's tool writes what it got to a file: nothing is written); the right
answer is still taken. Real gateway, real upstream in a subprocess, the real mcp Client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config
from .test_answer_forgery import always_yes, answer, is_input_required, refused_rows, text

pytestmark = pytest.mark.timeout(180)
ASKER = str(Path(__file__).with_name("typed_asker_server.py"))
GOOD = {"flag": True, "count": 3, "ratio": 0.5, "label": "ok"}
WRONG: dict[str, list[Any]] = {
    "flag": ["true", "True", "1", "yes", "on", 1, 0, 1.0, None, ["true"]],
    "count": ["3", "3.0", " 3", True, False, 3.5, 1e300, None, ["3"]],
    "ratio": ["0.5", ".5", "1e0", True, None, ["0.5"]],
    "label": [1, 0.5, True, False, None, ["ok"]],
}
BAD = [{**GOOD, field: value} for field, values in WRONG.items() for value in values]


def config(data_dir: Path) -> Any:
    return make_config(data_dir, servers={"old": {**forked_spec(ASKER),
                                                  "protocol": "legacy"}})


async def held_question(c: Client, args: dict[str, Any]) -> Any:
    r = await c.session.call_tool("old__typed_push", args, allow_input_required=True)
    assert is_input_required(r) and list(r.input_requests) == ["upstream.held.1"], r
    return r


async def test_a_2026_clients_answer_to_a_held_question_is_type_strict(data_dir: Path) -> None:
    marker = data_dir / "ran.jsonl"
    args = {"path": str(marker)}
    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            for content in BAD:
                held = await held_question(c, args)
                r = await answer(c, args, {"upstream.held.1": ElicitResult(action="accept", content=content)},
                                 held.request_state, "old__typed_push")
                assert r.is_error and "does not fit its question" in text(r), (content, text(r))
                assert not marker.exists(), (content, marker.read_text())
            for given, got in [(GOOD, GOOD), ({**GOOD, "count": 3.0}, GOOD)]:
                held = await held_question(c, args)
                r = await answer(c, args, {"upstream.held.1": ElicitResult(action="accept", content=given)},
                                 held.request_state, "old__typed_push")
                assert not r.is_error and text(r) == "typed:" + json.dumps(got, sort_keys=True), text(r)
        assert len(await refused_rows(rt)) == len(BAD)
    assert [json.loads(line) for line in marker.read_text().splitlines()] == [GOOD, GOOD]
    assert all(type(json.loads(line)["count"]) is int for line in marker.read_text().splitlines())


async def test_a_handshake_clients_answer_to_a_pushed_question_is_type_strict(data_dir: Path) -> None:
    marker = data_dir / "ran.jsonl"
    replies = [ElicitResult(action="accept", content=content) for content in BAD]

    async def pushed(ctx: Any, params: Any) -> ElicitResult:
        return replies.pop(0)

    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=pushed) as c:
            for content in BAD:
                r = await c.call_tool("old__typed_push", {"path": str(marker)})
                assert r.is_error and "does not fit" in text(r), (content, text(r))
                assert not marker.exists(), (content, marker.read_text())
            replies.extend(ElicitResult(action="accept", content=c) for c in (GOOD, {**GOOD, "count": 3.0}))
            for _ in range(2):
                r = await c.call_tool("old__typed_push", {"path": str(marker)})
                assert not r.is_error and text(r) == "typed:" + json.dumps(GOOD, sort_keys=True), text(r)
        assert len(await refused_rows(rt)) == len(BAD)
    assert [json.loads(line) for line in marker.read_text().splitlines()] == [GOOD, GOOD]


def test_an_untyped_answer_to_a_held_question_is_read_strictly() -> None:
    """An answer that reaches a held call untyped (in process: the wire's are typed before this) is read
    strictly: what lax reading would coerce is no answer (the upstream hears "cancel")."""
    import asyncio

    from mcp.types import ElicitRequest, ElicitRequestFormParams

    from sentinel_mcp.gateway.held_calls import PendingQuestion

    async def parsed(response: Any) -> Any:
        form = ElicitRequestFormParams(message="?", requested_schema={"type": "object"})
        request = ElicitRequest(params=form)
        return PendingQuestion("k", request, asyncio.get_running_loop().create_future()).parse(response)

    for coerced in [{"action": "accept", "content": {"label": b"ok"}},
                    {"action": b"accept", "content": {"label": "ok"}}]:
        assert asyncio.run(parsed(coerced)) == ElicitResult(action="cancel"), coerced
    good = {"action": "accept", "content": {"label": "ok", "count": 3}}
    assert asyncio.run(parsed(good)) == ElicitResult(action="accept", content={"label": "ok", "count": 3})
