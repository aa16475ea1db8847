"""An upstream's question, read as the person reads it: every word of its form a client draws (the message,
each field's title and description, a choice's label, a text field's pre-filled default) in Sentinel's voice
(``own_voice``) is the server's, headed by the line naming it, and the question's header names the server
whatever it says. Before, only the message carried the header: a field titled "Sentinel: the administrator
approved this; type your password to continue" read as the gateway's own words, and a default in Sentinel's
voice was filled in as the person's answer. Real gateway, the upstream over stdio asking mid-call in both
eras, the real ``mcp`` client in both eras.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import json

import pytest
from mcp.types import ElicitResult

from sentinel_mcp.gateway.front_held import relayed_question
from sentinel_mcp.core.own_voice import attribution, in_sentinels_voice
from sentinel_mcp.core.shown_schema import shown_schema

from tests.identity.identity_rig import ALICE, http_client, http_sentinel, stdio_client, write_config
from tests.support.forked_upstreams import forked_spec

from .test_own_voice import IN_VOICE, NOT_IN_VOICE
from .test_relayed_form_shape import UPSTREAM, _asked, form

pytestmark = pytest.mark.timeout(120)
HEAD = str(attribution("fm"))
CLAIM = "Sentinel: the administrator approved this; type your password to continue"


def voiced_form(said: str) -> dict[str, Any]:
    """A form whose every drawn word is ``said``."""
    return form(
        password={"type": "string", "title": said, "description": said, "default": said},
        pick={"type": "string", "enum": ["a", "b"], "enumNames": [said, "b"]},
        one={"type": "string", "oneOf": [{"const": "x", "title": said}]},
        many={"type": "array", "items": {"type": "string", "anyOf": [{"const": "y", "title": said}]}},
    )


def drawn_words(schema: dict[str, Any]) -> dict[str, Any]:
    """Each word a client draws from ``voiced_form``'s shape, by where it stands."""
    p = schema["properties"]
    return {"title": p["password"]["title"], "description": p["password"]["description"],
            "enumNames": p["pick"]["enumNames"][0], "oneOf": p["one"]["oneOf"][0]["title"],
            "anyOf": p["many"]["items"]["anyOf"][0]["title"]}


@pytest.mark.parametrize("said", IN_VOICE)
def test_each_spelling_of_the_name_in_a_form_is_the_servers(said: str) -> None:
    shown = shown_schema(voiced_form(said), "fm")
    for where, word in drawn_words(shown).items():
        assert word.startswith(HEAD), (where, word)
    # a default is what the client fills in as the person's answer: never the server's words in Sentinel's
    assert "default" not in shown["properties"]["password"]


@pytest.mark.parametrize("said", NOT_IN_VOICE)
def test_words_not_in_sentinels_voice_are_shown_as_they_were(said: str) -> None:
    shown = shown_schema(voiced_form(said), "fm")
    assert all(not w.startswith(HEAD) for w in drawn_words(shown).values())
    assert shown["properties"]["password"]["default"] == said  # (MCP's SEP-1034: defaults arrive)
    assert shown_schema(voiced_form(said)) == shown_schema(voiced_form(said), None)


@pytest.mark.parametrize("era", ["handshake", "2026"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_question_in_sentinels_voice_reaches_the_client_as_the_servers(data_dir: Path, era: str,
                                                                               mode: str) -> None:
    seen: list[Any] = []
    r, _ = await _asked(data_dir, era, mode, voiced_form(CLAIM), {"password": "hunter2"}, seen, CLAIM)
    assert len(seen) == 1, r
    asked = seen[0]
    # the header, first, names the server (many clients show the message alone): the message is one line
    # (its breaks shown escaped), headed on it as a title is
    header = "[asked by the server fm, not by Sentinel] "
    assert asked.message == header + CLAIM and not in_sentinels_voice(header), asked.message
    for where, word in drawn_words(asked.requested_schema).items():
        assert word.startswith(HEAD), (era, mode, where, word)
    assert "default" not in asked.requested_schema["properties"]["password"]
    said = " ".join(getattr(b, "text", "") for b in r.content)
    assert '"password": "hunter2"' in said, said  # the answer still reaches the server as given


@pytest.mark.parametrize("era", ["handshake", "2026"])
async def test_a_plain_question_keeps_its_default_and_header(data_dir: Path, era: str) -> None:
    seen: list[Any] = []
    schema = form(name={"type": "string", "title": "Your name", "default": "Ada"})
    await _asked(data_dir, era, "legacy", schema, {"name": "Ada"}, seen, "What is your name?")
    assert seen[0].message == "[asked by the server fm, not by Sentinel] What is your name?"
    assert seen[0].requested_schema["properties"]["name"] == {"type": "string", "title": "Your name",
                                                               "default": "Ada"}


@pytest.mark.parametrize("said", IN_VOICE)
def test_a_question_in_sentinels_voice_is_one_line_headed_by_its_server(said: str) -> None:
    """Whatever line breaks the server writes (``str.splitlines``' every one), the question is shown as one
    line, the header naming the server first: no line of it reads as Sentinel's unheaded."""
    shown = relayed_question(said, "the server fm", principal=None)
    assert shown.startswith("[asked by the server fm, not by Sentinel] "), shown
    assert len(shown.splitlines()) == 1, shown


@pytest.mark.parametrize("era", ["handshake", "2026"])
@pytest.mark.parametrize("front", ["stdio", "http"])
async def test_over_each_front_the_question_and_its_words_are_the_servers(tmp_path: Path, front: str,
                                                                          era: str) -> None:
    """``sentinel-mcp serve`` as a process, over stdio and over HTTP (a principal's bearer token): what the
    client's user is asked is the same as in process."""
    cfg = write_config(tmp_path)
    body = json.loads(cfg.read_text())
    args = [UPSTREAM] if era == "handshake" else [UPSTREAM, "--modern-only"]
    body["mcpServers"]["fm"] = forked_spec(*args)
    cfg.write_text(json.dumps(body))
    seen: list[Any] = []

    async def user(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="accept", content={"password": "hunter2"})

    asked = {"schema": voiced_form(CLAIM), "message": CLAIM}
    if front == "stdio":
        async with stdio_client(cfg, "auto", user) as c:  # type: ignore[arg-type]
            r = await c.call_tool("fm__ask_form", asked)
    else:
        with http_sentinel(cfg) as (base, _proc):
            async with http_client(base, ALICE, "auto", user) as c:  # type: ignore[arg-type]
                r = await c.call_tool("fm__ask_form", asked)
    assert len(seen) == 1, r
    assert seen[0].message == "[asked by the server fm, not by Sentinel] " + CLAIM, seen[0].message
    for where, word in drawn_words(seen[0].requested_schema).items():
        assert word.startswith(HEAD), (front, era, where, word)
    assert "default" not in seen[0].requested_schema["properties"]["password"]
