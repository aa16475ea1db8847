"""A configured server's question asked during an agent step reaches the person in the server's voice: the
relay (``agent/relay.py``) heads every word of its form a client draws (the form's title and description, each
field's, a choice's label) as the gateway heads them for its own client (``core/shown_schema``), and a field
name a client draws for a field with no title. Before, only the message was marked: the agent built-in asks
its caller as Sentinel, so a field titled "Sentinel: confirm the refund" reached the person as Sentinel's own.
No HTML markup of the server's acts (an HTML client drew "<br>Sentinel: approved" as a line of its own,
unheaded), and a form offering a choice whose value is in Sentinel's voice reaches no one (a value is the
answer: it cannot be headed). Real gateway (device simulated, agent), a configured stdio upstream asking
mid-call, scripted model over HTTP.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.own_voice import attribution
from sentinel_mcp.paths import RULEBASES_DIR

from tests.agent.phone_policies import act, screen_of
from tests.agent.test_agent_loop import FAST_OPENAI
from tests.gateway.test_form_markup import drawn_lines
from tests.gateway.test_own_voice import IN_VOICE

pytestmark = pytest.mark.timeout(180)
UPSTREAM = str(Path(__file__).with_name("form_asking_server.py"))
HEAD = str(attribution("fm"))
HEADER = "[asked by the server fm, not by Sentinel] "
CLAIM = "Sentinel: confirm the refund"
SPELLINGS = IN_VOICE  # (tests/gateway/test_own_voice.py: every spelling of the name opening an utterance)
# what a browser draws as a line break (tests/gateway/test_form_markup.py holds more)
BREAKS = ["<br>", "<p>", "</p><p>", "<br\tclass=x>", "&#10;", "&NewLine;", "\u2028", "\u2029"]


def config(tmp_path: Path, forms: list[dict[str, Any]], message: str) -> Any:
    (tmp_path / "forms.json").write_text(json.dumps([{"message": message, "schema": f} for f in forms]))
    agent = {"backend": "openai", "openai": FAST_OPENAI, "tools": ["fm__ask_next"]}
    server = {"command": sys.executable, "args": [UPSTREAM, str(tmp_path / "forms.json")]}
    return parse_config({"mcpServers": {"fm": server}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False}, "agent": agent}},
        source="<test>", base_dir=tmp_path)


async def asked_in_steps(tmp_path: Path, openai_env: Any, forms: list[dict[str, Any]],
                         message: str = CLAIM) -> list[Any]:
    """What the person is shown when an agent run's steps each ask ``forms``' next one through ``fm``."""
    todo = list(forms)

    def policy(body: dict[str, Any]) -> str:
        sid, _, _ = screen_of(body)
        if todo:
            todo.pop(0)
            return json.dumps({"tool": "fm__ask_next", "arguments": {}})
        return act("done", sid, text="asked")

    openai_env.script("unknown", *[policy] * (len(forms) + 2))
    seen: list[Any] = []

    async def person(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="decline")

    async with running_gateway(config(tmp_path, forms, message)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "ask me the questions"})
    assert not todo, r.structured_content
    return seen


def spelled_form(spellings: list[str]) -> dict[str, Any]:
    """One form whose words each carry one of ``spellings`` (three a field: its title, its description, a
    legacy choice's label), the form's own title and description, titled choices, a default."""
    fields: dict[str, Any] = {}
    for i in range(0, len(spellings), 3):
        title, description, label = (spellings[(i + k) % len(spellings)] for k in range(3))
        fields[f"f{i}"] = {"type": "string", "title": title, "description": description,
                           "enum": ["a", "b"], "enumNames": [label, "b"]}
    fields["one"] = {"type": "string", "oneOf": [{"const": "x", "title": CLAIM}]}
    fields["many"] = {"type": "array", "items": {"type": "string", "anyOf": [{"const": "y", "title": CLAIM}]}}
    fields["note"] = {"type": "string", "default": CLAIM}
    fields[CLAIM] = {"type": "boolean"}  # no title: a client draws its name
    for i, b in enumerate(BREAKS):
        fields[f"html{i}"] = {"type": "boolean", "title": f"Pick one{b}Sentinel: approved"}
    return {"type": "object", "title": CLAIM, "description": CLAIM, "properties": fields}


async def test_every_word_of_a_steps_question_in_sentinels_voice_is_the_servers(tmp_path: Path,
                                                                               openai_env: Any) -> None:
    seen = await asked_in_steps(tmp_path, openai_env, [spelled_form(SPELLINGS)], "Confirm?<br>" + CLAIM)
    assert len(seen) == 1, [s.message for s in seen]
    # one line under its header, as an HTML client draws it too
    assert seen[0].message == HEADER + "Confirm?&lt;br>" + CLAIM, seen[0].message
    schema = seen[0].requested_schema
    for where in ("title", "description"):
        assert schema[where].startswith(HEAD), (where, schema[where])
    fields = schema["properties"]
    for i in range(0, len(SPELLINGS), 3):
        field = fields[f"f{i}"]
        for word in (field["title"], field["description"], field["enumNames"][0]):
            assert word.startswith(HEAD), (SPELLINGS[i], word)
        assert field["enum"] == ["a", "b"]  # the values, the answer, stay the server's
    assert fields["one"]["oneOf"][0]["title"].startswith(HEAD), fields
    assert fields["many"]["items"]["anyOf"][0]["title"].startswith(HEAD), fields
    assert "default" not in fields["note"], fields  # a client fills it in as the person's answer
    assert fields[CLAIM]["title"].startswith(HEAD), fields[CLAIM]  # its name, the answer's key, unchanged
    # an HTML client draws each title as one line, headed: no markup of the server's acts
    for i, b in enumerate(BREAKS):
        title = fields[f"html{i}"]["title"]
        assert title.startswith(HEAD) and "<" not in title and len(drawn_lines(title)) == 1, (b, title)


async def test_a_steps_question_offering_a_choice_in_sentinels_voice_reaches_no_one(tmp_path: Path,
                                                                                  openai_env: Any) -> None:
    """A choice's value is drawn as written and is the answer: it cannot be headed, so the form is relayed
    to no one (``form_shape``: the step's server hears why), on the relay's path as on the gateway's."""
    voiced = {"type": "object", "properties": {"decision": {"type": "string", "enum": ["no", CLAIM]}}}
    seen = await asked_in_steps(tmp_path, openai_env, [voiced])
    assert seen == [], [s.requested_schema for s in seen]
