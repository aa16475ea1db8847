"""What a shared handshake-era stdio upstream pushes naming no call (a log line, a form question, a sampling
request, a roots request) reaches no principal but the one whose calls the connection carried. An upstream
that goes on working after answering alice's call (a background job) pushed while bob's call was the only one
in flight: bob was shown alice's log line and her question, his answer went back to the upstream as the
answer to it, his model answered her sampling request and his roots were sent for her job. Now, once the
connection has carried calls of more than one principal, such a push is refused (and a log line kept in the
gateway's log, and the refusal in the audit under no principal, cause ``unattributed``), saying why without
naming anyone; while one principal alone has called, its pushes still reach its call in flight. A roots
request never gets that far on a connection two principals may use: it is told of no roots at all
(``test_roots_per_principal.py``), and answers as a client without them does.

A real Sentinel over HTTP, the lingering upstream over stdio behind it (its push is made while bob's call is
known to be in flight: no clock), the real MCP client in both eras for bob."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from sentinel_mcp.config import load_config
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.core.own_voice import attribution
from sentinel_mcp.gateway.push_callers import ConnectionCallers
from sentinel_mcp.gateway.upstream_relays import UNATTRIBUTED, PushRelays
from tests.gateway.test_push_refusals_audited import _rows

from .identity_rig import ALICE, BOB, http_sentinel, text

pytestmark = pytest.mark.timeout(180)
LINGERING = Path(__file__).with_name("lingering_server.py")
KINDS = ("log", "elicit", "sample", "roots")
# Sentinel's answer (audited) on a connection it did not tell it answers roots (undeclared_requests.py; it was
# the SDK's own "List roots not supported", unaudited)
NO_ROOTS = ("sentinel: a 'roots/list' request cannot be relayed: this connection was not told Sentinel "
            "answers it")


def _config(tmp: Path, isolation: str = "shared") -> Path:
    cfg = tmp / "sentinel.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {"lg": {"command": sys.executable, "args": [str(LINGERING)],
                                      "isolation": isolation}},
                "sentinel": {
                    "data_dir": str(tmp / "state"),
                    "builtins": [],
                    "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}],
                },
            }
        )
    )
    return cfg


class Seen:
    """Everything a client was pushed: log lines, questions, sampling prompts, roots requests."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.got: list[str] = []

    async def log(self, params: Any) -> None:
        self.got.append(f"log:{params.data}")

    async def elicit(self, ctx: Any, params: Any) -> ElicitResult:
        self.got.append(f"elicit:{params.message}")
        return ElicitResult(action="accept", content={"ok": True})

    async def sample(self, ctx: Any, params: Any) -> CreateMessageResult:
        self.got.append(f"sample:{params.messages[0].content.text}")
        return CreateMessageResult(
            role="assistant", model=f"model-of-{self.who}", content=TextContent(type="text", text="ok")
        )

    async def roots(self, ctx: Any) -> ListRootsResult:
        self.got.append("roots")
        return ListRootsResult(roots=[Root(uri=f"file:///home/{self.who}", name="home")])


