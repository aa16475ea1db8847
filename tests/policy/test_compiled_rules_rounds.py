"""The compiled rules (the fast path) against the interpreter (the reference) over whole conversations: the
policy in words asks in rounds (fetch, then questions, then the confirmation), and every round's decision must
be the same on both paths - kind, reason, unmet conditions, the proof (tree, passes, fetches, citations) and
the questions with their texts. Real example servers (airline, retail) answer the fetches; a seeded user
answers the questions (choices, free text, "I don't know", a declined confirmation), the same on both paths.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from mcp import Client
from mcp.types import Tool

from sentinel_mcp.core.tool_ref import ToolRef

from examples.airline.server import create_server as airline_server
from examples.retail.server import create_server as retail_server
from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Answer, Ask, Decision, Question, ToolCall
from sentinel_mcp.core.port import Completed, InvokeOutcome, Refused
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.questions import DONT_KNOW, AnswerRefused

pytestmark = pytest.mark.timeout(240)


class DirectPort:
    """The guard's fetches go straight to one real MCP server (in process)."""

    def __init__(self, client: Client, prefix: str) -> None:
        self.client, self.prefix, self.tools = client, prefix, {}

    async def refresh(self) -> None:
        self.tools = {f"{self.prefix}__{t.name}": t for t in (await self.client.list_tools()).tools}

    def find_tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def list_catalog_tools(self) -> list[Tool]:
        return list(self.tools.values())

    def identity_of(self, name: str) -> ToolRef | None:
        return ToolRef(self.prefix, name.split("__", 1)[1]) if name in self.tools else None

    def self_confirming(self, name: str) -> bool:
        return False

    async def judged_arguments(self, name: str, arguments: Any) -> tuple[dict[str, Any], str | None]:
        return arguments, None  # no gateway between: the upstream gets them as given

    async def invoke(self, name: str, arguments: dict[str, Any] | None, **_: Any) -> InvokeOutcome:
        if name not in self.tools:
            return Refused(reason=f"unknown tool {name}")
        return Completed(result=await self.client.call_tool(name.split("__", 1)[1], arguments or {}))


def shown(d: Decision) -> dict[str, Any]:
    """A decision as compared, its unbound variables unnamed (Prolog numbers them as it pleases)."""
    proof = json.loads(re.sub(r"\b_[0-9]+\b", "_", json.dumps(getattr(d, "proof", None) or {})))
    for f in proof.get("fetches", []):
        f.pop("started", None), f.pop("ended", None)  # when a fetch ran
    return {
        "kind": d.kind,
        "reason": d.reason,
        "unmet": getattr(d, "unmet", None),
        "proof": proof,
        "how": getattr(d, "how_to_unblock", None),
        "questions": [(q.key, q.message, q.requested_schema, q.meta) for q in getattr(d, "questions", [])],
    }


def answer_of(q: Question, rng: random.Random, texts: dict[str, list[Any]]) -> Answer:
    """What the seeded user says: mostly a fitting answer (the first text under a word of the question),
    sometimes another one, "I don't know", or no."""
    prop = q.requested_schema["properties"]["answer"]
    if q.meta.get("kind") == "confirm":
        return Answer(action="accept", content={"answer": rng.random() < 0.85})
    if "oneOf" in prop:
        options = [o["const"] for o in prop["oneOf"]]
        plain = [o for o in options if o != DONT_KNOW]
        pick = rng.choice(plain) if plain and rng.random() < 0.85 else DONT_KNOW
        return Answer(action="accept", content={"answer": pick})
    if rng.random() < 0.1:
        return Answer(action="accept", content={"dont_know": True})
    if prop.get("type") == "number":
        return Answer(action="accept", content={"answer": rng.choice([0, 1, 50, 10**9])})
    fitting = next((v for k, v in texts.items() if k in q.message.lower()), texts.get("", ["?"]))
    value = fitting[0] if rng.random() < 0.75 else rng.choice([v for vs in texts.values() for v in vs])
    return Answer(action="accept", content={"answer": str(value)})


async def converse(
    guard: PolicyGuard, c: ToolCall, seed: int, texts: dict[str, list[Any]], rounds: int = 6
) -> list[Any]:
    rng = random.Random(seed)
    seen: list[Any] = []
    for _ in range(rounds):
        d = await guard.decide(c)
        seen.append(shown(d))
        if not isinstance(d, Ask):
            break
        for q in d.questions:
            try:
                await guard.record_answer(c, q, answer_of(q, rng, texts))
            except AnswerRefused as e:
                seen.append(("refused", str(e)))
    return seen


async def paired_guards(
    tmp: Path, rulebases: list[Path], port: DirectPort, seeds: dict[str, Any]
) -> AsyncIterator[tuple[PolicyGuard, PolicyGuard]]:
    guards = []
    for fast in (True, False):
        g = PolicyGuard(
            rulebases,
            port,
            store_path=tmp / f"facts-{fast}.db",
            seeds=seeds,
            settings=PolicySettings(guard_timeout=60),
            fast_path=fast,
        )
        await g.start(watch=False)
        guards.append(g)
    try:
        yield guards[0], guards[1]
    finally:
        for g in guards:
            await g.close()


