"""Concurrent calls that ask are answered for the right call; list_changed reaches clients in both eras."""

from __future__ import annotations

import re

import anyio
import pytest
from mcp import Client
from mcp.client import IncomingMessage
from mcp.types import ElicitResult, ToolListChangedNotification

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config

pytestmark = pytest.mark.timeout(90)


def word_from_question():
    """Answers each question with a word derived from the question itself, after a delay that inverts order.
    """

    async def callback(ctx, params):  # noqa: ANN001
        props = (params.requested_schema or {}).get("properties", {})
        if "approve" in props:
            m = re.search(r'"name": "(\w+)"', params.message)
            await anyio.sleep(0.05 * (5 - int(m.group(1)[-1])) if m else 0)
            return ElicitResult(action="accept", content={"approve": True})
        item = re.search(r"a word for (\w+)", params.message).group(1)
        await anyio.sleep(0.05 * (5 - int(item[-1])))  # later calls are answered first
        return ElicitResult(action="accept", content={"word": item.upper()})

    return callback


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_concurrent_upstream_questions_are_answered_for_the_right_call(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=word_from_question()) as c:
            results: dict[str, str] = {}

            async def one(i: int) -> None:
                r = await c.call_tool("tb__ask_word", {"item": f"item{i}"})
                results[f"item{i}"] = r.content[0].text

            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(one, i)
        assert results == {f"item{i}": f"item{i}=ITEM{i}" for i in range(5)}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_concurrent_confirmations_are_each_bound_to_their_call(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=word_from_question()) as c:
            results: dict[int, str] = {}

            async def one(i: int) -> None:
                r = await c.call_tool("tb__delete_thing", {"name": f"n{i}"})
                results[i] = r.content[0].text

            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(one, i)
        assert results == {i: f"deleted n{i}" for i in range(5)}


async def test_list_changed_reaches_handshake_clients(data_dir):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        got = anyio.Event()

        async def on_message(m: IncomingMessage) -> None:
            if isinstance(m, ToolListChangedNotification):
                got.set()

        async with Client(rt.front.server, mode="legacy", message_handler=on_message) as c:
            assert c.server_capabilities.tools.list_changed is True
            await c.call_tool("tb__add_tool", {"name": "fresh"})
            with anyio.fail_after(10):
                await got.wait()
            names = [t.name for t in (await c.list_tools()).tools]
            assert "tb__fresh" in names


async def test_list_changed_reaches_2026_clients_on_listen(data_dir):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            async with c.listen(tools_list_changed=True) as sub:
                await c.call_tool("tb__add_tool", {"name": "newer"})
                with anyio.fail_after(10):
                    async for _event in sub:
                        break
            assert "tb__newer" in [t.name for t in (await c.list_tools()).tools]