def _client(base: str, token: str, seen: Seen, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(
        streamable_http_client(f"{base}/mcp", http_client=http),
        mode=mode,  # type: ignore[arg-type]
        logging_callback=seen.log,
        elicitation_callback=seen.elicit,
        sampling_callback=seen.sample,
        list_roots_callback=seen.roots,
    )


def _outcomes(result: Any) -> dict[str, str]:
    """``{tag: what came back}`` from the upstream's ``outcomes``. One quoting Sentinel's refusal
    ("refused:Sentinel refused ...") is in Sentinel's voice: the text comes headed by the line naming the
    server (core/own_voice.py), exactly then."""
    said = text(result)
    lines = json.loads(said.removeprefix(f"{attribution('lg')}\n"))
    assert (said != json.dumps(lines)) == any(":refused:sentinel" in x.lower() for x in lines), said
    return dict(line.split(":", 1) for line in lines)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_push_after_another_principals_call_never_reaches_this_one(tmp_path, mode):
    with http_sentinel(cfg := _config(tmp_path)) as (base, _proc):
        alice_seen, bob_seen = Seen("alice"), Seen("bob")
        async with (
            _client(base, ALICE, alice_seen, "legacy") as alice,
            _client(base, BOB, bob_seen, mode) as bob,
        ):
            for kind in KINDS:
                kicked = await alice.call_tool("lg__kick", {"tag": f"alice-{kind}", "what": kind})
                assert text(kicked) == "kicked", text(kicked)
                held = await bob.call_tool("lg__hold", {})  # in flight, alone, when alice's job pushes
                assert text(held) == "held", text(held)
            outcomes = _outcomes(await alice.call_tool("lg__outcomes", {}))
        assert bob_seen.got == [], bob_seen.got  # no line, question, prompt or roots request of alice's
        assert outcomes["alice-log"] == "log:sent", outcomes
        # a connection serving two principals is told of no roots at all (test_roots_per_principal.py)
        assert outcomes["alice-roots"] == f"roots:refused:{NO_ROOTS}", outcomes
        for kind in ("elicit", "sample"):
            said = outcomes[f"alice-{kind}"]
            # refused by Sentinel, saying why, naming no one; nobody's answer or model went back
            assert said.startswith(f"{kind}:refused:") and "more than one principal" in said, outcomes
            assert "bob" not in said and "alice" not in said.split("refused:", 1)[1], said
    # and each refusal is in the audit, under no principal (Sentinel could not say whose it was)
    rows = _rows(load_config(cfg).store_path)
    refused = [r for r in rows if json.loads(r["arguments"] or "{}").get("cause") == UNATTRIBUTED]
    assert sorted(json.loads(r["arguments"])["push"] for r in refused) == ["elicitation", "sampling"], refused
    assert all(r["principal"] is None and "more than one principal" in r["reason"] for r in refused), refused


@pytest.mark.parametrize("isolation", ["shared", "per_principal"])
async def test_while_one_principal_alone_has_called_its_pushes_reach_its_call(tmp_path, isolation):
    """The routing that stays: the upstream's pushes naming no call go to the one principal's call in flight
    (here alice's later call; her earlier one asked for it). Roots only on alice's own session: a shared
    connection (bob may call it too) is told of none."""
    with http_sentinel(_config(tmp_path, isolation)) as (base, _proc):
        seen = Seen("alice")
        async with _client(base, ALICE, seen, "legacy") as alice:
            for kind in KINDS:
                await alice.call_tool("lg__kick", {"tag": f"job-{kind}", "what": kind})
                assert text(await alice.call_tool("lg__hold", {})) == "held"
            outcomes = _outcomes(await alice.call_tool("lg__outcomes", {}))
        own = isolation == "per_principal"
        assert outcomes == {
            "job-log": "log:sent",
            "job-elicit": "elicit:accept",
            "job-sample": "sample:model-of-alice",
            "job-roots": "roots:file:///home/alice" if own else f"roots:refused:{NO_ROOTS}",
        }, outcomes
        assert [g.split(":", 1)[0] for g in seen.got] == list(KINDS if own else KINDS[:-1]), seen.got
        assert "secret-of-job-log" in seen.got[0]


def test_a_connection_knows_one_principal_or_several_and_starts_afresh():
    callers = ConnectionCallers()
    assert not callers.several
    for name in ("alice", "alice", "alice"):
        callers.called(name)
    assert not callers.several
    callers.called("bob")
    assert callers.several
    callers.called("alice")
    assert callers.several  # stays several: a later call of the first changes nothing
    callers.reset()
    assert not callers.several
    callers.called(None)  # a caller that names none is one caller
    callers.called(None)
    assert not callers.several
    callers.called("alice")
    assert callers.several


def test_the_routing_asks_no_one_once_the_connection_carried_several_principals():
    """The rule at its one place (``PushRelays._push_target``): one call in flight, and still no one to ask
    once another principal's call went out on the connection; the refusal names nobody."""
    relays = PushRelays.__new__(PushRelays)  # the mixin's routing alone (no upstream behind it)
    relays.callers = ConnectionCallers()
    link = CallerLink()
    relays._inflight = {1: SimpleNamespace(link=link, streamed=False)}  # type: ignore[dict-item]
    relays.callers.called("bob")
    assert relays._caller_for_push() is link
    relays.callers.called("alice")
    assert relays._caller_for_push() is None
    said = relays._unrouted("an elicitation").message
    assert "more than one principal" in said and "alice" not in said and "bob" not in said
