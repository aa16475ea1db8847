"""A principal limited by ``tools`` sees resources, templates, prompts and completions only of upstreams whose
every tool it may reach (a ``tools`` pattern covers ``<server>__*``): the built-in ``sentinel``'s rulebase and
facts resources only with its policy tools (``sentinel__*``). Otherwise they are exactly as unknown as a name
that does not exist. Real Sentinel over HTTP (bookings server over stdio, the built-in ``sentinel``), the real
MCP client in both eras."""

from __future__ import annotations

import pytest
from tests.identity.identity_rig import ALICE, BOB, CAROL, http_client, http_sentinel, write_config
from mcp.shared.exceptions import MCPError
from mcp.types import ResourceTemplateReference

from sentinel_mcp.identity.principal import Principal

pytestmark = pytest.mark.timeout(120)

OWN = ("sentinel://rulebase", "sentinel://facts")


async def _error_of(call) -> tuple[int, str]:  # noqa: ANN001
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value.error.code, caught.value.error.message


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_tools_limit_also_limits_resources_and_prompts(tmp_path, mode):
    cfg = write_config(
        tmp_path,
        principals=[
            {"name": "alice", "token": ALICE},
            # every sentinel tool: its own resources too (and bk's one tool only: nothing else of bk)
            {"name": "bob", "token": BOB, "tools": ["sentinel*", "bk__list_bookings"]},
            {"name": "carol", "token": CAROL, "tools": ["bk__list_bookings"]},
        ],
    )
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, ALICE, mode) as alice, http_client(base, BOB, mode) as bob, \
                http_client(base, CAROL, mode) as carol:
            listed = {str(r.uri) for r in (await alice.list_resources()).resources}
            assert set(OWN) <= listed
            assert "rulebase" in str((await alice.read_resource("sentinel://rulebase")).contents)
            templates = [t.uri_template for t in (await alice.list_resource_templates()).resource_templates]
            prompts = [p.name for p in (await alice.list_prompts()).prompts]

            assert set(OWN) <= {str(r.uri) for r in (await bob.list_resources()).resources}
            assert "rulebase" in str((await bob.read_resource("sentinel://rulebase")).contents)
            assert [t.uri_template for t in (await bob.list_resource_templates()).resource_templates] == [
                t for t in templates if t.startswith("sentinel://")
            ]

            # carol reaches bk__list_bookings only: nothing of sentinel's, nothing of bk's beyond that tool
            assert not (await carol.list_resources()).resources
            assert not (await carol.list_resource_templates()).resource_templates
            assert not (await carol.list_prompts()).prompts
            filled = [t.replace("{", "").replace("}", "") for t in templates]
            for uri in (*OWN, "sentinel://no-such", *filled):
                code, message = await _error_of(carol.read_resource(uri))
                assert code == -32002 and message == f"Resource not found: {uri}", uri
            for uri in templates:
                code, _ = await _error_of(
                    carol.complete(ResourceTemplateReference(type="ref/resource", uri=uri),
                                   {"name": "x", "value": ""})
                )
                assert code == -32002
            for name in prompts:
                code, message = await _error_of(carol.get_prompt(name, {}))
                assert message.startswith("unknown prompt"), message
            if mode == "legacy":
                for uri in OWN:
                    code, _ = await _error_of(carol.subscribe_resource(uri))
                    assert code == -32002
            else:
                async with carol.listen(resource_subscriptions=list(OWN)) as sub:
                    assert not (sub.honored.resource_subscriptions or [])


@pytest.mark.parametrize(
    ("tools", "reads"),
    [
        (("*",), True), (("sentinel__*",), True), (("sentinel*",), True), (("s*",), True),
        (("*", "x"), True), (("sentinel__sentinel_facts",), False), (("sentinel__sentinel_*",), False),
        (("sentinel_*",), True), (("*__*",), False), (("sentinel__?*",), False), (("[s]entinel__*",), False),
        (("other__*",), False), ((), False),
    ],
)
def test_which_tools_patterns_cover_a_whole_server(tools, reads):
    assert Principal("p", "token", tools=tools).may_read("sentinel") is reads
    # an upstreams limit still applies on top
    assert not Principal("p", "token", tools=tools, upstreams=("bk",)).may_read("sentinel")
