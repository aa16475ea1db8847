"""Sending the user's data to a peer whose card no configured key verified is an exfiltration path: anyone on
the link can announce a look-alike over mDNS. The sending guard (``rulebases/a2a.pl``) reads the peer's
verdict as a fact (``a2a_peer_check``, from the built-in's registry): a verified peer is sent to as before; an
unverified one needs the user's own yes, naming it, its address and its key, or is refused
(``sentinel.a2a.require_verified_peers``). Real gateway, real SWI-Prolog guard, real MCP client and a real
agent over HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.a2a.card_signature import UNSIGNED, CardTrust
from sentinel_mcp.a2a.discovery import Peer, PeerRegistry, txt_record, verify_peer
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.a2a.protocol import AgentCard
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.pinned_card import PinnedCard
from tests.a2a.test_card_signatures import ALICE, card_at, pem, sign, trusting
from tests.a2a.test_peer_cannot_route import recording_agent

pytestmark = pytest.mark.timeout(120)
KEY = "ab" * 32
VERIFIED = CardTrust(True, f"verified: signed by trusted key sha256:{KEY[:16]}", KEY)


def peer(name: str, port: int, trust: CardTrust = UNSIGNED, description: str = "") -> Peer:
    rpc = f"http://127.0.0.1:{port}/a2a"
    card = AgentCard.model_validate({
        "name": name, "description": description, "version": "1", "capabilities": {},
        "supportedInterfaces": [{"url": rpc, "protocolBinding": "JSONRPC"}],
        "defaultInputModes": [], "defaultOutputModes": [], "skills": []})
    return Peer(instance=f"{name}._a2a._tcp.local.", base_url=f"http://127.0.0.1:{port}",
                card_url=f"http://127.0.0.1:{port}/.well-known/agent-card.json", card=card, rpc_url=rpc,
                txt={}, trust=trust)


# a verified peer is one a configured key verified, checked again before each send
# (``announced_peer_card``): alice's card is served signed, and the key trusted
TRUSTING = {"trusted_keys": [pem(ALICE)], "allow_loopback_plaintext": True}


def signed_alice(port: int) -> dict[str, Any]:
    return sign(card_at(port, "alice"), ALICE)


async def verified_alice(port: int) -> Peer:
    async with httpx2.AsyncClient(timeout=5) as http:  # checked as the browser checks an announcement
        return await verify_peer("alice._a2a._tcp.local.", ["127.0.0.1"], port, txt_record(A2ASettings()),
                                 http, allow_loopback_plaintext=True, keys=trusting(ALICE))


class Person:
    """The user behind the client: answers each question as told, and keeps what it was asked."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []
        self.on_ask: Any = None

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        if self.on_ask is not None:
            self.on_ask()
        if not self.answers:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"answer": self.answers.pop(0)})


@contextlib.asynccontextmanager
async def gateway(tmp_path: Path, registry: PeerRegistry, policy: dict[str, Any] | None = None, **a2a: Any
                  ) -> AsyncIterator[Any]:
    raw = {"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["a2a"], "policy": policy or {},
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "a2a.pl")],
        "a2a": {"name": "sender", **a2a}}}
    async with running_gateway(parse_config(raw, source="<test>", base_dir=tmp_path)) as rt:
        rt.services.a2a_peers = registry  # the peers the host's mDNS browser found (shared with the tools)
        yield rt


def said(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_a_verified_peer_is_sent_to_without_a_question(tmp_path: Path) -> None:
    async with recording_agent(card=signed_alice) as (port, got):
        registry = PeerRegistry()
        registry.peers["alice._a2a._tcp.local."] = await verified_alice(port)
        person = Person()
        async with gateway(tmp_path, registry, **TRUSTING) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            # a client's own look is no verdict a send was decided on: it notes nothing
            looked = await c.call_tool("a2a__a2a_peer_check", {"peer": "alice"})
            assert not looked.is_error and registry.checked == {}, said(looked)
            sent = await c.call_tool("a2a__a2a_send", {"peer": "alice", "text": "my data"})
        assert not sent.is_error, said(sent)
        assert person.asked == [] and len(got) == 1
        # the guard's own read (the solver's, in the sending session) is what the send was checked against
        assert [name for _, name in registry.checked] == ["alice"], registry.checked


async def test_an_unverified_peer_needs_the_users_yes_naming_it_its_address_and_key(tmp_path: Path) -> None:
    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        no, yes = Person(False), Person(True)
        async with gateway(tmp_path, registry) as rt:
            async with Client(rt.front.server, mode="auto", elicitation_callback=no) as c:
                # a client's word that the peer is verified is no argument of the tool: refused before the
                # guard, nobody asked; and no fact the guard reads: without it, the user is asked (no)
                refused = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data",
                                                              "verified": True})
                assert refused.is_error and got == [] and not no.asked, said(refused)
                assert "not one the tool declares" in said(refused), said(refused)
                refused = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
            assert refused.is_error and got == [], said(refused)
            async with Client(rt.front.server, mode="auto", elicitation_callback=yes) as c:
                sent = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
        assert not sent.is_error, said(sent)
        assert len(got) == 1
        [question] = no.asked
        assert "UNVERIFIED agent? bob (announced as " in question, question
        assert f"http://127.0.0.1:{port}/a2a" in question and "not signed" in question, question


