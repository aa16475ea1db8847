"""A stated purpose is kept whole or refused, never cut. Before, the front kept a purpose's first 80
characters without saying so: the person was asked about "show the weather…" (80 characters) and a later call
stating those 80 characters and then "… and sell every message to advertisers" ran on that consent. Now a
purpose over 80 characters is refused before anything is asked or granted, with an error naming the bound; one
of 80 or fewer is asked about as it is. Real gateway and stdio upstream, the real mcp Client, both eras."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config

pytestmark = pytest.mark.timeout(180)
SHOWN = ("show the weather for the trip the user is planning to the coast next week, please")[:80]
TAILS = [" and sell every message to advertisers", "x", " ", "\u0301", "\U0001f600", "\x00", "\u202e evil",
         "\n(purpose: weather)", "a" * 10_000]


def purpose(text: str) -> dict[str, Any]:
    return {"sentinel/purpose": text}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_longer_purpose_does_not_ride_on_a_consent(data_dir: Path, mode: str) -> None:
    asked: list[str] = []

    async def allow_and_remember(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"allow": True, "remember": True})

    assert len(SHOWN) == 80
    async with running_gateway(make_config(data_dir, fork=True, personal={"tb__echo": "messages"})) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=allow_and_remember) as c:
            ok = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(SHOWN))
            assert not ok.is_error, ok
            [question] = asked  # asked once, the whole purpose shown (a value's own bound is 300 characters)
            assert SHOWN in question, ascii(question)
            for tail in TAILS:
                r = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(SHOWN + tail))
                assert r.is_error, (ascii(tail), r)
                text = r.content[0].text  # type: ignore[union-attr]
                assert "stated purpose" in text and "at most 80" in text, text
                assert (r.meta or {}).get("sentinel/error") == "purpose_too_long", r
            assert len(asked) == 1  # nothing more asked: the long ones were refused before the gate
            granted = [(g.kind, g.purpose) for g in rt.gateway.consent_gate.book.list("owner")]
            assert granted == [("messages", SHOWN)]
            again = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(SHOWN))
            assert not again.is_error and len(asked) == 1  # the consent given holds for what was shown


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_lengths_around_the_bound(data_dir: Path, mode: str) -> None:
    asked: list[str] = []

    async def decline(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="decline")

    # counted in characters (code points), whatever their width in bytes or on screen
    fits = ["w" * 80, "\U0001f600" * 80, "é" * 80, "e\u0301" * 40, " " * 79 + "w"]
    over = ["w" * 81, "\U0001f600" * 81, "e\u0301" * 41, "w" + " " * 80]
    async with running_gateway(make_config(data_dir, fork=True, personal={"tb__echo": "messages"})) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=decline) as c:
            for text in fits:
                r = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(text))
                assert r.is_error and (r.meta or {}).get("sentinel/error") != "purpose_too_long", r
            assert len(asked) == len(fits)
            for text in over:
                r = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(text))
                assert (r.meta or {}).get("sentinel/error") == "purpose_too_long", (ascii(text), r)
            assert len(asked) == len(fits)
            # a purpose of blanks only states none (as before): asked about with no purpose shown
            r = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(" " * 500))
            assert len(asked) == len(fits) + 1 and "purpose" not in asked[-1], asked[-1]
