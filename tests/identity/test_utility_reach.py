"""The front's utility requests respect a principal's reach: resources, templates, prompts, completion,
resource subscriptions (``resources/subscribe`` and a 2026-era ``subscriptions/listen`` filter) and /metrics.
A principal limited to some upstreams gets, for another upstream's prompt, template or resource, exactly the
answer a name that does not exist gets; its listen stream never carries that resource's updates; /metrics
(which names every upstream and tool) is for principals that may reach everything.

Real processes: the conformance fixture (prompts, templates, completions, subscriptions) over streamable HTTP
and the bookings server over stdio, behind a real Sentinel over HTTP; the real MCP client in both eras."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from tests.identity.identity_rig import (
    ALICE,
    CAROL,
    free_port,
    http_client,
    http_sentinel,
    stop_process,
    wait_http,
    write_config,
)
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference

pytestmark = pytest.mark.timeout(240)

FIXTURE = Path(__file__).resolve().parent.parent / "clients" / "conformance_server.py"
WATCHED = "test://watched-resource"
TEMPLATE = "test://template/{id}/data"
PROMPT = "cf__test_prompt_with_arguments"


@pytest.fixture(scope="module")
def fixture_url():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURE), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_http(url, proc=proc)
        yield url
    finally:
        stop_process(proc)


def _config(tmp_path: Path, fixture_url: str) -> Path:
    cfg = write_config(
        tmp_path,
        principals=[
            {"name": "alice", "token": ALICE},
            {"name": "carol", "token": CAROL, "upstreams": ["bk"]},
        ],
    )
    import json

    data = json.loads(cfg.read_text())
    data["mcpServers"]["cf"] = {"url": fixture_url, "protocol": "legacy"}
    data["sentinel"]["a2a"] = {**data["sentinel"].get("a2a", {}), "api_keys": {"rover": ROVER}}
    cfg.write_text(json.dumps(data))
    return cfg


ROVER = "rover-key-0123456789abcdef"  # another agent's A2A key (it reaches every tool a peer may)


async def _error_of(call) -> tuple[int, str]:  # noqa: ANN001
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value.error.code, caught.value.error.message


def _get(url: str, token: str | None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_principal_reaches_only_the_utilities_of_its_upstreams(tmp_path, fixture_url, mode):
    cfg = _config(tmp_path, fixture_url)
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, ALICE, mode) as alice, http_client(base, CAROL, mode) as carol:
            # alice may use cf: it lists, completes and subscribes
            assert WATCHED in {str(r.uri) for r in (await alice.list_resources()).resources}
            assert TEMPLATE in {
                t.uri_template for t in (await alice.list_resource_templates()).resource_templates
            }
            assert PROMPT in {p.name for p in (await alice.list_prompts()).prompts}
            done = await alice.complete(
                PromptReference(type="ref/prompt", name=PROMPT), {"name": "arg1", "value": "pa"}
            )
            assert done.completion.values == ["paris", "park", "party"]
            done = await alice.complete(
                ResourceTemplateReference(type="ref/resource", uri=TEMPLATE), {"name": "id", "value": "par"}
            )
            assert done.completion.values == ["paris", "park", "party"]
            assert (await alice.read_resource(WATCHED)).contents
            if mode == "legacy":
                await alice.subscribe_resource(WATCHED)
                await alice.unsubscribe_resource(WATCHED)

            # carol may use bk only: cf's prompts, templates and resources do not exist for her
            assert not (await carol.list_resources()).resources
            assert not (await carol.list_resource_templates()).resource_templates
            assert not [p for p in (await carol.list_prompts()).prompts if p.name.startswith("cf__")]
            for spelling in (PROMPT, "cf__no_such_prompt"):
                code, message = await _error_of(
                    carol.complete(
                        PromptReference(type="ref/prompt", name=spelling), {"name": "arg1", "value": "pa"}
                    )
                )
                assert message == f"unknown prompt: {spelling}"
                code2, _ = await _error_of(carol.get_prompt(spelling, {"arg1": "a", "arg2": "b"}))
                assert code2 == code
            for uri in (TEMPLATE, "test://no-such/{id}"):
                code, message = await _error_of(
                    carol.complete(
                        ResourceTemplateReference(type="ref/resource", uri=uri),
                        {"name": "id", "value": "par"},
                    )
                )
                assert code == -32002 and message == f"Resource not found: {uri}"
            for uri in (WATCHED, "test://static-text", "test://template/7/data", "test://no-such-resource"):
                code, message = await _error_of(carol.read_resource(uri))
                assert code == -32002 and message == f"Resource not found: {uri}", uri
                if mode == "legacy":
                    code, message = await _error_of(carol.subscribe_resource(uri))
                    assert code == -32002 and message == f"Resource not found: {uri}", uri

            if mode == "auto":
                # a listen stream names only what its principal may use: carol's filter keeps nothing of cf
                async with carol.listen(resource_subscriptions=[WATCHED, "test://no-such-resource"]) as sub:
                    assert not (sub.honored.resource_subscriptions or [])
                async with alice.listen(resource_subscriptions=[WATCHED]) as sub:
                    assert sub.honored.resource_subscriptions == [WATCHED]

        # /metrics: behind the token; a person reads its own calls' series only (carol's name no cf tool,
        # nor any upstream's figures), another agent nothing
        assert _get(f"{base}/metrics", None) == 401
        assert _get(f"{base}/metrics", ROVER) == 403
        assert _get(f"{base}/metrics", ALICE) == 200
        request = urllib.request.Request(f"{base}/metrics", headers={"Authorization": f"Bearer {CAROL}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            carols = response.read().decode()
        assert "cf__" not in carols and 'upstream="cf"' not in carols and "sentinel_upstream" not in carols
