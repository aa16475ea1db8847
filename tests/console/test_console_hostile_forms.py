"""An upstream's form in the inbox, over real HTTP against a real Sentinel: the form is outside input, so a
schema of any shape is shown (as the fields it can be read as) and can be answered or denied; it never breaks
the page that lists every other question of the person."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from tests.console.console_rig import (ALICE, console_config, http_sentinel, items_of, mcp_client, signed_in,
                                      text)

pytestmark = pytest.mark.timeout(240)
HOSTILE = Path(__file__).resolve().parent / "hostile_form_server.py"

# a field's schema arrives as the upstream wrote it (the SDK checks the form's outline only): choices that
# are not a list, a field that is not a schema, words that are not text
BROKEN_FORMS = [
    {"type": "object", "properties": {"ok": {"type": "boolean", "enum": 5}}},
    {"type": "object", "properties": {"ok": {"type": "boolean"}, "pick": {"type": "string", "enum": True}}},
    {"type": "object", "properties": {"pick": {"type": "string", "oneOf": 7}}, "required": ["pick"]},
    {"type": "object", "properties": {"pick": {"type": "string", "enum": {"a": 1}, "title": {"x": 1}}}},
    {"type": "object", "properties": {"why": {"type": "string", "oneOf": "abc"}, "ok": 3}},
]


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("hostile-forms"))
    body = json.loads(cfg.read_text())
    body["mcpServers"]["hx"] = {"command": sys.executable, "args": [str(HOSTILE)]}
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def test_an_upstream_form_of_any_shape_never_breaks_the_inbox_and_can_be_denied(sentinel):
    """Before, a field list that was not a mapping, a ``required`` or ``enum`` that was not a list, made the
    inbox page (and its live count) answer 500 while the form waited: the person could answer none of the
    other questions waiting there, and the upstream could ask again and again."""
    base = sentinel
    async with signed_in(base, ALICE) as person, mcp_client(base, ALICE) as client:
        for schema in BROKEN_FORMS:
            call = asyncio.create_task(
                client.call_tool("hx__ask_raw", {"schema": json.dumps(schema), "message": "pick one"})
            )
            for _ in range(200):
                r = await person.get("/console/inbox")
                assert r.status_code == 200, (schema, r.status_code, r.text[:300])
                if items_of(r.text):
                    break
                assert not call.done(), (schema, text(call.result()))
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"the form {schema} never reached the inbox")
            (item,) = items_of(r.text)
            denied = await person.post(f"/console/inbox/{item}", {"decision": "deny"})
            assert denied.status_code == 303, (schema, denied.status_code, denied.text[:300])
            result = await asyncio.wait_for(call, 60)
            assert "ask_raw:decline" in text(result), (schema, text(result))
