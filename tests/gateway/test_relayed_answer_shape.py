"""An answer relayed to an upstream carries what its question can be answered with, nothing more.

A form's ``decline`` or ``cancel`` carries no content (the spec: content only with ``accept``), and a URL-mode
question is never answered with content (the user opens a link; what they give, they give the server there).
A client's answer that carried content anyway reached the upstream as written: a decline holding
``{"approve": true}``, a link "accepted" with form data the user was never asked for. An upstream that reads
``content`` without its action took the client's words as the user's. Now the content is dropped; the action
is relayed as given. Both downstream eras (pushed, and a 2026-07-28 client's held call), over stdio.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from mcp.types import ElicitRequestURLParams, ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from tests.support.held_context import held
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

pytestmark = pytest.mark.asyncio(loop_scope="module")
RELAY = str(Path(__file__).with_name("relay_server.py"))
MODES = ["legacy", "auto"]  # handshake era (pushed to) and 2026-07-28 (held call)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    """One gateway over the relay for the rows that only call it (its start was most of each row's time): the
    relay keeps nothing between calls, and each call is a connection of its own."""
    cfg = make_config(tmp_path_factory.mktemp("relay") / "state",
                      servers={"rl": forked_spec(RELAY)})
    async for rt in held(running_gateway(cfg)):
        yield rt


# what a client may send with an answer that is not an accepted form
CONTENTS: list[dict[str, Any]] = [
    {"approve": True},
    {"approve": True, "how": "c", "which": "x"},
    {"approve": False},
    {"anything": "the client's own words"},
    {},
]


@pytest.mark.parametrize("mode", MODES)
async def test_a_declined_or_cancelled_form_reaches_the_upstream_without_content(shared: Any,
                                                                                 mode: str) -> None:
    for action in ("decline", "cancel"):
        for content in CONTENTS:

            async def on_elicit(ctx, params, action=action, content=content):  # noqa: ANN001
                return ElicitResult(action=action, content=content)

            async with Client(shared.front.server, mode=mode, elicitation_callback=on_elicit) as c:
                r = await c.call_tool("rl__form_words", {"tag": "0"})
                text = r.content[0].text
                assert text == f"form_words:{action}:[]", (action, content, text)


@pytest.mark.parametrize("mode", MODES)
async def test_a_link_is_answered_without_content(shared: Any, mode: str) -> None:
    asked: list[Any] = []
    for action in ("accept", "decline", "cancel"):
        for content in CONTENTS:

            async def on_elicit(ctx, params, action=action, content=content):  # noqa: ANN001
                asked.append(params)
                return ElicitResult(action=action, content=content)

            async with Client(shared.front.server, mode=mode, elicitation_callback=on_elicit) as c:
                r = await c.call_tool("rl__link_echo", {"tag": "0"})
                text = r.content[0].text
                assert text == f"link_echo:{action}:None", (action, content, text)
    assert asked and all(isinstance(p, ElicitRequestURLParams) for p in asked)


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_form_still_reaches_the_upstream_with_its_content(shared: Any, mode: str) -> None:

    async def on_elicit(ctx, params):  # noqa: ANN001
        return ElicitResult(action="accept", content={"approve": True, "which": "y"})

    async with Client(shared.front.server, mode=mode, elicitation_callback=on_elicit) as c:
        r = await c.call_tool("rl__form_words", {"tag": "0"})
        text = r.content[0].text
        assert text == "form_words:accept:[('approve', True), ('which', 'y')]", text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_declined_question_reaches_an_upstream_of_either_era_without_content(data_dir, mode, era):
    """The probe asks by push (handshake upstream) or by an input request (2026-07-28 upstream, the answer
    carried back in the client's retry): a decline's content reaches neither; an accept's does."""
    from sentinel_mcp.gateway.upstream import BuiltinTarget
    from tests.gateway.answer_probe import build_probe

    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("pr", BuiltinTarget(server=build_probe(), protocol=era))
        assert await up.wait_ready(20), up.last_error
        for action in ("decline", "cancel", "accept"):
            for content in ({"ok": True}, {"ok": True, "extra": 1}, {}):

                async def on_elicit(ctx, params, action=action, content=content):  # noqa: ANN001
                    return ElicitResult(action=action, content=content)

                async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
                    r = await c.call_tool("pr__ask", {})
                seen = r.structured_content or {}
                if action == "accept" and content == {"ok": True}:
                    assert seen.get("action") == "accept" and seen.get("content") == {"ok": True}, seen
                elif action != "accept":
                    assert seen.get("action") == action and seen.get("content") is None, (content, seen)
                else:  # a form answered with a field it did not ask, or without its required one
                    assert seen.get("content") is None or seen.get("content") == {"ok": True}, seen
