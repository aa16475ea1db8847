"""A unit layer for the engine's pieces, beside the subprocess tests: the catalog, the circuit breaker and the
wire limits, in-process and without servers (each hostile shape in several spellings)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mcp.types import Tool

from sentinel_mcp.core import wire_limits
from sentinel_mcp.core.wire_limits import INVALID_REQUEST, PARSE_ERROR, WireError, parse_message
from sentinel_mcp.gateway import circuit_breaker
from sentinel_mcp.gateway.catalog import MAX_NAME, Catalog, exposed_name


def _up(name: str, tools: list[str], prefix: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, prefix=prefix, prompts=[], resources=[], resource_templates=[],
                           builtin=False,
                           tools={t: Tool(name=t, input_schema={"type": "object"}) for t in tools})


# ---------------------------------------------------------------------------------------------- the catalog

def test_tools_are_exposed_under_their_prefix_and_routed_back():
    catalog = Catalog()
    catalog.rebuild([_up("bk", ["list", "cancel"]), _up("phone", ["list"], prefix="p")])
    assert set(catalog.tools) == {"bk__list", "bk__cancel", "p__list"}
    route = catalog.route("p__list")
    assert (route.upstream, route.tool, route.identity) == ("phone", "list", "phone__list")
    assert catalog.route("phone__list") is None  # an identity is not an exposed name...
    assert catalog.route("phone__list", by_identity=True) is route  # ...unless asked for by identity


@pytest.mark.parametrize(
    "name",
    [
        "bk__LIST",
        "bk__list ",
        " bk__list",
        "bk_list",
        "bk__list\u200b",
        "",
        "__list",
        "bk__",
        "bk__list__",
        "BK__list",
    ],
)
def test_near_names_route_nowhere(name):
    catalog = Catalog()
    catalog.rebuild([_up("bk", ["list"])])
    assert catalog.route(name) is None


def test_a_tool_that_would_shadow_another_servers_name_is_withheld():
    catalog = Catalog()
    # server "a" with an empty prefix offers a tool literally named like b's tool
    catalog.rebuild([_up("a", ["b__x"], prefix=""), _up("b", ["x"])])
    assert catalog.route("b__x").upstream == "b"
    assert catalog.conflicts and "withheld" in catalog.conflicts[0]


@pytest.mark.parametrize("tool", ["x" * 200, "y" * 61, "a b/c;d" * 20, "\u00e9" * 80])
def test_long_or_odd_names_stay_within_the_limit_and_distinct(tool):
    name = exposed_name("srv", tool)
    other = exposed_name("srv", tool + "z")
    assert len(name) <= MAX_NAME and len(other) <= MAX_NAME and name != other


def test_a_rebuild_bumps_the_version_and_drops_vanished_tools():
    catalog = Catalog()
    catalog.rebuild([_up("bk", ["list", "cancel"])])
    first = catalog.version
    catalog.rebuild([_up("bk", ["list"])])
    assert catalog.version == first + 1 and catalog.route("bk__cancel") is None


# -------------------------------------------------------------------------------------- the circuit breaker


def test_the_breaker_opens_half_opens_for_one_probe_and_closes(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(circuit_breaker.time, "monotonic", lambda: now[0])
    b = circuit_breaker.CircuitBreaker(failure_threshold=3, cooldown=10.0)
    for _ in range(2):
        b.record_failure()
    assert b.state == "closed" and b.allow()
    b.record_failure()
    assert b.state == "open" and not b.allow() and b.retry_after() == 10.0
    now[0] += 10.0
    assert b.state == "half_open" and b.allow() and not b.allow()  # exactly one probe
    b.record_failure()  # the probe failed: open again, for a whole cool-down
    assert b.state == "open" and b.retry_after() == 10.0
    now[0] += 10.0
    assert b.allow()
    b.record_success()
    assert b.state == "closed" and b.failures == 0 and b.allow() and b.allow()


# ------------------------------------------------------------------------------------------- the wire limits


@pytest.mark.parametrize(
    "raw,code",
    [
        (b"{", PARSE_ERROR),
        (b"\xff\xfe{}", PARSE_ERROR),
        (b"[" * 100 + b"]" * 100, INVALID_REQUEST),
        (b"[]", INVALID_REQUEST),
        (b"[{}]", INVALID_REQUEST),
        (b"1", INVALID_REQUEST),
        (b'"x"', INVALID_REQUEST),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "x"}', INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"}', INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "x"}', INVALID_REQUEST),
    ],
)
def test_malformed_messages_get_a_json_rpc_error(raw, code):
    with pytest.raises(WireError) as caught:
        parse_message(raw)
    assert caught.value.code == code
    response = caught.value.response()
    assert response["jsonrpc"] == "2.0" and response["error"]["code"] == code


def test_an_oversized_message_is_refused_before_it_is_parsed():
    with pytest.raises(WireError) as caught:
        parse_message(b" " * (wire_limits.MAX_MESSAGE_BYTES + 1))
    assert caught.value.code == INVALID_REQUEST and "larger than" in str(caught.value.response())


def test_a_good_message_passes():
    assert parse_message(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}')["id"] == 7
