"""Plain 2026-07-28 ``tools/call`` params (``gateway/plain_calls.py``): whatever ``PlainCalls`` calls plain,
the SDK's kernel surface check accepts, and the connection it builds is the one ``Connection.from_envelope``
builds. A corpus of envelopes, names, arguments and ``_meta`` keys (hostile spellings among them) checks the
rule; the lean path's answers themselves are compared with the SDK's in ``test_lean_calls.py``."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from mcp.server.connection import Connection
from mcp_types import methods

from sentinel_mcp.gateway.plain_calls import MAX_KEY_CHARS, PlainCalls

PV, CI, CC = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo",
              "io.modelcontextprotocol/clientCapabilities")
INFOS: list[Any] = [None, {"name": "c", "version": "1"}, {"name": "c"}, {"name": 5, "version": "1"},
                    {"name": "c", "version": "1", "title": "T", "extra": [1]}, "text", [], {}, 3,
                    {"name": "\u202e", "version": "\ud800"}, {"name": "c", "version": "1", "icons": "x"}]
CAPS: list[Any] = [{}, {"elicitation": {"form": {}}}, {"elicitation": {"form": "no"}}, {"sampling": 1},
                   {"roots": {"listChanged": True}}, None, [], "all", {"experimental": {"x": {"y": None}}},
                   {"elicitation": {}, "unknown": {"a": 1}}]
NAMES: list[Any] = ["t", "", "a" * 5000, "\ud800", 5, None, ["t"]]
ARGUMENTS: list[Any] = ["absent", {}, {"a": [1, {"b": None}]}, None, [], "x", 1]
EXTRA_META: list[dict[str, Any]] = [
    {}, {"sentinel/session": "s"}, {"sentinel/purpose": "p", "sentinel/x": ""}, {"sentinel/session": 5},
    {"sentinel/session": None}, {"progressToken": 1}, {"io.modelcontextprotocol/logLevel": "debug"},
    {"traceparent": "00-1"}, {"other": "x"}]


def params_corpus() -> list[dict[str, Any]]:
    out = []
    for info, caps in itertools.product([*INFOS, "absent"], [*CAPS, "absent"]):
        meta: dict[str, Any] = {PV: "2026-07-28"}
        if info != "absent":
            meta[CI] = info
        if caps != "absent":
            meta[CC] = caps
        out.append({"name": "t", "arguments": {}, "_meta": meta})
    base = {PV: "2026-07-28", CI: {"name": "c", "version": "1"}, CC: {}}
    for name, arguments, extra in itertools.product(NAMES, ARGUMENTS, EXTRA_META):
        p: dict[str, Any] = {"name": name, "_meta": {**base, **extra}}
        if arguments != "absent":
            p["arguments"] = arguments
        out.append(p)
    for key, value in (("inputResponses", {}), ("requestState", "s"), ("task", {}), ("x", 1)):
        out.append({"name": "t", "arguments": {}, "_meta": base, key: value})
    out += [{"name": "t", "_meta": {**base, PV: "2025-11-25"}}, {"name": "t", "_meta": "m"}]
    return out


def sdk_accepts(params: dict[str, Any]) -> bool:
    try:
        methods.validate_client_request("tools/call", "2026-07-28", params)
        return True
    except ValueError:
        return False


def test_plain_params_are_params_the_kernel_accepts() -> None:
    plain = PlainCalls()
    taken = refused = 0
    for params in params_corpus():
        connection = plain.connection(params)
        if connection is None:
            refused += 1
            continue
        taken += 1
        assert sdk_accepts(params), params
        meta = params["_meta"]
        theirs = Connection.from_envelope("2026-07-28", meta.get(CI), meta.get(CC))
        assert connection.protocol_version == theirs.protocol_version == "2026-07-28"
        assert connection.client_params == theirs.client_params, params
        assert connection.client_capabilities == theirs.client_capabilities, params
        assert connection.initialized.is_set() and not connection.exit_stack._exit_callbacks
        assert connection is not plain.connection(params)  # one connection per request
    assert taken > 50 and refused > 50


def test_a_plain_connection_is_the_one_from_envelope_builds_attribute_by_attribute() -> None:
    """``PlainCalls`` builds its connections without ``Connection.__init__`` (no ``anyio.Event()`` look-up):
    on the event loop, as the lean paths run, every attribute ``from_envelope`` sets is there, equal, of the
    same type, and nothing else; an SDK that adds one fails here. Connections share nothing mutable."""
    import asyncio

    from mcp.server.connection import _NO_CHANNEL

    async def compare() -> int:
        plain, seen = PlainCalls(), 0
        for params in params_corpus():
            for outbound in (_NO_CHANNEL, object()):
                ours = plain.connection(params, outbound)
                if ours is None:
                    continue
                seen += 1
                meta = params["_meta"]
                theirs = Connection.from_envelope("2026-07-28", meta.get(CI), meta.get(CC), outbound=outbound)
                mine, sdk = dict(vars(ours)), dict(vars(theirs))
                assert mine.keys() == sdk.keys(), params
                for key in ("initialized", "exit_stack"):
                    assert type(mine.pop(key)) is type(sdk.pop(key))
                assert mine == sdk, params
                assert ours.outbound is outbound and ours.client_params == theirs.client_params
                assert ours.initialized.is_set() and theirs.initialized.is_set()
                assert not ours.exit_stack._exit_callbacks
                again = plain.connection(params, outbound)
                assert again is not None and again.state is not ours.state
                assert again.initialized is not ours.initialized and again.exit_stack is not ours.exit_stack
        return seen

    assert asyncio.run(compare()) > 100


def test_what_the_kernel_refuses_is_never_plain() -> None:
    plain = PlainCalls()
    for params in params_corpus():
        if not sdk_accepts(params):
            assert plain.connection(params) is None, params


def test_the_verdicts_kept_are_bounded() -> None:
    plain = PlainCalls(capacity=4)
    for i in range(20):
        meta = {PV: "2026-07-28", CI: {"name": f"c{i}", "version": "1"}, CC: {}}
        assert plain.connection({"name": "t", "_meta": meta}) is not None
        assert len(plain._kept) <= 4
    big = {PV: "2026-07-28", CI: {"name": "c" * MAX_KEY_CHARS, "version": "1"}, CC: {}}
    assert plain.connection({"name": "t", "_meta": big}) is None  # checked by the kernel each time instead
    assert all(len(key) <= MAX_KEY_CHARS for key in plain._kept)


@pytest.mark.parametrize("caps", [{"elicitation": {"form": "no"}}, None, "all"])
def test_a_refused_envelope_is_remembered_as_refused(caps: Any) -> None:
    plain = PlainCalls()
    params = {"name": "t", "_meta": {PV: "2026-07-28", CC: caps}}
    assert plain.connection(params) is None
    assert list(plain._kept.values()) == [None]
    assert plain.connection(params) is None and len(plain._kept) == 1


def test_the_meta_of_plain_params_is_a_copy_of_their_meta() -> None:
    """The lean path hands the kernel's context ``dict(params["_meta"])`` for plain params: what the kernel's
    ``_extract_meta`` would give."""
    from mcp.server.runner import _extract_meta

    plain = PlainCalls()
    seen = 0
    for params in params_corpus():
        if plain.connection(params) is not None:
            seen += 1
            assert _extract_meta(params) == dict(params["_meta"]), params
    assert seen > 50


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_the_server_info_stamp_is_the_sdks(version: str) -> None:
    """The lean runner stamps 2026 answers with one copy of the server's identity per server: the same
    values, in the same places, as the SDK's runner (which deep-copies it per answer)."""
    from mcp.server import Server
    from mcp.server.runner import ServerRunner

    from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner

    server = Server("s", version="9", title="T", website_url="https://example.org")
    connection = Connection.from_envelope("2026-07-28", None, {})
    ours, sdk = UnspannedRunner(server, connection, None), ServerRunner(server, connection, None)
    key = "io.modelcontextprotocol/serverInfo"
    for result in ({}, {"content": []}, {"_meta": {"a": 1}}, {"_meta": {key: None, "b": 2}},
                   {"_meta": {key: {"name": "handler's"}}}, {"_meta": "not a dict"}, {"_meta": None}):
        a = ours._stamp_server_info(version, json_copy(result))
        b = sdk._stamp_server_info(version, json_copy(result))
        assert a == b, result
    stamped = ours._stamp_server_info("2026-07-28", {})
    assert stamped["_meta"][key] == server.server_info_stamp
    assert ours._stamp_server_info("2026-07-28", {})["_meta"][key] is stamped["_meta"][key]  # made once


