"""Parties beyond a client that is pushed to: a 2026-era client's held calls (each question the upstream
pushes comes back in a round of one of its calls) and a client whose questions go to the console inbox. Their
calls to a handshake-era stdio upstream overlap too; a question that names no call says so where shown.
"""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.gateway.front_held import shown_request
from sentinel_mcp.gateway.held_calls import HeldCalls, PendingQuestion
from sentinel_mcp.gateway.person_inbox import PersonLink, PersonQuestion
from sentinel_mcp.gateway.push_callers import ConnectionCallers
from sentinel_mcp.gateway.upstream_relays import PushRelays

from .helpers import make_config
from .test_party_overlap import _answering, _slow, _two_clients_ask, sentinel_over_stdio

pytestmark = pytest.mark.timeout(120)

NOTE = "the question names no call"


def _form(message: str = "[toolbox] sure?") -> ElicitRequestFormParams:
    return ElicitRequestFormParams(
        message=message,
        requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    )


async def test_two_2026_clients_asking_at_once_each_answer_only_their_own(data_dir) -> None:
    """Two 2026-era clients (in process: every request a party of its own), three asking calls each at once:
    a question asked in a round of one of a client's calls is always that client's, and every call gets the
    word for its own item."""
    async with running_gateway(make_config(data_dir)) as rt:
        front = rt.front.server
        await _two_clients_ask(lambda seen: Client(front, mode="auto", elicitation_callback=_answering(seen)))


async def test_a_bad_answer_to_a_shared_held_question_is_recorded_as_possibly_another_calls(tmp_path) -> None:
    """A slow call and then an asking call of one 2026-era client: the asking call's question comes back in
    the slow call's round (its oldest), marked as naming no call; an answer that does not fit it refuses that
    round, saying the question may have been another call's, and the upstream hears "cancel"."""
    shown: list[str] = []

    async def bad_answer(ctx: Any, params: Any) -> ElicitResult:
        shown.append(params.message)
        return ElicitResult(action="accept", content={"word": 5})  # the schema asks for a string

    if True:
        async with Client(sentinel_over_stdio(tmp_path), mode="auto", elicitation_callback=bad_answer) as c:
            results: dict[str, Any] = {}

            async def call(name: str, args: dict[str, Any]) -> None:
                results[name] = await c.call_tool(name, args)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "tb__slow", {"seconds": 1.5})
                await anyio.sleep(0.4)
                tg.start_soon(call, "tb__ask_word", {"item": "pear"})
    assert len(shown) == 1 and "a word for pear" in shown[0]
    assert f"{NOTE}: it may be about any of the 2 calls" in shown[0]
    slow = results["tb__slow"]
    text = " ".join(getattr(b, "text", "") for b in slow.content)
    assert slow.is_error and "does not fit its question" in text and NOTE in text, text
    assert "pear=" not in " ".join(getattr(b, "text", "") for b in results["tb__ask_word"].content)


async def test_a_question_put_as_its_call_ends_is_still_asked() -> None:
    """Another call's question can reach a held call's queue just as that call ends (the round waiting for it
    has already woken for the outcome): it is asked in that round first, not left unanswered."""
    held = HeldCalls(timeout=30)
    links: list[Any] = []
    release = asyncio.Event()

    async def run(link: Any) -> str:
        links.append(link)
        await release.wait()
        return "done"

    call = held.start("tb__slow", "s1", run, party=("channel", "alice"), owner="alice")
    await asyncio.sleep(0)
    [link] = links
    assert link.party == ("channel", "alice") and link.for_one_of(1) is link
    question = PendingQuestion(
        "upstream.held.1", ElicitRequest(params=_form()), asyncio.get_running_loop().create_future(),
        of_calls=2,
    )

    def ask_as_it_ends(_task: Any) -> None:  # after the waiting round's own wake-up, before it runs
        call.questions.put_nowait(question)  # what HeldLink._ask does, with no await before it

    waiting = asyncio.ensure_future(held.next_event(call))
    await asyncio.sleep(0)
    call.task.add_done_callback(ask_as_it_ends)
    release.set()
    event = await waiting
    assert event is question, event
    assert held.answer(call, ElicitResult(action="accept", content={"ok": True}))
    assert question.answer.result().action == "accept"
    assert await held.next_event(call) == "done" and call.id not in held.calls


async def test_a_held_question_shared_by_calls_is_shown_as_such() -> None:
    held = HeldCalls(timeout=30)
    links: list[Any] = []

    async def run(link: Any) -> Any:
        links.append(link)
        return await link.for_one_of(3).elicit(_form("[toolbox] delete it?"))

    call = held.start("tb__ask", "s1", run, owner="alice")
    event = await held.next_event(call)
    assert links[0].party is None  # no party given: alone
    assert isinstance(event, PendingQuestion) and event.of_calls == 3
    assert links[0].asking  # its round shows this question: another would wait behind it
    text = shown_request(event.request, "tb", event.of_calls, principal=None).params.message
    assert text.startswith(f"[asked by the server tb, not by Sentinel; {NOTE}: it may be about any of the 3 ")
    assert text.endswith("[toolbox] delete it?")
    alone = shown_request(event.request, "tb", principal=None).params.message
    assert NOTE not in alone and alone.startswith("[asked by the server tb, not by Sentinel] ")
    held.answer(call, ElicitResult(action="decline"))
    assert not links[0].asking
    assert (await held.next_event(call)).action == "decline"


class _Inbox:
    def __init__(self) -> None:
        self.asked: list[PersonQuestion] = []

    async def ask_person(self, asked: PersonQuestion) -> dict[str, Answer]:
        self.asked.append(asked)
        return {"confirm": Answer(action="accept", content={"ok": True}, provenance="user")}


