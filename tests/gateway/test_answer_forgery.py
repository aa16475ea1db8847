"""Approvals only the user can give, through the real gateway and the real mcp Client (both eras).

Every attempt below must be refused with a clear reason, audited as ``answer_refused``, and leave no side
effect: the toolbox's ``write_marker`` (destructive) appends to a file, and that file must not appear.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult, Implementation

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.core.call_meta import SESSION_KEY as SESSION_META
from sentinel_mcp.core.decision import argument_digest
from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
MODES = ["legacy", "auto"]
YES = ElicitResult(action="accept", content={"approve": True})


async def always_yes(ctx: Any, params: Any) -> ElicitResult:
    return YES


async def always_decline(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


def is_input_required(r: Any) -> bool:
    return type(r).__name__ == "InputRequiredResult"


def text(r: Any) -> str:
    return r.content[0].text


async def first_round(c: Client, args: dict[str, Any], tool: str = "tb__write_marker") -> Any:
    r = await c.session.call_tool(tool, args, allow_input_required=True)
    assert is_input_required(r), r
    return r


async def answer(c: Client, args: dict[str, Any], responses: dict[str, Any] | None, state: str | None,
                 tool: str = "tb__write_marker", session: str | None = None) -> Any:
    """``session``: the conversation the client carries (``_meta["sentinel/session"]``); without it, a
    2026-era
    answer continues the conversation its state names."""
    return await c.session.call_tool(
        tool,
        args,
        allow_input_required=True,
        input_responses=responses,
        request_state=state,
        meta={SESSION_META: session} if session else None,
    )


async def refused_rows(rt: Any) -> list[dict[str, Any]]:
    await rt.audit.flush()
    return [r for r in await read_audit(rt.config.store_path, tail=500) if r["outcome"] == "answer_refused"]


def confirm_key(args: dict[str, Any]) -> str:
    return f"sentinel.confirm.{argument_digest(args)}"


def tampered(state: str) -> list[str]:
    """A genuine state, altered in the ways a client could try."""
    body = state[len("sentinel2.") :]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    payload = json.loads(raw[32:])
    flipped = bytearray(raw)
    flipped[-5] ^= 0x01
    rewritten = {**payload, "exp": payload["exp"] + 3600}
    return [
        state[:-3],  # truncated
        state + "AA",  # extended
        "sentinel2." + base64.urlsafe_b64encode(bytes(flipped)).decode().rstrip("="),  # one bit of the body
        "sentinel2."
        + base64.urlsafe_b64encode(raw[:32] + json.dumps(rewritten).encode()).decode(),  # new body
        "sentinel2." + base64.urlsafe_b64encode(b"\0" * 32 + raw[32:]).decode(),  # zeroed MAC
        "sentinel1." + body,  # the old format's prefix
        json.dumps(payload),  # the payload in clear
    ]


async def test_minted_and_forged_answers_are_refused_and_audited(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "minted"}
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with (
            Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c,
            Client(
                rt.front.server,
                mode="auto",
                elicitation_callback=always_yes,
                client_info=Implementation(name="someone-else", version="1"),
            ) as other,
        ):
            attempts: list[tuple[dict[str, Any], str | None, str]] = [
                ({confirm_key(args): YES}, None, "without a request state"),  # no state at all
                ({confirm_key(args): YES}, "", "without a request state"),
                (
                    {"confirm." + argument_digest(args): YES},
                    None,
                    "without a request state",
                ),  # unprefixed key
            ]
            for forged in [
                "sentinel1.forged",
                "sentinel2.",
                "sentinel2.AAAA",
                "sentinel2.%%%",
                "x" * 300_000,
                "sentinel2." + "A" * 80,
            ]:
                attempts.append(({confirm_key(args): YES}, forged, "did not issue"))
            genuine = await first_round(c, args)
            key = next(iter(genuine.input_requests))
            assert key == confirm_key(args)
            for forged in tampered(genuine.request_state):
                attempts.append(({key: YES}, forged, "did not issue"))
            # a genuine state, but for another tool, other arguments, or other keys
            delete_state = (await first_round(c, {"name": "a"}, "tb__delete_thing")).request_state
            attempts.append(({key: YES}, delete_state, "another tool"))
            other_args = await first_round(c, {**args, "text": "other"})
            attempts.append(({confirm_key(args): YES}, other_args.request_state, "other arguments"))
            attempts.append(({"sentinel.confirm.0000000000000000": YES}, genuine.request_state, "not asked"))
            attempts.append(
                ({key: YES, "sentinel.policy.confirm.x": YES}, genuine.request_state, "not asked")
            )
            attempts.append(({key: YES, "upstream.held.1": YES}, genuine.request_state, "not asked"))
            # a genuine state of another conversation (another client), used by a client in its own
            # conversation
            theirs = await first_round(other, args)
            mine = (genuine.meta or {})[SESSION_META]  # the conversation c's questions were asked in
            attempts.append(({key: YES}, theirs.request_state, "another conversation"))

            for responses, state, why in attempts:
                r = await answer(
                    c, args, responses, state, session=mine if state == theirs.request_state else None
                )
                assert not is_input_required(r) and r.is_error, (state, r)
                assert why in text(r) and "not accepted" in text(r), (why, text(r))
            assert not marker.exists()
            assert len(await refused_rows(rt)) == len(attempts)
            # none of this used up the owners' states: each owner's own answer still counts, once
            assert not (await answer(other, args, {key: YES}, theirs.request_state)).is_error
            assert marker.read_text() == "minted\n"
            assert not (await answer(c, args, {key: YES}, genuine.request_state)).is_error
            assert marker.read_text() == "minted\nminted\n"


async def test_replayed_answers_and_replayed_continuations_are_refused(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "once"}
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            first = await first_round(c, args)
            key = next(iter(first.input_requests))
            assert not (await answer(c, args, {key: YES}, first.request_state)).is_error
            assert marker.read_text() == "once\n"
            for _ in range(3):  # the same answer again: refused, the tool does not run again
                r = await answer(c, args, {key: YES}, first.request_state)
                assert r.is_error and "already used" in text(r), text(r)
            assert marker.read_text() == "once\n"
            # the confirmation was used by that one call: the same call asks again
            assert is_input_required(
                await c.session.call_tool("tb__write_marker", args, allow_input_required=True)
            )

            # a call whose upstream asks for input: Sentinel's "allowed" continuation is single use too
            words = data_dir / "words.txt"
            wargs = {"path": str(words)}
            ours = await first_round(c, wargs, "tb__write_marker_asking")
            up = await answer(
                c,
                wargs,
                {next(iter(ours.input_requests)): YES},
                ours.request_state,
                "tb__write_marker_asking",
            )
            assert is_input_required(up) and list(up.input_requests) != list(ours.input_requests)
            ukey = next(iter(up.input_requests))
            assert "[toolbox] a word to write into" in up.input_requests[ukey].params.message
            word = ElicitResult(action="accept", content={"word": "blue"})
            # refused first: other arguments, an answer that does not fit the upstream's question, extra keys
            r = await answer(
                c,
                {"path": str(data_dir / "elsewhere.txt")},
                {ukey: word},
                up.request_state,
                "tb__write_marker_asking",
            )
            assert r.is_error and "other arguments" in text(r)
            r = await answer(c, wargs, {ukey: word, key: YES}, up.request_state, "tb__write_marker_asking")
            assert r.is_error and "not asked" in text(r)
            done = await answer(c, wargs, {ukey: word}, up.request_state, "tb__write_marker_asking")
            assert not done.is_error and text(done) == "wrote blue"
            for _ in range(3):
                r = await answer(c, wargs, {ukey: word}, up.request_state, "tb__write_marker_asking")
                assert r.is_error and "already used" in text(r)
            assert words.read_text() == "blue\n" and not (data_dir / "elsewhere.txt").exists()
            # an answer of the wrong type for the upstream's own question is refused too (and uses the state)
            ours = await first_round(c, wargs, "tb__write_marker_asking")
            up = await answer(
                c,
                wargs,
                {next(iter(ours.input_requests)): YES},
                ours.request_state,
                "tb__write_marker_asking",
            )
            for bad in ({"word": 5}, {"word": "x", "more": "y"}, {}):
                r = await answer(
                    c,
                    wargs,
                    {ukey: ElicitResult(action="accept", content=bad)},
                    up.request_state,
                    "tb__write_marker_asking",
                )
                assert r.is_error and "not accepted" in text(r), text(r)
            assert words.read_text() == "blue\n"
        assert len(await refused_rows(rt)) == 3 + 2 + 3 + 3


@pytest.mark.parametrize("with_elicitation", [True, False])
async def test_handshake_clients_cannot_answer_through_input_responses(
    data_dir: Path, with_elicitation: bool
) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "handshake"}
    kw = {"elicitation_callback": always_decline} if with_elicitation else {}
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as modern:
            genuine = await first_round(modern, args)  # a real state exists, for a 2026 conversation
        async with Client(rt.front.server, mode="legacy", **kw) as c:
            for state in (None, "sentinel2.AAAA", genuine.request_state):
                r = await c.session.call_tool(
                    "tb__write_marker", args, input_responses={confirm_key(args): YES}, request_state=state
                )
                assert r.is_error and "handshake" in text(r), text(r)
        # a 2026 client that never declared elicitation is never asked, so it cannot answer either
        async with Client(rt.front.server, mode="auto") as c:
            r = await answer(c, args, {confirm_key(args): YES}, genuine.request_state)
            assert r.is_error and "elicitation capability" in text(r), text(r)
        assert not marker.exists()
        assert len(await refused_rows(rt)) == 4


BAD_APPROVALS: list[dict[str, Any]] = [
    {"approve": "false"},
    {"approve": "true"},
    {"approve": "yes"},
    {"approve": "True"},
    {"approve": 1},
    {"approve": 0},
    {"approve": "1"},
    {"approve": 1.0},
    {"approve": None},
    {"approve": ["true"]},
    {},
    {"approve": True, "extra": "x"},
    {"Approve": True},
    {"approve ": True},
    {"approve": True, "approve2": True},
]


async def test_only_json_true_approves_in_the_2026_era(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "typed"}
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            for content in BAD_APPROVALS:
                first = await first_round(c, args)
                key = next(iter(first.input_requests))
                r = await answer(
                    c, args, {key: ElicitResult(action="accept", content=content)}, first.request_state
                )
                assert r.is_error, content
                assert "not accepted" in text(r) and "not answered" in text(r), text(r)
                assert "approve" in text(r) or "extra" in text(r) or "Approve" in text(r), text(r)
            first = await first_round(c, args)
            key = next(iter(first.input_requests))
            r = await answer(
                c, args, {key: ElicitResult(action="accept", content={"approve": False})}, first.request_state
            )
            assert r.is_error and "you declined" in text(r)
            assert not marker.exists()
            rows = await refused_rows(rt)
            assert len(rows) == len(BAD_APPROVALS)
            assert any(
                "expected a boolean" in (row["reason"] or "") and 'the string "true"' in row["reason"]
                for row in rows
            )
            first = await first_round(c, args)
            assert not (
                await answer(c, args, {next(iter(first.input_requests)): YES}, first.request_state)
            ).is_error
            assert marker.read_text() == "typed\n"


async def test_only_json_true_approves_when_pushed(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "pushed"}
    replies = [ElicitResult(action="accept", content=c) for c in BAD_APPROVALS]

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        return replies.pop(0)

    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=callback) as c:
            for content in BAD_APPROVALS:
                r = await c.call_tool("tb__write_marker", args)
                assert r.is_error and "not accepted" in text(r), (content, text(r))
            assert not marker.exists() and replies == []
            assert len(await refused_rows(rt)) == len(BAD_APPROVALS)
            replies.append(YES)
            assert not (await c.call_tool("tb__write_marker", args)).is_error
            assert marker.read_text() == "pushed\n"


@pytest.mark.parametrize("mode", MODES)
async def test_a_decline_ends_that_call_only_and_the_retry_asks_again(data_dir: Path, mode: str) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "changed my mind"}
    replies = [
        ElicitResult(action="decline"),
        ElicitResult(action="accept", content={"approve": False}),
        ElicitResult(action="cancel"),
        YES,
    ]
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return replies.pop(0)

    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=callback) as c:
            for _ in range(3):
                r = await c.call_tool("tb__write_marker", args)
                assert r.is_error and "you declined" in text(r) and "cannot be allowed" not in text(r), text(
                    r
                )
                assert not marker.exists()
            r = await c.call_tool("tb__write_marker", args)
            assert not r.is_error, text(r)
    assert len(asked) == 4 and marker.read_text() == "changed my mind\n"


TRICKY = {
    "rtl": "invoice\u202egnp.exe",
    "zero-width": "pay\u200bpal\u200d.com\ufeff",
    "escape": "ok\x1b[2K\x1b[1Adone\r\x07",
    "tags": "note\U000e0041\U000e0042",
    "long": "A" * 5000 + "HIDDEN-TAIL",
}


@pytest.mark.parametrize("mode", MODES)
async def test_questions_show_values_safely_and_the_tool_gets_them_unchanged(
    data_dir: Path, mode: str
) -> None:
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return YES

    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=callback) as c:
            for name, value in TRICKY.items():
                marker = data_dir / f"{name}.txt"
                r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": value})
                assert not r.is_error, text(r)
                assert marker.read_bytes().decode() == value + "\n"  # display only: the tool got it all
    shown = dict(zip(TRICKY, asked))
    for name, message in shown.items():
        assert not any(ch in message for ch in "\u202e\u200b\u200d\ufeff\x1b\r\x07\U000e0041"), (
            name,
            message,
        )
        assert "Shown safely" in message and "value of text" in message, message
    assert "invoice⟨U+202E⟩gnp.exe" in shown["rtl"]
    assert "pay⟨U+200B⟩pal⟨U+200D⟩.com⟨U+FEFF⟩" in shown["zero-width"]
    assert "ok\\u001b[2K\\u001b[1Adone" in shown["escape"]  # JSON-escaped in the call's description
    assert "⟨U+E0041⟩" in shown["tags"]
    assert "HIDDEN-TAIL" not in shown["long"] and "more characters not shown" in shown["long"]
    assert len(shown["long"]) < 1500


async def test_answers_to_upstream_questions_are_typed_and_held_calls_single_use(data_dir: Path) -> None:
    """An upstream's own questions: a handshake upstream pushes (held open for a 2026 client, pushed on to a
    handshake client), a 2026 upstream returns InputRequiredResult. Either way the user's reply must fit the
    question's schema, and a held call's state is used once."""
    from .helpers import toolbox_stdio

    cfg = make_config(data_dir, servers={"old": toolbox_stdio(protocol="legacy", fork=True),
                                         "tb": toolbox_stdio(fork=True)})
    bad = [{"ok": "true"}, {"ok": 1}, {"ok": True, "more": 1}, {}]
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            args = {"what": "ship"}
            for content in bad:
                ours = await first_round(c, args, "old__confirm_push")
                held = await answer(
                    c, args, {next(iter(ours.input_requests)): YES}, ours.request_state, "old__confirm_push"
                )
                assert is_input_required(held) and list(held.input_requests) == ["upstream.held.1"], held
                r = await answer(
                    c,
                    args,
                    {"upstream.held.1": ElicitResult(action="accept", content=content)},
                    held.request_state,
                    "old__confirm_push",
                )
                assert r.is_error and "does not fit its question" in text(r), text(r)
                r = await answer(
                    c,
                    args,
                    {"upstream.held.1": ElicitResult(action="accept", content={"ok": True})},
                    held.request_state,
                    "old__confirm_push",
                )
                assert r.is_error and "already used" in text(r), text(r)
            ours = await first_round(c, args, "old__confirm_push")
            held = await answer(
                c, args, {next(iter(ours.input_requests)): YES}, ours.request_state, "old__confirm_push"
            )
            done = await answer(
                c,
                args,
                {"upstream.held.1": ElicitResult(action="accept", content={"ok": True})},
                held.request_state,
                "old__confirm_push",
            )
            assert text(done) == "ship:accept:True"
        replies = [ElicitResult(action="accept", content=content) for content in bad]

        async def pushed(ctx: Any, params: Any) -> ElicitResult:
            if params.message.startswith("Sentinel: allow"):
                return YES
            return replies.pop(0)

        async with Client(rt.front.server, mode="legacy", elicitation_callback=pushed) as c:
            for _ in bad:  # a handshake upstream's pushed question, pushed on to a handshake client
                r = await c.call_tool("old__confirm_push", {"what": "sail"})
                assert r.is_error and "does not fit" in text(r), text(r)
            replies.extend(
                ElicitResult(action="accept", content=c) for c in ({"word": 5}, {"word": "x", "y": 1})
            )
            for _ in range(2):  # a 2026 upstream's returned question, pushed to a handshake client
                r = await c.call_tool("tb__ask_word", {"item": "sky"})
                assert r.is_error and "does not fit" in text(r), text(r)
        await rt.audit.flush()
        assert rt.front.held.calls == {} or all(
            call.task.done() or call.pending is None for call in rt.front.held.calls.values()
        )
        assert len(await refused_rows(rt)) == 2 * len(bad) + len(bad) + 2


async def test_an_expired_state_is_refused(data_dir: Path) -> None:
    import anyio

    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "late"}
    async with running_gateway(make_config(data_dir, fork=True, policy={"confirm_ttl": 0.5})) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            first = await first_round(c, args)
            await anyio.sleep(0.8)
            r = await answer(c, args, {next(iter(first.input_requests)): YES}, first.request_state)
            assert r.is_error and "expired" in text(r), text(r)
        assert len(await refused_rows(rt)) == 1
    assert not marker.exists()
