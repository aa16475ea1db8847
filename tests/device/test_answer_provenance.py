"""The device firewall's confirmation takes the user's answer only, as the gateway marks who answered.

Through the real gateway (policy guard, rulebases) on the simulated phone: an agent that answers the risky
tap's
question for the user, whatever mark it writes on its answer, sends nothing; the person's answer in the
console
inbox sends the tap. Run alone (no gateway), the device's own client is its user.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.asking import ANSWERED_BY
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.gateway.person_inbox import PersonQuestion
from tests.device.device_helpers import connect, element, sim_server, snapshot_id
from tests.device.test_through_gateway import device_config

pytestmark = pytest.mark.timeout(90)


class AnsweringAgent(CallerLink):
    """An agent (an A2A peer's bridge, a model) that answers the device's question with yes for the user."""

    who = "an agent"
    can_push = True

    def __init__(self, mark: Any) -> None:
        self.meta = {ANSWERED_BY: mark} if mark is not None else None
        self.asked: list[str] = []

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True}, _meta=self.meta)


class Person:
    """The person at the console inbox: says yes to the device's question."""

    def __init__(self) -> None:
        self.questions: list[Question] = []

    async def ask(self, asked: PersonQuestion) -> dict[str, Answer]:
        self.questions.extend(asked.questions)
        return {
            q.key: Answer(action="accept", content={"confirm": True}, provenance="user")
            for q in asked.questions
        }


async def to_bank_login(rt: Any, session: str, link: CallerLink | None) -> Any:
    async def call(name: str, args: dict[str, Any]) -> Any:
        outcome = await rt.gateway.invoke(
            name, args, session_id=session, origin="a2a", link=link, principal="owner"
        )
        assert not outcome.result.is_error, outcome.result.content[0].text
        return outcome.result

    home = await call("device__screen_read", {})
    return await call(
        "device__click", {"element_id": element(home, text="Bank")["id"], "snapshot_id": snapshot_id(home)}
    )


@pytest.mark.parametrize("mark", ["user", "User", ["user"], None])
async def test_an_agents_yes_sends_nothing_whatever_it_claims(tmp_path, mark):
    agent = AnsweringAgent(mark)
    async with running_gateway(device_config(tmp_path)) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        bank = await to_bank_login(rt, "peer/1", agent)
        outcome = await rt.gateway.invoke(
            "device__click",
            {"element_id": element(bank, text="Sign in")["id"], "snapshot_id": snapshot_id(bank)},
            session_id="peer/1",
            origin="a2a",
            link=agent,
            principal="owner",
        )
        assert phone.screen == "bank_login"  # nothing was sent
    assert agent.asked and "Sign in" in agent.asked[0]  # it was asked, and its yes counted for nothing
    text = outcome.result.content[0].text
    assert outcome.result.is_error and "did not come from the user" in text, text
    decision = outcome.result.structured_content["decision"]
    assert decision["answer"] == "not_user" and decision["outcome"] == "denied"
    # the record points to the gateway's decision for that call
    assert decision["decision_id"] == outcome.result.meta["sentinel/decision_id"]


async def test_the_persons_yes_in_the_inbox_sends_the_tap(tmp_path):
    person = Person()
    async with running_gateway(device_config(tmp_path)) as rt:
        rt.gateway.person_inbox = person
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        bank = await to_bank_login(rt, "peer/2", None)
        outcome = await rt.gateway.invoke(
            "device__click",
            {"element_id": element(bank, text="Sign in")["id"], "snapshot_id": snapshot_id(bank)},
            session_id="peer/2",
            origin="a2a",
            principal="owner",
        )
        assert phone.screen == "bank_transfer"
    assert not outcome.result.is_error, outcome.result.content[0].text
    [question] = person.questions
    assert question.meta["decision_id"] == outcome.result.meta["sentinel/decision_id"]
    decision = outcome.result.structured_content["decision"]
    assert decision["decided_by"] == "user:elicitation"
    # the device's own result key stays: it is the device's
    assert outcome.result.meta["sentinel/device-decision"]["digest"] == decision["digest"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_alone_its_clients_answer_is_its_users_whatever_mark_it_writes(tmp_path, mode):
    class Client:
        async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
            return ElicitResult(action="accept", content={"confirm": True}, _meta={ANSWERED_BY: "agent"})

    server = sim_server(tmp_path, risk_classifier=False)
    phone = server.runtime.backend
    async with connect(server, mode, Client()) as c:  # type: ignore[arg-type]
        home = await c.call_tool("screen_read", {})
        bank = await c.call_tool(
            "click", {"element_id": element(home, text="Bank")["id"], "snapshot_id": snapshot_id(home)}
        )
        signed = await c.call_tool(
            "click", {"element_id": element(bank, text="Sign in")["id"], "snapshot_id": snapshot_id(bank)}
        )
    assert not signed.is_error, signed.content[0].text
    assert phone.screen == "bank_transfer"
