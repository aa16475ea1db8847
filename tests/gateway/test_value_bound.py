"""A message holds at most ``MAX_VALUES`` JSON values, told before it is parsed: 4 MB of tiny arrays, objects
or numbers is refused with a JSON-RPC error at once, and the gateway keeps answering everyone else meanwhile.
Before, such a message was parsed and walked whole (three times: the wire check, then the gateway's argument
checks): each held the event loop ~3 s, ten of them half a minute, long enough for an upstream's health
ping to fail and the upstream to be restarted under the other clients' calls.

A value-heavy text inside a string is not counted (the count looks outside strings), so a long text with
commas and brackets is served. Real gateway (the module's fixture), raw HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from sentinel_mcp.core.wire_limits import MAX_MESSAGE_BYTES, MAX_VALUES
from tests.gateway.test_http_framing import echo, exchange, head
from tests.gateway.test_lean_calls import call, gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(180)


def _filled(item: bytes, **extra: Any) -> bytes:
    """A tools/call of tb__echo whose arguments hold as many ``item``s as fit in a message."""
    shell = json.dumps(call("tb__echo", {"text": "x", "pad": "PAD"}, 9, **extra)).encode()
    room = MAX_MESSAGE_BYTES - len(shell) - 16
    count = room // (len(item) + 1)
    return shell.replace(b'"PAD"', b"[" + b",".join([item] * count) + b"]")


SPELLINGS = {
    "arrays": b"[]",
    "objects": b"{}",
    "numbers": b"1",
    "nulls": b"null",
    "nested pairs": b'[{"a":[0]}]',
    "short strings": b'""',
}


@pytest.mark.parametrize("label", list(SPELLINGS))
def test_a_message_of_too_many_values_is_refused_at_once(gateway: int, label: str) -> None:  # noqa: F811
    body = _filled(SPELLINGS[label])
    started = time.monotonic()
    [(status, answer)] = exchange(gateway, head(gateway, length=len(body)) + body)
    took = time.monotonic() - started
    assert status == 400, (label, status, answer)
    error = answer["error"]
    assert error["code"] == -32600 and f"more than {MAX_VALUES} values" in error["message"]
    assert took < 2.0, (label, took)


def test_commas_and_brackets_inside_a_string_are_not_values(gateway: int) -> None:  # noqa: F811
    text = ",[{" * (MAX_VALUES + 10)  # past the bound if strings were counted; one value
    [(status, answer)] = exchange(gateway, head(gateway, length=len(echo(text))) + echo(text))
    assert status == 200, answer
    assert answer["result"]["content"][0]["text"] == text


def test_others_are_answered_while_value_floods_arrive(gateway: int) -> None:  # noqa: F811
    flood = _filled(b"[]")
    request = head(gateway, length=len(flood)) + flood
    answers: list[Any] = []
    senders = [threading.Thread(target=lambda: answers.extend(exchange(gateway, request))) for _ in range(6)]
    for t in senders:
        t.start()
    time.sleep(0.2)  # the flood is being read and checked
    started = time.monotonic()
    [(status, answer)] = exchange(gateway, head(gateway, length=len(echo("still here"))) + echo("still here"))
    waited = time.monotonic() - started
    for t in senders:
        t.join(60)
    assert status == 200 and answer["result"]["content"][0]["text"] == "still here"
    assert waited < 5.0, f"a small call waited {waited:.1f} s behind the flood"
    assert [s for s, _ in answers] == [400] * 6