class _Inner:
    who = "the client whose call this is"
    party = ("channel", "alice")

    def decided(self, decision_id: str) -> None:
        return None


async def test_a_console_question_shared_by_calls_says_so() -> None:
    """A caller whose questions go to the console inbox is its own link's party; a question asked while
    several of its calls were in flight is shown with the oldest's tool and arguments, and says it may be
    another's, in its text, its reason and its meta."""
    inbox = _Inbox()
    call = SimpleNamespace(name="tb__delete", arguments={"path": "a"}, origin="client", session_id="s1",
                           client="c")
    link = PersonLink(_Inner(), inbox, "alice", call)  # type: ignore[arg-type]
    assert link.party == ("channel", "alice") and link.for_one_of(1) is link
    assert PersonLink(None, inbox, "alice", call).party is None  # no caller link: alone
    await link.elicit(_form("[toolbox] delete a?"))
    await link.for_one_of(4).elicit(_form("[toolbox] delete b?"))
    own, shared = inbox.asked
    assert NOTE not in own.reason and NOTE not in own.questions[0].message
    assert own.questions[0].meta["calls_in_flight"] == 1
    assert NOTE in shared.reason and "4 calls" in shared.reason and shared.tool == "tb__delete"
    # marked first as another server's question (this rig's gateway names no server), then as shared
    assert shared.questions[0].message.startswith(
        f"[asked by an upstream server, not by Sentinel; {NOTE}: it may be about any of the 4 calls")
    assert shared.questions[0].message.endswith("[toolbox] delete b?")
    assert shared.questions[0].meta["calls_in_flight"] == 4


class _Person:
    async def ask(self, asked: PersonQuestion) -> dict[str, Answer]:
        return {q.key: Answer(action="decline", provenance="user") for q in asked.questions}


async def test_a_client_asked_through_the_console_overlaps_its_calls(data_dir) -> None:
    """A client that declared no elicitation (its questions go to the console inbox): its parallel calls to
    the handshake-era toolbox run at once there."""
    async with running_gateway(make_config(data_dir)) as rt:
        rt.gateway.person_inbox = _Person()
        async with Client(rt.front.server, mode="legacy") as c:
            spans: list[tuple[float, float]] = []
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(_slow, c, spans, 0.8)
    assert len(spans) == 3 and max(s for s, _ in spans) < min(e for _, e in spans)


async def test_a_pushed_question_shared_by_calls_is_shown_as_such(data_dir) -> None:
    """A handshake-era client with a slow call and then an asking call in flight: the question (pushed on the
    oldest call's stream) says it names no call; a question asked with one call in flight does not."""
    async with running_gateway(make_config(data_dir)) as rt:
        shown: list[str] = []
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_answering(shown)) as c:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_slow, c, [], 1.0)
                await anyio.sleep(0.3)
                tg.start_soon(c.call_tool, "tb__ask_word", {"item": "plum"})
            await c.call_tool("tb__ask_word", {"item": "fig"})
    shared, alone = shown
    assert "a word for plum" in shared and f"{NOTE}: it may be about any of the 2 calls" in shared, shared
    assert "a word for fig" in alone and NOTE not in alone


async def asking_at_once(c: Client, n: int) -> dict[str, str]:
    """``n`` calls of ``tb__ask_word`` at once (items ``item0``...): each item's result."""
    results: dict[str, str] = {}

    async def ask(item: str) -> None:
        r = await c.call_tool("tb__ask_word", {"item": item})
        results[item] = r.content[0].text

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(ask, f"item{i}")
    return results


async def test_a_2026_stdio_clients_asking_calls_at_once_each_get_their_own_word(tmp_path) -> None:
    """Sentinel as a stdio process, one 2026-era client, four asking calls at once: each question comes back
    in a round of one of its calls (which one, the question does not say), the client answers what it is
    shown, and every call gets the word for its own item: an answer reaches the question it answers, whichever
    round carried it."""
    shown: list[str] = []
    sentinel = sentinel_over_stdio(tmp_path)
    async with Client(sentinel, mode="auto", elicitation_callback=_answering(shown)) as c:
        results = await asking_at_once(c, 4)
    assert results == {f"item{i}": f"item{i}=ITEM{i}" for i in range(4)}
    assert sorted(re.search(r"a word for (\w+)", m).group(1) for m in shown) == [f"item{i}" for i in range(4)]


class _Flying(CallerLink):
    def __init__(self, party: object, asking: bool) -> None:
        self._party, self._asking, self.shared = party, asking, 0

    @property
    def party(self) -> object:
        return self._party

    @property
    def asking(self) -> bool:
        return self._asking

    def for_one_of(self, calls: int) -> CallerLink:
        self.shared = calls
        return self


def test_a_question_naming_no_call_goes_to_the_oldest_call_not_asking_already() -> None:
    """A held call's round shows one question at a time: a question that names no call goes to a call of the
    party that is free to show it, the oldest such; with every call asking, to the oldest; with two parties in
    flight, to nobody."""
    relays = PushRelays.__new__(PushRelays)  # the mixin's routing alone (no upstream behind it)
    relays.callers = ConnectionCallers()  # one principal's calls (no caller named)
    a, b, c = _Flying("p", True), _Flying("p", False), _Flying("p", False)
    relays._inflight = {n: SimpleNamespace(link=link, streamed=False) for n, link in enumerate((a, b, c))}
    assert relays._caller_for_push() is b and b.shared == 3
    b._asking = c._asking = True
    assert relays._caller_for_push() is a and a.shared == 3
    relays._inflight[9] = SimpleNamespace(link=_Flying("q", False), streamed=False)
    assert relays._caller_for_push() is None
