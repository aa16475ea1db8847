"""An upstream's tool schemas are outside input (core/outside_schema.py): the gateway's argument check
never fetches a ``$ref`` (URL or file), never runs a pattern with a backtracking engine, never checks
``uniqueItems`` pairwise. A schema it cannot check that way is the upstream's to judge: the call goes on,
and is recorded."""

from __future__ import annotations

import http.server
import json
import sys
import threading

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.audit import read_audit

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)
# with a backtracking engine, ^([a-z ]+)+$ against this takes 2^60 steps; RE2 answers at once
HOURS = "find me the cheapest flights to lisbon and porto in june now?"


class Listener:
    """A real HTTP server on 127.0.0.1 that counts every request made to it (it must stay at zero)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                listener.requests.append(self.path)
                body = json.dumps({"const": "from-the-network"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/schema.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    one = Listener()
    yield one
    one.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_hostile_schemas_are_never_fetched_nor_backtracked(data_dir, tmp_path, listener, mode):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"s": {"const": "TOPSECRET-43"}}))
    env = {"REF_URL": listener.url, "REF_FILE": str(secret), "PYTHONPATH": str(sys.path[0])}
    servers = {"ev": {"command": sys.executable, "args": ["-m", "tests.gateway.schema_upstream"], "env": env},
               "tb": toolbox_stdio()}
    with anyio.fail_after(80):
        async with running_gateway(make_config(data_dir, servers)) as rt, \
                Client(rt.front.server, mode=mode) as c:
            for tool in ("url_ref", "file_ref"):
                r = await c.call_tool(f"ev__{tool}", {"q": "x"})
                # nothing fetched or read: the schema is unusable here, so the upstream judges its own input
                assert not r.is_error and json.loads(r.content[0].text) == {"q": "x"}, r.content[0].text
                assert "TOPSECRET" not in r.content[0].text
            for text in (HOURS, HOURS[:-1]):  # '?' does not match: a backtracking engine tries every split
                r = await c.call_tool("ev__search", {"q": text})
                assert r.is_error == text.endswith("?"), r.content[0].text  # checked, in linear time
            keys = HOURS.replace(" ", "")  # one key that matches (its value is checked), one that backtracks
            r = await c.call_tool("ev__keyed", {keys[:-1]: "not a number", keys: "anything"})
            assert r.is_error and "not a number" in r.content[0].text
            # additionalProperties finds the keys no pattern matches: with RE2 too (jsonschema's own look-up
            # ran the patterns with Python's re: 2^50 steps for this key)
            r = await c.call_tool("ev__closed", {keys: 1})
            assert r.is_error and "does not match any of the regexes" in r.content[0].text, r.content[0].text
            assert not (await c.call_tool("ev__closed", {keys[:-1]: 1})).is_error
            # unevaluatedProperties' look-up cannot be given RE2: unusable here, so the upstream judges
            r = await c.call_tool("ev__unevaluated", {keys: 1})
            assert not r.is_error and json.loads(r.content[0].text) == {keys: 1}
            r = await c.call_tool("ev__lookaround", {"q": "b"})  # RE2 cannot run it: the upstream judges
            assert not r.is_error
            r = await c.call_tool("ev__distinct", {"items": [{"k": i} for i in range(30_000)]})
            assert not r.is_error  # linear, not 4.5e8 pairwise comparisons
            r = await c.call_tool("ev__distinct", {"items": [{"k": 1}, {"k": 1.0}]})
            assert r.is_error and "non-unique" in r.content[0].text
            assert (await c.call_tool("tb__echo", {"text": "still here"})).content[0].text == "still here"
            rows = await read_audit(rt.config.store_path, tail=50)
    assert listener.requests == []
    called = [r["tool"] for r in rows]
    for tool in ("ev__url_ref", "ev__file_ref", "ev__search", "ev__keyed", "ev__closed", "ev__unevaluated",
                 "ev__lookaround", "ev__distinct"):
        assert tool in called, (tool, called)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_schema_that_fans_out_is_refused_and_recorded_while_others_go_on(data_dir, mode):
    env = {"PYTHONPATH": str(sys.path[0])}
    servers = {"ev": {"command": sys.executable, "args": ["-m", "tests.gateway.schema_upstream"], "env": env},
               "tb": toolbox_stdio()}
    with anyio.fail_after(80):
        async with running_gateway(make_config(data_dir, servers)) as rt, \
                Client(rt.front.server, mode=mode) as alice, Client(rt.front.server, mode=mode) as bob:
            answers: dict[str, object] = {}

            async def fan(value: object) -> None:
                answers[repr(value)[:20]] = await alice.call_tool("ev__fanout", {"q": value})

            async def echo() -> None:
                answers["bob"] = await bob.call_tool("tb__echo", {"text": "still here"})

            async with anyio.create_task_group() as tg:  # with a check of 2^40 steps, neither would finish
                tg.start_soon(fan, "x")
                tg.start_soon(fan, "x" * 100_000)
                tg.start_soon(echo)
            assert answers["bob"].content[0].text == "still here"
            for key in ("'x'", repr("x" * 100_000)[:20]):
                text = answers[key].content[0].text
                assert answers[key].is_error and "cannot be checked against the tool's schema" in text, text
            r = await alice.call_tool("ev__fanout", {"q": 7})  # a value the check can settle: it goes on
            assert not r.is_error and json.loads(r.content[0].text) == {"q": 7}
            rows = await read_audit(rt.config.store_path, tail=50)
    refused = [r for r in rows if r["tool"] == "ev__fanout"]
    assert len(refused) >= 3, refused  # every call recorded, the refusals too


async def test_a_wide_enum_or_const_is_paid_for_by_its_comparisons(data_dir):
    """An upstream's enum of a million values (7 MB of listing) held the event loop ~0.4-0.9 s on every call
    with a value it allows, and an enum of 10,000 lists 2 s for an argument of 30 items, within every bound:
    a scalar is now one look-up in the enum's set, and a check of a value of many nodes that costs more than
    the value's size allows is refused before it runs (a check that cannot be had denies); a plain enum and
    const are checked as before, and an error quotes a long allowed value by its outline only."""
    root = str(__import__("pathlib").Path(__file__).parents[2])
    wide = {"command": sys.executable, "args": ["-m", "tests.gateway.wide_value_upstream"], "cwd": root}
    async with running_gateway(make_config(data_dir, servers={"wd": wide})) as rt:
        assert await rt.manager.upstreams["wd"].wait_ready(60), rt.manager.upstreams["wd"].last_error
        async with Client(rt.front.server, mode="legacy") as c:
            # a scalar is one look-up in the enum's set (made once, when the validator is compiled off the
            # event loop): allowed or refused at once; a value of many nodes still pays each comparison
            assert (await c.call_tool("wd__pick", {"x": 999_999})).content[0].text == "ran"
            r = await c.call_tool("wd__pick", {"x": 1_000_000})
            assert r.is_error and "is not one of" in r.content[0].text, r.content[0].text[:300]
            r = await c.call_tool("wd__sets", {"x": [[*range(99), 9_999]] * 30})
            assert r.is_error and "cannot be checked against the tool's schema" in r.content[0].text
            # 20,000 subschemas: the metaschema check alone held the event loop ~4 s on the first call (and
            # 200,000 of them 47 s); past MAX_SUBSCHEMAS the schema is unusable here: the upstream judges
            assert (await c.call_tool("wd__broad", {"p0": "not a number"})).content[0].text == "ran"
            r = await c.call_tool("wd__few", {"x": {"c": [1]}, "y": ["kept", 1]})
            assert r.content[0].text == "ran"
            assert (await c.call_tool("wd__same", {"x": list(range(10_000))})).content[0].text == "ran"
            for args, said in (({"x": "z"}, "'z' is not one of ['a', 'b', {'c': [1]}]"),
                               ({"y": ["kept", 2]}, "['kept', 1] was expected")):
                r = await c.call_tool("wd__few", args)
                assert r.is_error and said in r.content[0].text, r.content[0].text
            r = await c.call_tool("wd__same", {"x": list(range(9_999)) + [0]})
            assert r.is_error and "was expected" in r.content[0].text and "9998" not in r.content[0].text
