"""On the stdio front, a request whose id is one still in flight on the connection (the same id again, or
another spelling the SDK's dispatcher correlates with it: 5 and "5", "05") is refused with a JSON-RPC error,
and the call in flight still gets its own answer, once. Before, the dispatcher's table was overwritten (the
older call could no longer be cancelled) and both calls were served, both answers under one id: the client
took the newer call's answer for the older one's. On both eras, on the lean path and the SDK's.

A real ``serve`` over stdio (the lean stdio tests' ``Wire``, the toolbox upstream's ``held`` tool, which
answers once the test lets it). The second request is written right after the first: the transport reads
lines in order, so the first is in flight when the second is read (no wait involved)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.gateway.in_flight_requests import InFlightRequests
from tests.gateway.test_lean_stdio_front import ENVELOPE, Wire, _opened, call, open_legacy, open_modern

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def modern(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from _opened(tmp_path_factory.mktemp("ids-modern"), open_modern)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from _opened(tmp_path_factory.mktemp("ids-legacy"), open_legacy)


def _settle(wire: Wire, marker: str, modern: bool) -> None:
    """Everything sent before has been read and answered or refused: a request after it is answered."""
    params: dict[str, Any] = {"_meta": ENVELOPE} if modern else {}
    wire.send({"jsonrpc": "2.0", "id": marker, "method": "ping", "params": params})
    wire.answer(marker)  # (the 2026 era has no ping: an error answers it, as well)


def _collide(wire: Wire, first: Any, second: Any, *, modern: bool, token: Any, tmp: Path) -> None:
    tag = f"{first!r}-{second!r}-{token}-{modern}"
    wire.early = []
    held = tmp / "held"  # the first call answers once the test has read the second's answer (held + ".go")
    wire.send(call(first, "tb__held", {"path": str(held)}, token=token, modern=modern))
    wire.send(call(second, "tb__echo", {"text": "second"}, token=token, modern=modern))
    refused = wire.answer(second)
    (tmp / "held.go").touch()
    assert "error" in refused, f"the repeated id was served: {refused}"
    assert refused["error"]["code"] == -32600 and "still in flight" in refused["error"]["message"]
    done = wire.answer(first)
    assert "result" in done and done["result"]["content"][0]["text"] == "released", done
    _settle(wire, f"settled-{tag}", modern)
    stray = [f for f in wire.early if isinstance(f, dict) and f.get("id") in (first, second)
             and ("result" in f or "error" in f)]
    assert stray == [], f"more answers under the colliding ids: {stray}"
    # once answered, the id is free again
    wire.send(call(second, "tb__echo", {"text": "again"}, token=token, modern=modern))
    assert wire.answer(second)["result"]["content"][0]["text"] == "again"


SPELLINGS = [(7, 7), (5, "5"), ("5", 5), (5, "05"), ("a", "a")]


@pytest.mark.parametrize("first,second", SPELLINGS)
def test_a_repeated_id_is_refused_on_a_modern_connection(
        modern: Wire, first: Any, second: Any, tmp_path: Path) -> None:
    _collide(modern, first, second, modern=True, token=None, tmp=tmp_path)


@pytest.mark.parametrize("first,second", SPELLINGS)
def test_a_repeated_id_is_refused_on_a_handshake_connection(
        legacy: Wire, first: Any, second: Any, tmp_path: Path) -> None:
    _collide(legacy, first, second, modern=False, token=None, tmp=tmp_path)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_repeated_id_is_refused_on_the_sdks_path(
        modern: Wire, legacy: Wire, era: str, tmp_path: Path) -> None:
    """With a progress token the call is the SDK's dispatcher's, not the lean path's."""
    wire = modern if era == "modern" else legacy
    _collide(wire, f"sdk-{era}", f"sdk-{era}", modern=era == "modern", token=f"p-{era}",
             tmp=tmp_path)


def test_a_repeated_id_of_another_method_is_refused(legacy: Wire) -> None:
    """Any request, not only ``tools/call``: a slow resource read, then a ping under its id."""
    legacy.send({"jsonrpc": "2.0", "id": "read", "method": "resources/read",
                 "params": {"uri": "toolbox://item/slow-2"}})
    legacy.send({"jsonrpc": "2.0", "id": "read", "method": "ping"})
    refused = legacy.answer("read")
    assert "still in flight" in refused["error"]["message"], refused
    assert "contents" in legacy.answer("read")["result"]


@pytest.mark.parametrize("modern_era", [True, False], ids=["modern", "legacy"])
def test_a_cancelled_call_frees_its_id_once_it_has_settled(modern: Wire, legacy: Wire,
                                                           modern_era: bool) -> None:
    """A cancelled call is never answered; its id is refused while the call still runs (the cancellation may
    not have reached it yet: served beside the dispatcher, a reused id could otherwise take the cancellation
    meant for the older call) and is free once it has settled."""
    wire = modern if modern_era else legacy
    wire.early = []
    wire.send(call("cancelled", "tb__slow", {"seconds": 3}, modern=modern_era))
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "cancelled"}})
    for _ in range(300):  # polled: how soon the call settles is the gateway's business
        wire.send(call("cancelled", "tb__echo", {"text": "reused"}, modern=modern_era))
        answer = wire.answer("cancelled")
        assert "result" in answer or "still in flight" in answer["error"]["message"], answer
        if "result" in answer:
            break
        time.sleep(0.05)
    assert answer["result"]["content"][0]["text"] == "reused", answer
    _settle(wire, f"after-cancel-{modern_era}", modern_era)
    late = [f for f in wire.early if isinstance(f, dict) and "result" in f and f.get("id") == "cancelled"]
    assert late == [], late


def test_ids_are_told_apart_as_the_dispatcher_tells_them_apart() -> None:
    ids = InFlightRequests()
    ids.handed_on({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    for same in (5, "5", "05", "+5", " 5"):
        assert ids.repeats({"id": same, "method": "ping"}), same
    for other in (6, "5a", "x", True, None, 5.0):
        assert not ids.repeats({"id": other, "method": "ping"}), other
    assert not ids.repeats({"id": 5, "result": {}})  # an answer to the server's own request: not a request
    ids.answered("5")
    assert not ids.repeats({"id": 5, "method": "ping"}) and len(ids) == 0

