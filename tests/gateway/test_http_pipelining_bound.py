"""Requests pipelined on one connection ahead of their answers are bounded (red team "tls4").

httptools parses every request of a read at once, and uvicorn queued each one it could not start yet: 20
connections that each sent 1 MiB of pipelined ``GET /healthz`` (42 bytes a request) held 3,045 queued
requests apiece, 145 MB of the front's memory for 2.5 MB sent (each read of 128 KiB became ~7 MB). A
connection now has at most ``MAX_PIPELINED`` requests waiting; the next one is refused with a 400 and the
connection closed. A client that waits for its answers (every MCP client) never queues any.
"""

from __future__ import annotations

import pytest

from sentinel_mcp.app.http_protocol import MAX_PIPELINED
from tests.gateway.test_http_framing import echo, exchange, head
from tests.gateway.test_lean_calls import gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(180)


def test_a_flood_of_pipelined_requests_is_cut_off_at_the_bound(gateway: int) -> None:  # noqa: F811
    bodies = [echo(f"p{i}", rid=i) for i in range(40 * MAX_PIPELINED)]
    answers = exchange(
        gateway, b"".join(head(gateway, length=len(b)) + b for b in bodies), answers=len(bodies)
    )
    # the one started, the ones waiting, and the refusal (written at once: it may come before them)
    assert len(answers) <= MAX_PIPELINED + 2, len(answers)
    assert sum(1 for status, _ in answers if status == 400) == 1, answers[-3:]
    served = [body["result"]["content"][0]["text"] for status, body in answers if status == 200]
    assert served == [f"p{i}" for i in range(len(served))]
    # within the bound, pipelining is served in full and in order
    bodies = [echo(f"q{i}", rid=i) for i in range(MAX_PIPELINED)]
    answers = exchange(
        gateway, b"".join(head(gateway, length=len(b)) + b for b in bodies), answers=len(bodies)
    )
    assert [body["result"]["content"][0]["text"] for _, body in answers] == [
        f"q{i}" for i in range(len(bodies))
    ]
