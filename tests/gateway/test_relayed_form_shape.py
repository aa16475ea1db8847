"""A configured upstream's question reaches the user only as a form MCP defines (``gateway/form_shape.py``):
a flat object of at most ``MAX_FIELDS`` primitive fields (text, a number, a yes or no, listed choices), known
formats, at most ``MAX_CHOICES`` choices. Any other was relayed as written (a field that is a form, 10,000
fields, a list of objects, ``$ref``, a format no client knows). Now it is relayed to no one: a handshake-era
upstream's push is refused and audited, a 2026-era upstream's input request ends the call saying why.
Real gateway, the upstream over stdio in both eras, the real ``mcp`` client in both eras.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.form_shape import MAX_CHOICES, MAX_FIELDS, form_problem
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
UPSTREAM = str(Path(__file__).with_name("form_upstream.py"))
TEXT = {"type": "string"}


def form(**fields: Any) -> dict[str, Any]:
    return {"type": "object", "properties": fields}


# forms of another shape than MCP's (each relayed to no one)
UNSHAPED = {
    "nested_form": form(card=form(number=TEXT, cvv=TEXT)),
    "too_many_fields": form(**{f"f{i}": TEXT for i in range(MAX_FIELDS + 1)}),
    "list_of_objects": form(rows={"type": "array", "items": form(a=TEXT)}),
    "reference": form(a={"$ref": "#/definitions/x"}),
    "unknown_format": form(a={"type": "string", "format": "credit-card"}),
    "too_many_choices": form(a={"type": "string", "enum": [str(i) for i in range(MAX_CHOICES + 1)]}),
    "null_type": form(a={"type": "null"}),
    "no_type": form(a={"description": "anything"}),
    "not_an_object": {"type": "array", "items": TEXT},
    "required_unknown": {**form(a=TEXT), "required": ["b"]},
}
# forms MCP defines (each relayed)
SHAPED = {
    "text": form(a=TEXT),
    "all_primitives": form(s={"type": "string", "format": "email", "maxLength": 50}, n={"type": "number"},
                           i={"type": "integer", "minimum": 1}, b={"type": "boolean"}),
    "single_choice": form(c={"type": "string", "oneOf": [{"const": "x", "title": "X"}]}),
    "multi_choice": form(m={"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "maxItems": 2}),
    "no_fields": form(),
    "most_fields": form(**{f"f{i}": TEXT for i in range(MAX_FIELDS)}),
}


def test_what_is_a_form_mcp_defines() -> None:
    for name, schema in UNSHAPED.items():
        assert form_problem(schema) is not None, name
    for name, schema in SHAPED.items():
        assert form_problem(schema) is None, (name, form_problem(schema))


async def _asked(data_dir: Path, era: str, mode: str, schema: dict[str, Any], content: dict[str, Any],
                 seen: list[Any], message: str = "Fill in") -> tuple[Any, list[dict[str, Any]]]:
    """The upstream's call asking ``schema`` (the client accepts with ``content``): its result and the audit
    log's last rows."""

    async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="accept", content=content)

    args = [UPSTREAM] if era == "handshake" else [UPSTREAM, "--modern-only"]
    servers = {"fm": forked_spec(*args)}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        up = rt.manager.upstreams["fm"]
        with anyio.fail_after(20):
            while up.state != "ready":
                await anyio.sleep(0.05)
        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            r = await c.call_tool("fm__ask_form", {"schema": schema, "message": message})
        return r, await rt.audit.read(tail=10)


@pytest.mark.parametrize("era", ["handshake", "2026"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("shape", ["nested_form", "too_many_fields", "list_of_objects"])
async def test_a_form_of_another_shape_reaches_no_one(data_dir: Path, era: str, mode: str, shape: str):
    seen: list[Any] = []
    r, rows = await _asked(data_dir, era, mode, UNSHAPED[shape], {}, seen)
    assert seen == []  # the user was never asked
    said = " ".join(getattr(b, "text", "") for b in r.content)
    assert r.is_error and ("not relayed" in said or "refused" in said), said
    if era == "handshake":  # a refused push is audited with its call
        logged = " ".join(str(row.get("error") or "") + str(row.get("reason") or "") for row in rows)
        assert "elicitation refused" in logged, rows
