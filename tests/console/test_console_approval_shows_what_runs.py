"""An approval shows what will run: the value a client sends is what the person reads in the question's card.

The inbox showed a call's arguments as the audit keeps them, masked by the audit's secret scrubber
(``core.redactor.scrub_text``): any text shaped like ``token="..."``, ``bearer ...`` or ``user:pw@`` read
``[redacted]``. The client writes that text: it wrapped what mattered in such a shape, the card read
``token=[redacted]``, and the person approved a call whose hidden part ran.
"""

from __future__ import annotations

import html
import re
import uuid

import pytest
from tests.console.console_rig import (BOB, console_config, http_sentinel, items_of, mcp_client, signed_in,
                                      text)

pytestmark = pytest.mark.timeout(180)
ITEM = re.compile(r'<li class="card item.*?</li>\n', re.S)
ARGS = re.compile(r'<dl class="args">(.*?)</dl>', re.S)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-shows-what-runs"))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def test_a_value_shaped_like_a_secret_is_shown_as_it_will_run(sentinel):
    base = sentinel
    tag = uuid.uuid4().hex[:6]
    hidden = {  # shapes the audit's scrubber masks: a secret's pair, a bearer header, JSON's "password"
        "pair": f'old-{tag} token="../../../home-{tag}"',
        "bearer": f"old-{tag} bearer ../../../home-{tag}/",
        "json": f'old-{tag} {{"password": "../../../home-{tag}"}}',
    }
    async with signed_in(base, BOB) as person, mcp_client(base, BOB) as c:
        for shape, value in hidden.items():
            first = await c.call_tool("tb__delete_thing", {"name": value})
            assert first.is_error and "/console/inbox" in text(first), text(first)
            page = await person.wait_items(1)
            [item] = items_of(page)
            [card] = [m for m in ITEM.findall(page) if f"/console/inbox/{item}" in m]
            [listed] = ARGS.findall(card)  # the card's statement of the call's arguments
            assert html.unescape(listed).count(value) == 1 and "redacted" not in listed, (shape, listed)
            assert (await person.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303


def test_only_the_tools_own_secret_arguments_are_masked():
    """Masked: what the tool's schema says is a secret (by a property's name or its declaration), which no
    client chooses; a nested key or a text the client wrote is shown as sent."""
    from mcp.types import Tool

    from sentinel_mcp.console.approval_arguments import approval_arguments

    tool = Tool(name="login", input_schema={"type": "object", "properties": {
        "user": {"type": "string"}, "password": {"type": "string"},
        "pin": {"type": "string", "writeOnly": True}, "options": {"type": "object"}}})
    sent = {"user": 'me token="x"', "password": "hunter2", "pin": "1234",
            "options": {"api_key": "shown", "auth": "bearer abcdefghijk"}}
    shown = approval_arguments(tool, sent)
    assert shown["user"] == sent["user"] and shown["options"] == sent["options"]
    assert "hunter2" not in str(shown["password"]) and "1234" not in str(shown["pin"])
    assert approval_arguments(None, sent) == sent  # no such tool: nothing is the tool's secret
    assert approval_arguments(tool, None) is None


async def test_a_long_value_is_listed_whole_and_one_too_long_to_list_is_never_approved(sentinel):
    """A card listed 1,000 characters of each value: what came after (a file's content past its harmless
    start) ran unread once approved. Now a call is listed whole, or (past ``CARD_CHARS``) not approvable."""
    from sentinel_mcp.console.approval_arguments import CARD_CHARS

    base = sentinel
    tag = uuid.uuid4().hex[:6]
    async with signed_in(base, BOB) as person, mcp_client(base, BOB) as c:
        value = "x" * 1500 + f"-and-home-{tag}"
        first = await c.call_tool("tb__delete_thing", {"name": value})
        assert first.is_error and "/console/inbox" in text(first), text(first)
        page = await person.wait_items(1)
        [item] = items_of(page)
        [card] = [m for m in ITEM.findall(page) if f"/console/inbox/{item}" in m]
        [listed] = ARGS.findall(card)
        assert value in html.unescape(listed) and 'value="approve"' in card, listed[-300:]
        assert (await person.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303

        value = "x" * CARD_CHARS + f"-and-home-{tag}"
        args = {"name": value}
        first = await c.call_tool("tb__delete_thing", args)
        assert first.is_error and "/console/inbox" in text(first), text(first)
        page = await person.wait_items(1)
        [item] = items_of(page)
        [card] = [m for m in ITEM.findall(page) if f"/console/inbox/{item}" in m]
        assert f"home-{tag}" not in card and 'value="approve"' not in card, card[-1500:]
        assert "cannot be approved here" in card
        r = await person.post(f"/console/inbox/{item}", {"decision": "approve"})  # sent anyway: refused
        assert r.status_code == 409 and "not approved" in r.text, (r.status_code, r.text[-800:])
        assert item in items_of(await person.page("/console/inbox"))  # still open
        again = await c.call_tool("tb__delete_thing", args)
        assert again.is_error and "deleted" not in text(again)
        assert (await person.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303


async def test_a_look_alike_word_in_the_arguments_is_said_on_the_card(sentinel):
    """"pаypal" with a Cyrillic а reads as "paypal": the card's arguments say a word mixes scripts (only the
    default policy's own question text said so; a rulebase's question or a tool's own need not quote them)."""
    base = sentinel
    tag = uuid.uuid4().hex[:6]
    async with signed_in(base, BOB) as person, mcp_client(base, BOB) as c:
        for value, words in ((f"p\u0430ypal-{tag}.com", 1), (f"paypal-{tag}.com", 0)):
            first = await c.call_tool("tb__delete_thing", {"name": value})
            assert first.is_error and "/console/inbox" in text(first), text(first)
            page = await person.wait_items(1)
            [item] = items_of(page)
            [card] = [m for m in ITEM.findall(page) if f"/console/inbox/{item}" in m]
            said = re.search(r'<p class="error look-alikes" role="note">(\d+) word', card)
            assert (int(said[1]) if said else 0) == words, card[-1500:]
            assert (await person.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303
