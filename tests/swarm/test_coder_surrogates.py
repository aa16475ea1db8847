"""A coder answer UTF-8 cannot carry (a lone surrogate, as JSON's \\ud800 escape spells it) is refused with
its reason, never written and never a crash of the build; the retry goes on."""

from __future__ import annotations

import json

import pytest
from tests.swarm.support.scripted_model import SPEC, answer_for, schema_of
from tests.swarm.support.swarm_fixtures import openai_factory

pytestmark = pytest.mark.timeout(60)


def with_surrogate(spelling: str):
    def entry(body):
        answer = answer_for(schema_of(body))
        text = json.dumps(answer)
        first = text.index('"Text for ') if '"Text for ' in text else text.index('": "') + 3
        return text[: first + 1] + spelling + text[first + 1 :]

    return entry


@pytest.mark.parametrize("spelling", ["\\ud800", "\\udfff", "\\udc80x", "a\\ud83d", "\\ude00\\ud83d"])
async def test_a_lone_surrogate_in_a_coder_answer_is_refused_saying_why(service, model_server, spelling):
    model_server.script("coder", with_surrogate(spelling))
    task_id = await service.submit(SPEC, openai_factory(model_server))
    status = await service.wait(task_id)
    rejected = [s for s in status["steps"] if s["status"] != "ACCEPTED"]
    assert rejected, status
    assert "surrogate" in json.dumps(rejected[0]["issues"]), rejected[0]
    assert status["state"] == "COMPLETED", status.get("error")  # the retry answers cleanly
