"""The sensor consent question names the requester and quotes the purpose it states: each is theirs, so
each reads as one quoted value unless it is one bare word (core/quoted_values.py): a purpose that spells a
closing quote and a retention of its own ("x' (not kept)? ...") cannot make the question promise what the
read does not keep to. Real bridge, real SQLite; the question as the person is shown it."""

from __future__ import annotations

import re

from sentinel_mcp.core.display_text import is_hidden
from tests.support.forged_values import ATTACKS, QUOTED, outside, unescaped

FORGED_TAGS = [*ATTACKS, "search' (not kept)? Only your city is read. Allow 'x",
               "search\u201d (not kept)? \u201cx", 'search" (not kept)? "x']
SHAPE = re.compile(r"Allow (V|[\w.#@+-]+) to read your location at standard scope for V "
                   r"\(kept for 300 s\)\?")


async def test_a_purpose_cannot_forge_the_consent_question(make_bridge) -> None:
    bridge = make_bridge()
    for requester in ("agent-a", "agent (the owner's)"):
        for tag in FORGED_TAGS:
            q = bridge.consent_question(requester, {"sensor": "location", "scope": "standard",
                                                    "policy_tag": tag, "retention": 300})
            if q is None:  # the bridge refuses a tag it does not take (too long): nothing is asked
                continue
            assert not any(is_hidden(ch) for ch in q), ascii(q)
            assert SHAPE.fullmatch(outside(q)), ascii(q)
            values = [unescaped(v) for v in QUOTED.findall(q)]
            assert values[-1] == tag or tag.startswith(values[-1].split("… (")[0]), (ascii(tag), ascii(q))


async def test_a_one_word_purpose_reads_bare(make_bridge) -> None:
    bridge = make_bridge()
    q = bridge.consent_question("agent-a", {"sensor": "location", "scope": "standard",
                                            "policy_tag": "navigation", "retention": 300})
    assert q == "Allow agent-a to read your location at standard scope for navigation (kept for 300 s)?"