def json_copy(value: Any) -> Any:
    import json

    return json.loads(json.dumps(value))


def _sdk_connection(outbound: Any, kept: Connection) -> Connection:
    """What the plain path built before: the SDK's constructor, then the capabilities and the event set."""
    connection = Connection(outbound, protocol_version="2026-07-28", client_params=kept.client_params)
    connection.client_capabilities = kept.client_capabilities
    connection.initialized.set()
    return connection


def test_the_plain_connection_is_the_sdk_constructors_attribute_for_attribute() -> None:
    """The connection is built without anyio's look-up of the running library (``quick_event.py``): the same
    attributes, in the same order, equal values, its own event (set, of anyio's asyncio class), state and
    exit stack; a change of the SDK's ``Connection.__init__`` fails here."""
    import asyncio

    async def check() -> int:
        plain, outbound, seen = PlainCalls(), object(), 0
        for params in params_corpus():
            ours = plain.connection(params, outbound=outbound)
            if ours is None:
                continue
            seen += 1
            theirs = _sdk_connection(outbound, ours)
            assert list(vars(ours)) == list(vars(theirs)), params
            for key, value in vars(theirs).items():
                mine = vars(ours)[key]
                if key == "initialized":
                    assert type(mine) is type(value) and mine.is_set() and value.is_set()
                elif key == "exit_stack":
                    assert type(mine) is type(value) and not mine._exit_callbacks  # type: ignore[attr-defined]
                elif key == "state":
                    assert mine == value == {} and mine is not value
                else:
                    assert mine == value and type(mine) is type(value), (key, params)
            again = plain.connection(params, outbound=outbound)
            assert again is not None and again.initialized is not ours.initialized
            assert again.state is not ours.state and again.exit_stack is not ours.exit_stack
        return seen

    assert asyncio.run(check()) > 50


