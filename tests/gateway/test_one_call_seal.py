"""A conversation's sealed id (a 2026-07-28 call's one-call session, sealed for every answer) skips the nonce
book that writes nothing (``NoNonceBook``), and only that: a request state is still used once (its replay
refused), a book put in the seal's place later is written, and a conversation's id never stands in for a
request state."""

from __future__ import annotations

from typing import Any

import pytest

from sentinel_mcp.gateway.conversations import Conversations
from sentinel_mcp.gateway.nonce_book import MemoryNonceBook, NoNonceBook
from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.identity.principal import Principal

ALICE = Principal("alice", "token")


def test_a_conversations_id_is_sealed_without_the_empty_book(monkeypatch: Any) -> None:
    def never(*_: Any) -> None:
        raise AssertionError("the empty book was called")

    monkeypatch.setattr(NoNonceBook, "issue", never)
    conv = Conversations()
    one = conv.open(ALICE, "conv")
    token = conv.sealed(one)
    assert conv.named(token, ALICE) is one and conv.named(token, ALICE) is one  # carried back, many times
    payload = conv.seal.open(token)
    assert payload is not None and not conv.seal.consume(payload)  # never used up, so never single-use


def test_a_request_state_is_still_used_once() -> None:
    seal = RequestStateSeal()
    state = seal.open(seal.seal({"kind": "ask", "principal": "alice"}))
    assert state is not None and seal.consume(state) and not seal.consume(state)  # the replay is refused


@pytest.mark.parametrize("later", ["memory", "subclass"])
def test_a_book_put_in_its_place_later_is_written(later: str) -> None:
    issued: list[str] = []

    class Recording(NoNonceBook):
        def issue(self, nonce: str, expires_at: float, owner: str = "") -> None:
            issued.append(nonce)

    seal = RequestStateSeal(nonces=NoNonceBook())
    seal.nonces = MemoryNonceBook() if later == "memory" else Recording()
    state = seal.open(seal.seal({"principal": "alice"}))
    assert state is not None
    if later == "memory":
        assert seal.consume(state) and not seal.consume(state)
    else:
        assert issued == [state["nonce"]]


def test_a_conversations_id_is_no_request_state() -> None:
    conv, states = Conversations(), RequestStateSeal()
    token = conv.sealed(conv.open(ALICE, "conv"))
    assert states.open(token) is None  # another key: refused as a request state