async def compare(
    tmp: Path,
    rulebases: list[Path],
    port: DirectPort,
    seeds: dict[str, Any],
    calls: list[tuple[ToolCall, dict[str, list[Any]]]],
) -> dict[str, int]:
    """Each call, in a session of its own, conversed on both paths; the decisions of every round compared."""
    kinds: dict[str, int] = {}
    gen = paired_guards(tmp, rulebases, port, seeds)
    fast, ref = await gen.__anext__()
    try:
        for i, (c, texts) in enumerate(calls):
            a = await converse(fast, c, i, texts)
            b = await converse(ref, c, i, texts)
            assert a == b, (c, a, b)
            for d in a:
                if isinstance(d, dict):
                    kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    finally:
        await gen.aclose()
    return kinds


def call(name: str, args: dict[str, Any], session: str) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments=args, session_id=session)


async def test_airline_conversations_decide_the_same_in_every_round(tmp_path: Path) -> None:
    db = json.loads((PROJECT_ROOT / "examples/airline/data/db.json").read_text())
    user = "amelia_davis_8890"
    mine = db["users"][user]["reservations"]
    others = [r for r in list(db["reservations"])[:40] if r not in mine]
    cards = list(db["users"][user]["payment_methods"])
    rng = random.Random(2118)
    calls = []
    for i in range(14):
        r = rng.choice(mine + ["8C8K4E", "LU15PA", "MSJ4OA"] + others[:3])  # cancellable ones more often
        name, args = rng.choice(
            [
                ("airline__cancel_reservation", {"reservation_id": r}),
                (
                    "airline__update_reservation_baggages",
                    {
                        "reservation_id": r,
                        "total_baggages": rng.randint(0, 4),
                        "nonfree_baggages": rng.randint(0, 2),
                        "payment_id": rng.choice(cards + ["cc_nobody"]),
                    },
                ),
                ("airline__send_certificate", {"user_id": user, "amount": rng.choice([50, 100, 200])}),
                (
                    "airline__update_reservation_passengers",
                    {
                        "reservation_id": r,
                        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
                    },
                ),
            ]
        )
        calls.append((call(name, args, f"air{i}"), {"": ["yes"]}))
    async with Client(airline_server(), mode="auto") as client:
        port = DirectPort(client, "airline")
        await port.refresh()
        kinds = await compare(tmp_path, [RULEBASES_DIR / "airline.pl"], port, {"current_user": user}, calls)
    assert {"ask", "deny", "allow"} <= set(kinds), kinds  # the conversations reach every outcome


async def test_retail_conversations_decide_the_same_in_every_round(tmp_path: Path) -> None:
    db = json.loads((PROJECT_ROOT / "examples/retail/data/db.json").read_text())
    rng = random.Random(2125)
    users = [u for u in list(db["users"].values())[:60] if u["orders"]]
    calls = []
    for i in range(18):
        u = rng.choice(users)
        o = db["orders"][rng.choice(u["orders"])]
        items = [it["item_id"] for it in o["items"]][:2]
        pay = rng.choice(list(u["payment_methods"]) + ["credit_card_0000000"])
        name, args = rng.choice(
            [
                (
                    "retail__cancel_pending_order",
                    {
                        "order_id": o["order_id"],
                        "reason": rng.choice(["no longer needed", "ordered by mistake", "meh"]),
                    },
                ),
                (
                    "retail__modify_pending_order_payment",
                    {"order_id": o["order_id"], "payment_method_id": pay},
                ),
                (
                    "retail__return_delivered_order_items",
                    {"order_id": o["order_id"], "item_ids": items, "payment_method_id": pay},
                ),
                (
                    "retail__modify_pending_order_address",
                    {
                        "order_id": o["order_id"],
                        "address1": "1 Main St",
                        "address2": "",
                        "city": "Austin",
                        "state": "TX",
                        "country": "USA",
                        "zip": "78701",
                    },
                ),
                (
                    "retail__exchange_delivered_order_items",
                    {
                        "order_id": o["order_id"],
                        "item_ids": items,
                        "new_item_ids": items,
                        "payment_method_id": pay,
                    },
                ),
            ]
        )
        # what the user may say when asked: their own email or name and zip, or someone else's
        other = rng.choice(users)
        texts = {
            "email": [u["email"], other["email"], "nobody@example.com"],
            "first name": [u["name"]["first_name"]],
            "last name": [u["name"]["last_name"]],
            "zip": [u["address"]["zip"], other["address"]["zip"]],
        }
        calls.append((call(name, args, f"shop{i}"), texts))
    async with Client(retail_server(), mode="auto") as client:
        port = DirectPort(client, "retail")
        await port.refresh()
        kinds = await compare(
            tmp_path, [RULEBASES_DIR / "default.pl", RULEBASES_DIR / "retail.pl"], port, {}, calls
        )
    assert {"ask", "deny", "allow"} <= set(kinds), kinds
