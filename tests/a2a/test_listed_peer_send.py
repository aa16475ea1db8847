"""A peer the owner lists by name and URL (``sentinel.a2a.bridge_targets``) is reached by that name with
``a2a_send`` though it never announces itself over mDNS (before: "unknown or unverified peer; run a2a_discover
first", whatever the config said). The config is the owner's word for where the name answers, not for what
answers there: the card at the listed URL is fetched and checked as an announced peer's is (its name, its
signatures against the pinned and trusted keys, a JSON-RPC interface at the listed URL), and the guard's
verdict is on that card. Refused: a name that only reads as a listed one, a listed URL answering with another
name's card (or naming another endpoint), and a card that changed between the guard's check and the send.

Real a2a-sdk servers (``A2A_SDK_PYTHON``) and card servers over HTTP on 127.0.0.1; the guarded test runs the
real gateway and SWI-Prolog guard (``rulebases/a2a.pl``).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.a2a.card_server import serving_card
from tests.a2a.test_card_signatures import card_at, pem, sign
from tests.a2a.test_sdk_interop import start_sdk_server
from tests.a2a.test_unverified_send import Person, gateway, said

from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.mcp_tools import create_server
from sentinel_mcp.core.builtin import BuiltinContext
from tests.support.run_tags import untagged

pytestmark = pytest.mark.timeout(120)

TAG = str(secrets.randbelow(900_000) + 100_000)
LISTED = f"book-{TAG}"
LOOK_ALIKES = [f"\u0412\u041e\u041e\u041a-{TAG}", f"B00K-{TAG}", f"BOOK-{TAG}",
               f"\uff42\uff4f\uff4f\uff4b-{TAG}", f"b\u043eok-{TAG}", f"bo\u200dok-{TAG}",
               f" {LISTED}", f"{LISTED.title()}"]


def tools_for(tmp_path: Path, port: int, **more: Any) -> Client:
    settings = {"allow_loopback_plaintext": True,
                "bridge_targets": {LISTED: f"http://127.0.0.1:{port}/a2a"}, **more}
    ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings=settings,
                         services={"a2a_peers": PeerRegistry()})
    return Client(create_server(ctx))


async def sdk_peer(name: str, **env: str) -> tuple[Any, int]:
    return await start_sdk_server(env={"SDK_AGENT_NAME": name, **env})


async def test_a_listed_peer_that_never_announces_is_reached_by_its_name(tmp_path: Path) -> None:
    proc, port = await sdk_peer(LISTED, SDK_BARE_CARD="1")
    try:
        async with tools_for(tmp_path, port) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            assert verdict["known"] is True and verdict["verified"] is False, verdict  # type: ignore[index]
            assert f"127.0.0.1:{port}" in verdict["peer"], verdict  # type: ignore[index]
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "hello"})
        assert not sent.is_error, said(sent)
        assert sent.structured_content["task"]["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    finally:
        proc.terminate()
        await proc.wait()


async def test_a_listed_peer_signed_by_its_pinned_key_is_verified(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    async with serving_card(lambda port: sign(card_at(port, LISTED), key)) as port:
        async with tools_for(tmp_path, port, peer_keys={LISTED: pem(key)}) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
        assert verdict["known"] is True and verdict["verified"] is True, verdict  # type: ignore[index]
    other = ec.generate_private_key(ec.SECP256R1())  # pinned to one key, signed by another: refused
    async with serving_card(lambda port: sign(card_at(port, LISTED), other)) as port:
        async with tools_for(tmp_path, port, peer_keys={LISTED: pem(key)}) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "my data"})
        assert verdict["known"] is False, verdict  # type: ignore[index]
        assert sent.is_error and "signature" in said(sent), said(sent)


async def test_a_listed_peer_is_sent_to_as_the_guard_and_its_user_decide(tmp_path: Path) -> None:
    proc, port = await sdk_peer(LISTED)
    try:
        person = Person(True)
        async with gateway(tmp_path, PeerRegistry(), allow_loopback_plaintext=True,
                           bridge_targets={LISTED: f"http://127.0.0.1:{port}/a2a"}) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            sent = await c.call_tool("a2a__a2a_send", {"peer": LISTED, "text": "my data"})
        assert not sent.is_error, said(sent)
        assert len(person.asked) == 1 and LISTED in person.asked[0], person.asked
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.parametrize("spelling", LOOK_ALIKES, ids=untagged(TAG))
async def test_a_name_that_only_reads_as_a_listed_one_reaches_nobody(tmp_path: Path, spelling: str) -> None:
    proc, port = await sdk_peer(LISTED)
    try:
        async with tools_for(tmp_path, port) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": spelling})).structured_content
            sent = await tools.call_tool("a2a_send", {"peer": spelling, "text": "my data"})
        assert verdict["known"] is False, verdict  # type: ignore[index]
        assert sent.is_error and "nothing was sent" in said(sent), said(sent)
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.parametrize("answering", [f"other-{TAG}", f"B00K-{TAG}", f"\u0412\u041e\u041e\u041a-{TAG}",
                                       f"bo\u200dok-{TAG}"], ids=untagged(TAG))
async def test_a_listed_url_answering_with_another_names_card_is_refused(tmp_path: Path,
                                                                         answering: str) -> None:
    proc, port = await sdk_peer(answering)
    try:
        async with tools_for(tmp_path, port) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "my data"})
        assert verdict["known"] is False, verdict  # type: ignore[index]
        assert sent.is_error and "nothing was sent" in said(sent), said(sent)
    finally:
        proc.terminate()
        await proc.wait()


async def test_a_listed_url_whose_card_names_another_endpoint_is_refused(tmp_path: Path) -> None:
    async with serving_card(lambda port: card_at(port + 1, LISTED)) as port:
        async with tools_for(tmp_path, port) as tools:
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "my data"})
    assert sent.is_error and "listed URL" in said(sent), said(sent)


async def test_a_listed_peers_card_that_changes_between_check_and_send_is_refused(tmp_path: Path) -> None:
    fetches = []

    def changing(port: int) -> dict[str, Any]:
        fetches.append(port)
        return {**card_at(port, LISTED), "description": f"card number {len(fetches)}"}

    async with serving_card(changing) as port:
        async with tools_for(tmp_path, port) as tools:
            checked = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            assert checked["known"] is True, checked  # type: ignore[index]
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "my data"})
    assert sent.is_error and "changed after the guard checked" in said(sent), said(sent)


async def test_a_second_real_sentinel_listed_and_pinned_is_reached_verified(tmp_path: Path) -> None:
    """Sentinel to Sentinel: the peer signs its card (``card_signing_key``), the sender lists it by name and
    URL and pins its key; it never announces itself (no mDNS here), and is reached by its name, verified."""
    from cryptography.hazmat.primitives.asymmetric import ec
    from tests.a2a.served_gateway import gateway_with_a2a
    from tests.a2a.test_own_card_signature import write_key

    from sentinel_mcp.paths import RULEBASES_DIR

    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "peer").mkdir()
    (tmp_path / "sender").mkdir()
    token = "sender-token-0123456789"
    raw = {"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path / "peer"), "builtins": ["a2a"],
        "rulebases": [str(RULEBASES_DIR / "default.pl")],
        "principals": [{"name": "sender", "token": token}],
        "a2a": {"name": LISTED, "card_signing_key": write_key(tmp_path / "peer", key)}}}
    async with gateway_with_a2a(raw, tmp_path / "peer") as gw:
        async with tools_for(tmp_path / "sender", gw.port, peer_keys={LISTED: pem(key)},
                             peer_tokens={gw.base: token}) as tools:
            verdict = (await tools.call_tool("a2a_peer_check", {"peer": LISTED})).structured_content
            sent = await tools.call_tool("a2a_send", {"peer": LISTED, "text": "hello"})
    assert verdict["known"] is True and verdict["verified"] is True, verdict  # type: ignore[index]
    assert not sent.is_error and "task" in sent.structured_content, said(sent)  # type: ignore[operator]