HANDSHAKE_ARGUMENTS: list[Any] = [
    "absent", {}, {"a": [1, {"b": None}]}, {"x": 1.5, "y": True, "z": "\u202e\ud800", "": -(10 ** 30)},
    {"deep": {"a": {"b": {"c": [[[]]]}}}}, None, [], "x", 1, True]
HANDSHAKE_NAMES: list[Any] = [
    "t", "", "a" * 5000, "\ud800", "tb__echo", " ", "\x00", 5, None, ["t"], True, 1.5]
HANDSHAKE_EXTRA: list[dict[str, Any]] = [
    {}, {"_meta": {}}, {"_meta": {"progressToken": 1}}, {"_meta": {PV: "2026-07-28"}}, {"task": {}},
    {"task": None}, {"x": 1}, {"_meta": None}, {"inputResponses": {}}]


def handshake_corpus() -> list[Any]:
    out: list[Any] = []
    for name, arguments, extra in itertools.product(HANDSHAKE_NAMES, HANDSHAKE_ARGUMENTS, HANDSHAKE_EXTRA):
        p: dict[str, Any] = {"name": name, **extra}
        if arguments != "absent":
            p["arguments"] = arguments
        out.append(p)
    return [*out, {}, {"arguments": {}}, None, [], "params", {"name": "t", "arguments": {}, 5: 1}]


def test_plain_handshake_params_pass_the_sdks_surface_check_on_every_handshake_version() -> None:
    """Whatever ``plain_handshake_params`` calls plain, the SDK's surface check of a handshake-era tools/call
    accepts, on every handshake version; the corpus holds params of both kinds, and anything else (a modern
    version, no version, a version the SDK does not serve) is never plain."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from sentinel_mcp.gateway.plain_calls import plain_handshake_params

    corpus = handshake_corpus()
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        plain = [p for p in corpus if plain_handshake_params(p, version)]
        assert len(plain) == 7 * 5  # the string names x the object (or absent) arguments, with nothing else
        for p in plain:
            methods.validate_client_request("tools/call", version, p)  # raises if the SDK refuses it
        refused = 0
        for p in corpus:
            if not plain_handshake_params(p, version):
                try:
                    methods.validate_client_request("tools/call", version, p)
                except (ValueError, TypeError, KeyError):
                    refused += 1
        assert refused > 100  # the corpus holds what the SDK refuses; none of it is plain
    for version in ("2026-07-28", None, "", "2099-01-01", 5):
        assert not any(plain_handshake_params(p, version) for p in corpus), version


def test_a_plain_handshake_call_runs_the_kernel_without_its_surface_check_and_others_with_it() -> None:
    """``session_dispatch.handler_of``: the checked kernel for plain params, the runner's own otherwise."""
    from mcp.server.lowlevel.server import Server
    from mcp_types import JSONRPCRequest

    from sentinel_mcp.app.session_dispatch import handler_of
    from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner

    for version, params, checked in (
        ("2025-11-25", {"name": "t", "arguments": {"a": 1}}, True), ("2025-06-18", {"name": "t"}, True),
        ("2025-11-25", {"name": "t", "arguments": None}, False),
        ("2025-11-25", {"name": "t", "arguments": {}, "_meta": {"sentinel/x": "y"}}, False),
        ("2025-11-25", {"name": 5, "arguments": {}}, False), (None, {"name": "t", "arguments": {}}, False),
    ):
        connection = Connection(None, protocol_version=version)
        runner = UnspannedRunner(Server("plain"), connection, None)
        request = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params=params)
        handler = handler_of(runner, request)
        assert (handler is not runner.on_request) is checked, (version, params)
        other = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/list", params=params)
        assert handler_of(runner, other) is runner.on_request
