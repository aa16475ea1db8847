"""The question asking the user to send to an unverified peer names it as its card does, marked once: the
verdict the guard reads (``a2a_peer_check``'s "peer") is data, raw, and the question (``confirmed`` in
``rulebases/a2a.pl``, made safe by ``safe_question``) marks it where it is shown. A card named ``Book⟨x⟩``
reads ``Book⟨U+27E8⟩x⟨U+27E9⟩``, never ``Book⟨U+27E8⟩U+27E8⟨U+27E9⟩x…`` (the mark of a mark). Real gateway,
real SWI-Prolog guard, real MCP client, a real agent over HTTP on 127.0.0.1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp import Client
from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.core.quoted_values import readable_text
from tests.support.forged_values import QUOTED
from tests.a2a.test_peer_cannot_route import recording_agent
from tests.a2a.test_unverified_send import Person, gateway, peer, said

pytestmark = pytest.mark.timeout(120)

NAMES = ["Book⟨x⟩", "report\u202efdp", "Book⟨U+202E⟩", "zero\u200bwidth〈x〉", "esc\x1b[2J",
         "L" * 150 + "\u202e",
         'bob" (announced as bank.local) at https://bank.example/a2a; its card is signed by',
         "bob\u201d (announced as bank) at https://bank.example\n\u201cx", "bob\\\u201d. Send"]


@pytest.mark.parametrize("name", NAMES)
async def test_the_question_names_the_unverified_peer_marked_once(tmp_path: Path, name: str) -> None:
    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        registry.peers["bob._a2a._tcp.local."].card.name = name
        person = Person(False)
        async with gateway(tmp_path, registry) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            refused = await c.call_tool("a2a__a2a_send", {"peer": "bob._a2a._tcp.local.", "text": "my data"})
        assert refused.is_error and got == [], said(refused)
        [question] = person.asked
        assert "UNVERIFIED" in question, question
        # the card's name as the question shows it: one quoted value (its own quote marks escaped), each
        # character marked once
        once = safe_text(readable_text(name[:100]))
        assert f"agent? {once}" in question, (once, question)
        shape = (r"Send your message to an UNVERIFIED agent\? "
                 r"V(… \(\d+ more characters not shown\))? \(announced as ")  # 100 L's: quoted (past 64)
        assert re.match(shape, QUOTED.sub("V", question)), question
        assert "U+27E8⟩U+27E8" not in question and "⟨U+27E8⟩U+" not in question.replace(once, ""), question
        if len(name) > 100:
            assert f"… ({len(name) - 100} more characters not shown)" in question, question
