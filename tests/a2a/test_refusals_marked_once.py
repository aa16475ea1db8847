"""An A2A refusal or a peer's error that quotes a hostile value is Sentinel's text, marked once: shown to a
person (``sentinel-mcp``'s error line, the rejected announcements ``a2a discover`` lists), a real hidden
character reads ``⟨U+202E⟩`` and a typed-out mark ``⟨U+27E8⟩U+202E⟨U+27E9⟩``, never the mark of a mark
(``⟨U+27E8⟩U+202E⟨U+27E9⟩`` for a real one: the message was a plain ``str`` built of marked pieces, marked
again where it was shown)."""

from __future__ import annotations

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from tests.a2a.card_server import serving_card
from tests.a2a.test_card_signatures import pinned
from tests.support.served_app import served_app

from sentinel_mcp.a2a.card_signature import CardRefused, check_card
from sentinel_mcp.a2a.discovery import PeerRegistry, PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.listed_peer_card import verify_listed
from sentinel_mcp.a2a.listed_peers import ListedPeers
from sentinel_mcp.a2a.peer_client import PeerError, call_peer
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.cli import _shown
from sentinel_mcp.core.display_text import error_text
from sentinel_mcp.core.errors import user_message

pytestmark = pytest.mark.timeout(30)

OVERRIDE = "\u202e"
REAL_ONCE = "⟨U+202E⟩"  # a real override, marked once
TYPED_ONCE = "⟨U+27E8⟩U+202E⟨U+27E9⟩"  # a value that typed "⟨U+202E⟩" out, marked once


def on_the_terminal(error: BaseException) -> str:
    """What ``sentinel-mcp`` prints for an error (``cli.main``)."""
    return _shown(user_message(error))


def rejected_as_listed(error: PeerRejected) -> str:
    """What ``a2a discover`` lists for a rejected announcement (as discovery records it)."""
    registry = PeerRegistry()
    registry.reject("x._a2a._tcp.local.", error)
    return registry.rejections()["x._a2a._tcp.local."]


def test_a_look_alike_of_a_pinned_name_reads_its_override_once() -> None:
    with pytest.raises(CardRefused) as refused:
        check_card({}, [f"bo{OVERRIDE}ok"], pinned(name="book"))
    for shown in (on_the_terminal(refused.value), error_text(refused.value)):
        assert REAL_ONCE in shown and "U+27E8" not in shown, shown


def test_a_look_alike_of_a_listed_name_reads_its_override_once() -> None:
    listed = ListedPeers({"book": "http://127.0.0.1:1/a2a"})
    why = listed.refusal([f"bo{OVERRIDE}ok"], "http://127.0.0.1:2/a2a")
    assert why is not None
    for shown in (rejected_as_listed(PeerRejected(why)), on_the_terminal(PeerRejected(why))):
        assert REAL_ONCE in shown and "U+27E8" not in shown, shown


async def test_addresses_outside_the_networks_read_their_override_once() -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected) as refused:
            await verify_peer("x._a2a._tcp.local.", [f"10.0.0.1{OVERRIDE}"], 80, txt_record(A2ASettings()),
                              http)
    shown = rejected_as_listed(refused.value)
    assert f"10.0.0.1{REAL_ONCE}" in shown and "U+27E8" not in shown, shown


def _card(name: str, version: str = "1.0"):  # type: ignore[no-untyped-def]
    def card(port: int) -> dict:
        return {"name": name, "description": "", "version": "1", "capabilities": {},
                "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
                "supportedInterfaces": [{"url": f"http://127.0.0.1:{port}/a2a", "protocolBinding": "JSONRPC",
                                         "protocolVersion": version}]}
    return card


@pytest.mark.parametrize("name, version", [("alice⟨U+202E⟩", "1.0"), ("bob", "⟨U+202E⟩2")])
async def test_a_listed_peers_refused_card_reads_its_typed_mark_once(name: str, version: str) -> None:
    """The card at a listed URL names another agent, or speaks another protocol: its typed-out mark is
    marked once, as a typed-out mark."""
    async with serving_card(_card(name, version)) as port, httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected) as refused:
            await verify_listed("bob", f"http://127.0.0.1:{port}/a2a", http, keys=pinned(name="carol"),
                                allow_loopback_plaintext=True)
    shown = on_the_terminal(refused.value)
    assert TYPED_ONCE in shown and "⟨U+27E8⟩U+27E8" not in shown, shown


@pytest.mark.parametrize("answer", ["error", "401"])
async def test_a_peers_error_reads_its_hidden_character_once(answer: str) -> None:
    """A JSON-RPC error's message (an override), a 401's challenge (a soft hyphen: a header is Latin-1)."""
    hidden = "\xad" if answer == "401" else OVERRIDE

    async def rpc(request: Request) -> Response:
        if answer == "401":
            return Response(status_code=401, headers={"www-authenticate": f"Bearer realm=x{hidden}y"})
        return JSONResponse({"jsonrpc": "2.0", "id": "1",
                             "error": {"code": -1, "message": f"no{OVERRIDE}way"}})

    async with served_app(lambda _: Starlette(routes=[Route("/a2a", rpc, methods=["POST"])]),
                          log_level="warning") as port:
        with pytest.raises(PeerError) as failed:
            await call_peer(f"http://127.0.0.1:{port}/a2a", "SendMessage", {}, timeout=5)
    once = f"⟨U+{ord(hidden):04X}⟩"
    for shown in (on_the_terminal(failed.value), error_text(failed.value),
                  error_text(PeerError(failed.value.why))):
        assert once in shown and "U+27E8" not in shown, shown


async def test_a_listed_url_naming_no_endpoint_reads_its_override_once() -> None:
    """The listed URL's host hides a character: the refusal quotes it marked once (the reason, marked, was a
    plain ``str`` again inside the refusal's f-string)."""
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected) as refused:
            await verify_listed("bob", f"http://bo{OVERRIDE}b.example/a2a", http, keys=pinned(name="carol"),
                                allow_loopback_plaintext=True)
    for shown in (on_the_terminal(refused.value), rejected_as_listed(refused.value)):
        assert f"bo{REAL_ONCE}b.example" in shown and "U+27E8" not in shown, shown


async def test_a_listed_peers_card_elsewhere_reads_its_override_once() -> None:
    """The card's JSON-RPC interface is at another path, one that hides a character: why it is not the
    listed URL quotes that path marked once."""
    def card(port: int) -> dict:
        listed = _card("bob")(port)
        listed["supportedInterfaces"][0]["url"] = f"http://127.0.0.1:{port}/a2a{OVERRIDE}x"
        return listed

    async with serving_card(card) as port, httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected) as refused:
            await verify_listed("bob", f"http://127.0.0.1:{port}/a2a", http, keys=pinned(name="carol"),
                                allow_loopback_plaintext=True)
    shown = on_the_terminal(refused.value)
    assert f"/a2a{REAL_ONCE}x" in shown and "U+27E8" not in shown, shown