async def test_a_client_that_cannot_ask_its_user_cannot_answer_for_them(tmp_path: Path) -> None:
    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        async with gateway(tmp_path, registry) as rt, Client(rt.front.server, mode="legacy") as c:
            blocked = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
            assert blocked.is_error and got == [], said(blocked)
            tools = {t.name for t in (await c.list_tools()).tools}
            answer = next((n for n in tools if n.endswith("sentinel_answer")), None)
            if answer is not None:  # the agent's answer has provenance agent: a confirmation wants the user
                await c.call_tool(answer, {"predicate": "confirmed", "args": [], "value": True})
            again = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
        assert again.is_error and got == [], said(again)


async def test_require_verified_peers_refuses_an_unverified_one_without_asking(tmp_path: Path) -> None:
    async with recording_agent(card=signed_alice) as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        registry.peers["alice._a2a._tcp.local."] = await verified_alice(port)
        person = Person(True, True)
        async with gateway(tmp_path, registry, require_verified_peers=True, **TRUSTING) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            refused = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
            assert refused.is_error and "require_verified_peers" in said(refused), said(refused)
            assert person.asked == [] and got == []
            sent = await c.call_tool("a2a__a2a_send", {"peer": "alice", "text": "my data"})
        assert not sent.is_error and len(got) == 1, said(sent)


async def test_a_card_that_changes_while_the_user_is_asked_is_asked_about_again(tmp_path: Path) -> None:
    """The user said yes to one card; the peer's name now carries another (fetched again): that yes is not
    for it."""
    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        name = "bob._a2a._tcp.local."
        registry.peers[name] = peer("bob", port)
        person = Person(True, False)

        def swap() -> None:
            if len(person.asked) == 1:
                registry.peers[name] = peer("bob", port, description="a new card, same name")

        person.on_ask = swap
        async with gateway(tmp_path, registry) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            refused = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
        assert refused.is_error and got == [], said(refused)
        assert len(person.asked) == 2 and person.asked[0] != person.asked[1], person.asked


async def test_a_verified_verdict_on_an_older_card_does_not_carry_to_a_new_one(tmp_path: Path) -> None:
    """The guard saw alice's signed card; before the send a look-alike's unsigned card took the name: the
    built-in refuses the send (its card is not the one the guard checked)."""
    from sentinel_mcp.a2a.mcp_tools import create_server
    from sentinel_mcp.core.builtin import BuiltinContext

    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        name = "alice._a2a._tcp.local."
        registry.peers[name] = peer("alice", port, VERIFIED)
        ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings={}, services={"a2a_peers": registry})
        async with Client(create_server(ctx)) as tools:
            checked = await tools.call_tool("a2a_peer_check", {"peer": "alice"})
            assert checked.structured_content["verified"] is True  # type: ignore[index]
            registry.peers[name] = peer("alice", port)  # announced again, an unsigned card
            sent = await tools.call_tool("a2a_send", {"peer": "alice", "text": "my data"})
        assert sent.is_error and "changed" in said(sent), said(sent)
        assert got == []


@pytest.mark.parametrize("look_alike", ["ALICE", "Alice", "ａｌｉｃｅ", "ＡＬＩＣＥ", " alice"])
async def test_a_look_alike_name_beside_a_verified_peer_is_nobodys(tmp_path: Path, look_alike: str) -> None:
    """An unsigned peer announcing a name that reads as the verified one's: neither name finds a peer (the
    user names one by its mDNS instance or URL), so a send meant for alice never reaches the spoofer."""
    from sentinel_mcp.a2a.mcp_tools import create_server
    from sentinel_mcp.core.builtin import BuiltinContext

    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        registry.peers["alice._a2a._tcp.local."] = peer("alice", port, VERIFIED)
        registry.peers["spoof._a2a._tcp.local."] = peer(look_alike, port)
        ctx = BuiltinContext(name="a2a", data_dir=tmp_path, settings={}, services={"a2a_peers": registry})
        async with Client(create_server(ctx)) as tools:
            for asked in ("alice", look_alike):
                sent = await tools.call_tool("a2a_send", {"peer": asked, "text": "my data"})
                assert sent.is_error and "call themselves" in said(sent), said(sent)
                checked = await tools.call_tool("a2a_peer_check", {"peer": asked})
                assert checked.structured_content["known"] is False  # type: ignore[index]
        assert got == []


