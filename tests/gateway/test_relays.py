"""What an upstream asks during a call reaches the client whose call it is, and only that client: sampling,
roots, URL-mode elicitation (with its completion notice), progress around a question, log levels, resource
updates; refused with a clear error where that client lacks the capability. Both downstream eras, upstreams
in-process (a built-in, exact per-call routing) and over stdio; ``protocol: auto`` picks the era by itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import (
    CreateMessageResult,
    ElicitCompleteNotification,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    ResourceUpdatedNotification,
    Root,
    TextContent,
)

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.gateway.upstream import BuiltinTarget
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config, toolbox_stdio
from .relay_server import FORM, LINKS, NAMED_FORM, build_server, refuse_handshake

RELAY = str(Path(__file__).with_name("relay_server.py"))
MODES = ["legacy", "auto"]  # the client's era: handshake (pushed to) and 2026-07-28 (held calls)


def model(tag: str, seen: list[str] | None = None):  # noqa: ANN201
    async def sampling(ctx, params):  # noqa: ANN001
        if seen is not None:
            seen.append(params.messages[0].content.text)
        await anyio.sleep(0.02)
        return CreateMessageResult(
            role="assistant", model=tag, content=TextContent(type="text", text=f"model {tag}")
        )

    return sampling


async def mount_relay(rt, name: str = "rl", **kw):  # noqa: ANN001, ANN003, ANN201
    up = rt.manager.add(name, BuiltinTarget(server=kw.pop("server", None) or build_server(), **kw))
    assert await up.wait_ready(20), up.last_error
    return up


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_of_a_builtin_reaches_the_client_whose_call_it_is(data_dir, mode):
    """Concurrent calls from two clients to an in-process built-in: each sampling request goes to its own
    caller."""
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = await mount_relay(rt)
        assert not up.modern  # auto: the handshake, so the built-in can push
        seen_a: list[str] = []
        seen_b: list[str] = []
        async with (
            Client(rt.front.server, mode=mode, sampling_callback=model("A", seen_a)) as a,
            Client(rt.front.server, mode=mode, sampling_callback=model("B", seen_b)) as b,
        ):
            results: dict[str, str] = {}

            async def call(client: Client, tag: str) -> None:
                r = await client.call_tool("rl__sample", {"tag": tag})
                results[tag] = r.content[0].text

            async with anyio.create_task_group() as tg:
                for i in range(3):
                    tg.start_soon(call, a, f"a{i}")
                    tg.start_soon(call, b, f"b{i}")
        assert results == {
            **{f"a{i}": f"a{i}<-model A" for i in range(3)},
            **{f"b{i}": f"b{i}<-model B" for i in range(3)},
        }
        assert sorted(seen_a) == [f"prompt a{i}" for i in range(3)]
        assert sorted(seen_b) == [f"prompt b{i}" for i in range(3)]


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_and_roots_refused_clearly_without_the_capability(data_dir, mode):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_relay(rt)
        async with Client(rt.front.server, mode=mode) as c:
            r = await c.call_tool("rl__sample", {"tag": "x"})
            assert r.is_error and "sampling request cannot be relayed" in r.content[0].text
            assert "did not declare sampling" in r.content[0].text
            r = await c.call_tool("rl__roots", {})
            assert r.is_error and "roots request cannot be relayed" in r.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_roots_over_stdio_come_from_the_calling_client(data_dir, mode):
    cfg = make_config(data_dir, servers={"rl": forked_spec(RELAY)})
    async with running_gateway(cfg) as rt:

        async def roots(ctx):  # noqa: ANN001
            return ListRootsResult(roots=[Root(uri="file:///home/user/project", name="project")])

        async with Client(
            rt.front.server, mode=mode, list_roots_callback=roots, sampling_callback=model("S")
        ) as c:
            r = await c.call_tool("rl__roots", {})
            assert not r.is_error and r.content[0].text == "file:///home/user/project"
            r = await c.call_tool("rl__sample", {"tag": "s"})
            assert r.content[0].text == "s<-model S"


@pytest.mark.parametrize("mode", MODES)
async def test_url_elicitation_and_its_completion_reach_the_client(data_dir, mode):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_relay(rt)
        asked: list[ElicitRequestURLParams] = []
        completed: list[str] = []

        async def on_elicit(ctx, params):  # noqa: ANN001
            asked.append(params)
            return ElicitResult(action="accept")

        async def on_message(message):  # noqa: ANN001
            if isinstance(message, ElicitCompleteNotification):
                completed.append(message.params.elicitation_id)

        async with Client(
            rt.front.server, mode=mode, elicitation_callback=on_elicit, message_handler=on_message
        ) as c:
            r = await c.call_tool("rl__sign_in", {"tag": "1"})
            assert r.content[0].text == "sign_in:accept"
            with anyio.fail_after(5):
                while mode == "legacy" and not completed:
                    await anyio.sleep(0.02)
        assert isinstance(asked[0], ElicitRequestURLParams) and asked[0].url == "https://example.com/sign-in"
        if mode == "legacy":  # 2026-era clients get no standalone notices outside a listen stream
            assert completed == ["el-1"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_link_an_upstream_asks_to_open_is_marked_as_its_own_and_checked(data_dir, mode):
    """A URL-mode elicitation came through as the server wrote it: no mark of who asks (a server could send
    the user to its sign-in page in Sentinel's name), bidi overrides intact, and any link at all (javascript:,
    data:, file:, invisible characters). Now it is marked and shown safely as a question is, and a link that
    is not a plain web address is not shown (the user is told; the server hears an action, as from a link)."""
    cfg = make_config(data_dir, servers={"rl": forked_spec(RELAY)})
    async with running_gateway(cfg) as rt:
        asked: list[Any] = []

        async def on_elicit(ctx, params):  # noqa: ANN001
            asked.append(params)  # a form (the notice of a link not shown) is answered as a form is
            link = isinstance(params, ElicitRequestURLParams)
            return ElicitResult(action="accept", content=None if link else {})

        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            for i, (_, url) in enumerate(LINKS):
                r = await c.call_tool("rl__open_link", {"tag": str(i)})
                assert r.content[0].text == "open_link:accept", (i, r.content[0].text)
                shown = asked[-1]
                assert shown.message.startswith("[asked by the server rl, not by Sentinel] "), shown.message
                assert not any(is_hidden(ch) for ch in shown.message), shown.message
                if i <= 1:  # a plain web address: shown as it is
                    assert isinstance(shown, ElicitRequestURLParams) and shown.url == url
                else:
                    assert not isinstance(shown, ElicitRequestURLParams), (i, shown)
                    assert "Sentinel does not show the link" in shown.message and url not in shown.message


@pytest.mark.parametrize("mode", MODES)
async def test_the_words_of_an_upstreams_form_are_shown_safely(data_dir, mode):
    """A relayed question's text was made safe and marked, its form's words (a field's title and description,
    the labels of its choices) were not: a field could read "Sentinel: approve" behind a right-to-left
    override. Now they are shown safely too; values and names stay, so the answer fits as before."""
    cfg = make_config(data_dir, servers={"rl": forked_spec(RELAY)})
    async with running_gateway(cfg) as rt:
        asked: list[Any] = []

        async def on_elicit(ctx, params):  # noqa: ANN001
            asked.append(params)
            return ElicitResult(action="accept", content={"approve": True, "how": "a\u200bb", "which": "x"})

        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            r = await c.call_tool("rl__form_words", {"tag": "0"})
            assert r.content[0].text.startswith("form_words:accept:[('approve', True)"), r.content[0].text
        props = asked[0].requested_schema["properties"]
        words = [props["approve"]["title"], props["approve"]["description"], *props["how"]["enumNames"],
                 *(c["title"] for c in props["which"]["oneOf"])]
        assert all(not any(is_hidden(ch) for ch in w) for w in words), words
        assert "⟨U+202E⟩" in props["approve"]["title"]
        assert props["how"]["enum"] == FORM["properties"]["how"]["enum"]  # values as the server wrote them
        assert [c["const"] for c in props["which"]["oneOf"]] == ["x", "y"]


@pytest.mark.parametrize("mode", MODES)
async def test_the_names_of_an_upstreams_form_fields_are_shown_safely(data_dir, mode):
    """A field without a title is shown by its name: a name with hidden characters (a right-to-left
    override, a zero-width space, terminal escapes, tag characters) read as written. Each such field now has
    a title that shows its name marked (beside the title it had, if any); names stay as the server wrote
    them, so the answer reaches it under the names it asked, and a plain name is left alone."""
    cfg = make_config(data_dir, servers={"rl": forked_spec(RELAY)})
    names = list(NAMED_FORM["properties"])
    async with running_gateway(cfg) as rt:
        asked: list[Any] = []

        async def on_elicit(ctx, params):  # noqa: ANN001
            asked.append(params)
            return ElicitResult(action="accept", content={"ok": True, names[2]: "n"})

        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            r = await c.call_tool("rl__form_names", {"tag": "0"})
            assert r.content[0].text == f"form_names:accept:{sorted({'ok': True, names[2]: 'n'}.items())}", r
    props = asked[0].requested_schema["properties"]
    assert list(props) == names  # the names as written: the answer fits
    assert props["ok"] == {"type": "boolean"}  # a plain name: nothing added
    for name in names[1:]:
        title = props[name].get("title")
        assert isinstance(title, str) and not any(is_hidden(ch) or not ch.isprintable() for ch in title), (
            name, title)
        assert "⟨U+" in title, title  # the name's hidden characters, marked
    assert props[names[1]]["title"] == "⟨U+202E⟩evorppa" and props[names[2]]["title"] == "note⟨U+200B⟩"
    assert props[names[4]]["title"].startswith("Amount") and "⟨U+E0041⟩mount" in props[names[4]]["title"]
    assert props[names[5]]["title"].startswith("⟨U+2066⟩Tag")


async def test_progress_reaches_each_round_of_a_held_call(data_dir):
    """A 2026-era client, an upstream that pushes a question between progress reports: none is lost."""
    cfg = make_config(data_dir, servers={"rl": forked_spec(RELAY)})
    async with running_gateway(cfg) as rt:
        seen: list[tuple[float, str | None]] = []

        async def on_progress(p, total, message):  # noqa: ANN001
            seen.append((p, message))

        async def yes(ctx, params):  # noqa: ANN001
            return ElicitResult(action="accept", content={"ok": True})

        async with Client(rt.front.server, mode="auto", elicitation_callback=yes) as c:
            r = await c.call_tool("rl__progress_question", {}, progress_callback=on_progress)
            assert r.content[0].text == "progress_question:accept"
        assert [p for p, _ in seen] == [1, 2, 3], seen


@pytest.mark.parametrize("mode", MODES)
async def test_resource_updates_reach_subscribers_only(data_dir, mode):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_relay(rt)
        got: list[str] = []

        async def on_message(message):  # noqa: ANN001
            if isinstance(message, ResourceUpdatedNotification):
                got.append(message.params.uri)

        async with (
            Client(rt.front.server, mode="legacy", message_handler=on_message) as subscriber,
            Client(rt.front.server, mode=mode) as other,
        ):
            await subscriber.subscribe_resource("relay://watched")
            assert (await other.call_tool("rl__touch", {})).content[0].text == "touched 1"
            with anyio.fail_after(5):
                while not got:
                    await anyio.sleep(0.02)
            assert got == ["relay://watched"]
            await subscriber.unsubscribe_resource("relay://watched")
            assert (await other.call_tool("rl__touch", {})).content[0].text == "touched 0"
            with pytest.raises(Exception, match="not found"):
                await subscriber.subscribe_resource("relay://nowhere")


async def test_log_level_filters_what_is_relayed(data_dir):
    async with running_gateway(make_config(data_dir)) as rt:
        lines: list[str] = []

        async def on_log(params):  # noqa: ANN001
            lines.append(f"{params.level}:{params.data}")

        async with Client(rt.front.server, mode="legacy", logging_callback=on_log) as c:
            await c.call_tool("tb__chatty", {})
            await c.set_logging_level("warning")
            await c.call_tool("tb__chatty", {})
        assert lines == [
            "info:chatty: first line",
            "warning:chatty: second line",
            "warning:chatty: second line",
        ]
        # the upstream is asked for every line; the level is the connection's own
        # (tests/identity/test_log_levels_per_connection.py)
        assert rt.manager.upstreams["tb"].log_level == "debug"


async def test_auto_speaks_the_era_each_upstream_speaks(data_dir):
    """auto: the handshake for an upstream that has it (it may push), 2026-07-28 for one that refuses it."""
    servers = {
        "push": toolbox_stdio(protocol="auto"),
        "only2026": {**forked_spec(RELAY, "--modern-only"), "protocol": "auto"},
    }
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        push, only2026 = rt.manager.upstreams["push"], rt.manager.upstreams["only2026"]
        with anyio.fail_after(30):
            while push.state != "ready" or only2026.state != "ready":
                await anyio.sleep(0.05)
        assert not push.modern and only2026.modern
        inproc = await mount_relay(rt, "inproc", server=refuse_handshake(build_server()), protocol="auto")
        assert inproc.modern
        async with Client(rt.front.server, mode="legacy") as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"push__echo", "only2026__touch", "inproc__touch"} <= names
            assert (await c.call_tool("only2026__touch", {})).content[0].text == "touched 0"
