"""The Origin header in spellings no browser sends, as raw bytes to the front as the gateway runs it
(``FrontHTTPProtocol`` and ``CallerGuard`` on 127.0.0.1, the bearer-spelling tests' front): an origin is
``scheme://host[:port]`` and nothing more (RFC 6454 6.2), so only that spelling of an allowed one is taken
(red team "rt-front2").

What broke: ``http://127.0.0.1:PORT#x`` and ``http://127.0.0.1:PORT?`` were taken as this front's own origin
(the check refused a path or a non-empty query, and looked at nothing else): an allow list takes the exact
serialization, not whatever parses to it.
"""

from __future__ import annotations

import pytest

from tests.identity.identity_rig import ALICE
from tests.identity.test_bearer_spellings import exchange, front, get

pytestmark = pytest.mark.timeout(120)

REFUSED = [  # each a spelling of the front's own origin with something after it, or before its host
    "http://127.0.0.1:{port}#x",
    "http://127.0.0.1:{port}#",
    "http://127.0.0.1:{port}/#",
    "http://127.0.0.1:{port}?",
    "http://127.0.0.1:{port}?a=b",
    "http://127.0.0.1:{port}/?",
    "http://127.0.0.1:{port}/mcp",
    "http://127.0.0.1:{port};x",
    "http://alice@127.0.0.1:{port}",
    "http://127.0.0.1:{port}:{port}",
    "http://127.0.0.1:0{port}",
    "http://localhost.:{port}",
    "http:127.0.0.1:{port}",
    "http:/127.0.0.1:{port}",
    "//127.0.0.1:{port}",
    "null",
    "",
]
TAKEN = [  # the serialization of an allowed origin, in any case, with the slash some clients add
    "http://127.0.0.1:{port}",
    "HTTP://LOCALHOST:{port}",
    "https://localhost:{port}",
    "http://[::1]:{port}",
    "http://127.0.0.1:{port}/",
]


async def test_an_origin_is_taken_only_in_its_own_spelling() -> None:
    wrong = []
    async with front() as port:
        for spelt, taken in [*((s, False) for s in REFUSED), *((s, True) for s in TAKEN)]:
            origin = spelt.format(port=port)
            head = get(port, f"Authorization: Bearer {ALICE}", f"Origin: {origin}")
            status, answer = await exchange(port, head)
            if (status == 200 and b'"alice"' in answer) != taken or (not taken and b"Origin" not in answer):
                wrong.append((origin, status))
    assert not wrong