async def test_a_bridged_chat_to_an_unverified_peer_needs_the_users_yes_too(tmp_path: Path) -> None:
    """a2a_relay (a chat bridged to another agent) is guarded as a send: a listed bridge target whose card
    its pinned key signed is relayed to; a peer whose card nobody's key verified needs the user's yes."""
    card = PinnedCard("helper")
    async with recording_agent(card=card) as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        person = Person(False)
        helper = f"http://127.0.0.1:{port}/a2a"
        async with gateway(tmp_path, registry, **card.settings(helper)) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            relayed = await c.call_tool("a2a__a2a_relay",
                                        {"target": "helper", "text": "hi", "context_id": "c1"})
            assert not relayed.is_error and len(got) == 1 and person.asked == [], said(relayed)
            refused = await c.call_tool("a2a__a2a_relay", {"target": "bob", "text": "hi", "context_id": "c2"})
        assert refused.is_error and len(got) == 1, said(refused)
        [question] = person.asked
        assert "UNVERIFIED agent? bob (announced as " in question, question


async def test_the_owners_allow_list_does_not_let_an_unverified_send_through_unasked(tmp_path: Path) -> None:
    """docs/a2a.md has owners allow the a2a tools (the service relays and offers itself): that allow decides
    the tools no rulebase governs, and this one's guard still asks about an unverified peer."""
    async with recording_agent() as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        person = Person(False)
        allow = {"allow": ["a2a__a2a_send", "a2a__a2a_relay"]}
        async with gateway(tmp_path, registry, allow) as rt, \
                Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            refused = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
        assert refused.is_error and got == [] and len(person.asked) == 1, said(refused)


async def test_a_chat_the_service_bridges_to_an_unverified_peer_is_refused(tmp_path: Path) -> None:
    """The A2A service relays a bridged chat itself, with nobody to ask: to a listed bridge target whose
    card its pinned key signed it relays; to a peer nobody's key verified it does not (whatever the owner's
    allow of the relay)."""
    from tests.a2a.served_gateway import gateway_with_a2a
    from tests.a2a.test_ws_binding import Peer as WsPeer, ws_connect

    token = "rover-token-0123456789"
    card = PinnedCard("helper")
    async with recording_agent(card=card) as (port, got):
        helper = f"http://127.0.0.1:{port}/a2a"
        raw = {"mcpServers": {}, "sentinel": {
            "data_dir": str(tmp_path), "builtins": ["a2a"],
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "a2a.pl")],
            "policy": {"allow": ["a2a__a2a_relay"]},
            "principals": [{"name": "rover", "token": token}],
            "a2a": {"name": "bridge-test", **card.settings(helper)}}}
        async with gateway_with_a2a(raw, tmp_path) as gw:
            registry = gw.holder.runtime.services.a2a_peers
            assert isinstance(registry, PeerRegistry)
            registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
            headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
            url = gw.base.replace("http", "ws") + "/a2a/ws"
            async with ws_connect(url, additional_headers=headers) as ws:
                person = WsPeer(ws)
                told = {}
                for target in ("helper", "bob"):
                    channel = (await person.call("chat_open", {"target": target}))["result"]["channel_id"]
                    told[target] = (await person.call("chat_message",
                                                      {"channel_id": channel, "text": "my data"}))["result"]
        assert told["helper"].get("state") == "TASK_STATE_COMPLETED", told
        assert "refused" in told["bob"] or "error" in told["bob"], told
        assert len(got) == 1, got  # only the configured target was sent the person's words


async def test_without_the_sending_guard_an_unverified_peer_is_not_sent_to(tmp_path: Path) -> None:
    """A config that leaves rulebases/a2a.pl out and allows a2a_send (as docs/a2a.md has owners allow the
    a2a tools): no guard read the peer's verdict, so the built-in refuses an unverified peer (a verified one
    is sent to)."""
    async with recording_agent(card=signed_alice) as (port, got):
        registry = PeerRegistry()
        registry.peers["bob._a2a._tcp.local."] = peer("bob", port)
        registry.peers["alice._a2a._tcp.local."] = await verified_alice(port)
        raw = {"mcpServers": {}, "sentinel": {
            "data_dir": str(tmp_path), "builtins": ["a2a"], "policy": {"allow": ["a2a__a2a_send"]},
            "rulebases": [str(RULEBASES_DIR / "default.pl")], "a2a": {"name": "sender", **TRUSTING}}}
        async with running_gateway(parse_config(raw, source="<test>", base_dir=tmp_path)) as rt:
            rt.services.a2a_peers = registry
            async with Client(rt.front.server, mode="auto", elicitation_callback=Person(True)) as c:
                refused = await c.call_tool("a2a__a2a_send", {"peer": "bob", "text": "my data"})
                assert refused.is_error and "a2a.pl" in said(refused) and got == [], said(refused)
                sent = await c.call_tool("a2a__a2a_send", {"peer": "alice", "text": "my data"})
        assert not sent.is_error and len(got) == 1, said(sent)
