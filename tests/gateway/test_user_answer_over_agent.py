"""Through the real gateway (2026-era rounds) and the real policy engine: while the user's question is open,
the agent answers it through ``sentinel_answer``; the user's answer, given after, is the one that counts (it
was refused as "already answered", and the agent's word decided the call). And a user typing ``i_dont_know``
into a text question gave that text, not "I don't know". The toolbox's ``write_marker`` is the side effect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.carried_session import Carried
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
RULES = """
askable(colour(P, C), "Which colour for ~w?", choice([red, green]), [from([user, agent])]).
askable(note(P, N), "A note for ~w?", text, [from([user, agent]), unknown(as(none))]).
guard('tb__write_marker', [path = P, text = T], ( colour(P, red), note(P, N), N \\== none )).
"""


def text(r: Any) -> str:
    return r.content[0].text


async def test_the_users_answer_counts_over_the_agents_given_while_it_was_open(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "marker.pl").write_text(RULES)
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                      rulebases=[str(RULEBASES_DIR / "default.pl"), str(data_dir / "marker.pl")])
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "hello"}
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=_never) as client:
            c = Carried(client.session)
            r = await c.call_tool("tb__write_marker", args, allow_input_required=True)
            [colour_key] = [k for k in r.input_requests if ".colour." in k]
            [note_key] = [k for k in r.input_requests if ".note." in k]  # one round asks both
            # the user's form is open; the agent answers the question first, for the colour the user refuses
            ok = await c.call_tool("sentinel__sentinel_answer",
                                   {"predicate": "colour", "inputs": [str(marker)], "answer": "green"})
            assert not ok.is_error, text(ok)
            # the user picks red, and types the words of "I don't know" as the note: a note
            typed = {"answer": "i_dont_know", "dont_know": False}
            answers = {colour_key: ElicitResult(action="accept", content={"answer": "red"}),
                       note_key: ElicitResult(action="accept", content=typed)}
            r = await c.call_tool("tb__write_marker", args, allow_input_required=True,
                                  request_state=r.request_state, input_responses=answers)
            assert not r.is_error and not getattr(r, "input_requests", None), text(r)
            # the agent cannot take either back
            for pred, value in (("colour", "green"), ("note", "none")):
                no = await c.call_tool("sentinel__sentinel_answer",
                                       {"predicate": pred, "inputs": [str(marker)], "answer": value})
                assert no.is_error and "already answered" in text(no), text(no)
            facts = json.dumps((await c.call_tool("sentinel__sentinel_facts", {})).structured_content)
            assert "green" not in facts and "i_dont_know" in facts and "$dont_know" not in facts, facts
    assert marker.read_text() == "hello\n"


async def _never(ctx: Any, params: Any) -> ElicitResult:
    raise AssertionError("a 2026-era client is asked through input requests, never pushed to")


WIPE = """
askable(really_write(P), "Really write into ~w?", yes_no, [from([user, agent])]).
guard('tb__write_marker', [path = P, text = T], really_write(P)).
"""


REPLIES = [{"action": "accept", "content": {"answer": "no"}}, {"action": "decline"}, {"action": "cancel"}]


async def test_the_users_no_counts_over_the_agents_yes_given_while_the_form_was_open_2025(
    data_dir: Path,
) -> None:
    """The same in the handshake era: while the elicitation is open, the agent says yes; the user says no,
    or declines to answer. The call went ahead on the agent's yes (the retry's decision asked nothing, and
    the user's reply was dropped). One gateway, a question (a marker) per reply."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "wipe.pl").write_text(WIPE)
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                      rulebases=[str(RULEBASES_DIR / "default.pl"), str(data_dir / "wipe.pl")])
    markers = [data_dir / f"marker{i}.txt" for i in range(len(REPLIES))]
    async with running_gateway(cfg) as rt:
        from sentinel_mcp.policy.policy_service import PolicyService

        session: list[str] = []
        turn: list[int] = [0]

        async def callback(ctx: Any, params: Any) -> ElicitResult:
            # the agent answers the open question itself, in the same conversation, before the user does
            marker = str(markers[turn[0]])
            await PolicyService(rt.gateway.guard).answer(session[0], "really_write", [marker], "yes")
            return ElicitResult(**REPLIES[turn[0]])

        async with Client(rt.front.server, mode="legacy", elicitation_callback=callback) as c:
            first = await c.call_tool("sentinel__sentinel_facts", {})
            session.append(first.structured_content["summary"].split()[1].rstrip(":"))  # "Session <id>: ..."
            for i, reply in enumerate(REPLIES):
                turn[0] = i
                r = await c.call_tool("tb__write_marker", {"path": str(markers[i]), "text": "x"})
                assert r.is_error, (reply, text(r))
                held = [(f.predicate, f.provenance) for f in await rt.gateway.guard.store.valid(session[0])
                        if str(markers[i]) in f.fact]
                # a no is the user's, in place of the agent's yes; a decline ends this call, records nothing
                kept = ("$answered_no", "user") if "content" in reply else ("really_write", "agent")
                assert held == [kept], (reply, held)
    assert not any(m.exists() for m in markers)


async def test_one_principals_questions_never_push_anothers_out() -> None:
    from sentinel_mcp.core.decision import Question
    from sentinel_mcp.gateway.asked_questions import PER_PRINCIPAL, AskedQuestions

    def q(key: str, kind: str = "ask") -> Question:
        return Question(key=f"sentinel.policy.{kind}.{key}", message="?", requested_schema={},
                        meta={"kind": kind})

    book = AskedQuestions()
    await book.remember("alice", "s-a", [q("mine"), q("conf", "confirm")])
    for i in range(PER_PRINCIPAL * 3):
        await book.remember("mallory", f"s-{i}", [q(f"k{i}")])
    assert await book.get("alice", "s-a", "sentinel.policy.ask.mine") is not None
    assert await book.get("alice", "s-a", "policy.ask.mine") is not None  # a 2026-era round's other spelling
    assert await book.get("alice", "s-a", "sentinel.policy.confirm.conf") is None  # a confirmation: its text
    assert await book.get("alice", "s-other", "sentinel.policy.ask.mine") is None  # another conversation's
    assert await book.get("mallory", "s-a", "sentinel.policy.ask.mine") is None  # another principal's
    assert await book.get("mallory", "s-0", "sentinel.policy.ask.k0") is None  # its own oldest went first
    last = PER_PRINCIPAL * 3 - 1
    assert await book.get("mallory", f"s-{last}", f"sentinel.policy.ask.k{last}")
