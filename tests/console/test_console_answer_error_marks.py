"""The inbox's "your answer cannot be taken" line quotes an upstream's words (its question, its field's title)
over real HTTP against a real Sentinel: marked once, as one text. Before, the field's title reached the page
raw (a right-to-left override reversed the line), beside the question marked when it was asked."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from tests.console.console_rig import ALICE, console_config, http_sentinel, items_of, mcp_client, signed_in

pytestmark = pytest.mark.timeout(240)
HOSTILE = Path(__file__).resolve().parent / "hostile_form_server.py"

FORM = {"type": "object", "properties": {"amount": {"type": "number", "title": "am\u202etnuo⟨U+200B⟩"}},
        "required": ["amount"]}


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("answer-error-marks"))
    body = json.loads(cfg.read_text())
    body["mcpServers"]["hx"] = {"command": sys.executable, "args": [str(HOSTILE)]}
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def test_an_answers_problem_quotes_the_field_and_question_marked_once(sentinel):
    async with signed_in(sentinel, ALICE) as person, mcp_client(sentinel, ALICE) as client:
        call = asyncio.create_task(
            client.call_tool("hx__ask_raw", {"schema": json.dumps(FORM), "message": "pay\u202e now?"})
        )
        (item,) = items_of(await person.wait_items(1))
        r = await person.post(f"/console/inbox/{item}", {"decision": "approve", "q0.amount": "nan"})
        assert r.status_code == 400, r.text[:300]
        line = r.text.split('role="alert">', 1)[1].split("</p>", 1)[0]
        assert "\u202e" not in r.text, line  # no override reaches the page raw
        # the title's real override and typed-out mark, the question's override: each marked once
        assert "am⟨U+202E⟩tnuo⟨U+27E8⟩U+200B⟨U+27E9⟩: not a number" in line, line
        assert "pay⟨U+202E⟩ now?" in line and "⟨U+27E8⟩U+202E" not in line, line
        await person.post(f"/console/inbox/{item}", {"decision": "deny"})
        await asyncio.wait_for(call, 60)
