"""Answers to the policy's own questions (askables and confirmations), through the real gateway with the real
policy engine: strict types and enums, declines not remembered, values shown safely, and no tool can write a
confirmation. The toolbox's ``write_marker`` is the side effect that must not happen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.support.carried_session import Carried
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
MODES = ["legacy", "auto"]
RULES = """
askable(colour(P, C), "Which colour for ~w?", choice([red, green, blue]), [from([user, agent])]).
askable(copies(P, N), "How many copies of ~w?", number, [from([user])]).
guard('tb__write_marker', [path = P, text = T],
      ( colour(P, _), copies(P, N), N >= 1,
        confirmed('Write ~w into ~w?', [T, P]) )).
"""


def config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "marker.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


def text(r: Any) -> str:
    return r.content[0].text


def kind_of(key: str) -> str:
    return "confirm" if ".confirm." in key else ("colour" if ".colour." in key else "copies")


GOOD = {"colour": "red", "copies": 2, "confirm": True}
BAD = {
    "colour": ["RED", "purple", "red ", 1, True, None, ["red"]],
    "copies": ["2", "two", True, None, ["2"], "2.0"],
    "confirm": ["true", "yes", 1, 0, "1", None, False],
}


async def test_askables_and_confirmations_take_only_their_own_types_2026(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "policy"}
    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=_yes) as client:
            # a 2026-era client keeps its conversation by carrying its session back
            c = Carried(client.session)
            tried = 0
            for kind in ("colour", "copies", "confirm"):
                for bad in BAD[kind]:
                    r = await c.call_tool("tb__write_marker", args, allow_input_required=True)
                    keys = list(r.input_requests)
                    assert any(kind_of(k) == kind for k in keys), (kind, keys)
                    responses = {
                        k: _accept({"answer": bad if kind_of(k) == kind else GOOD[kind_of(k)]}) for k in keys
                    }
                    r = await c.call_tool(
                        "tb__write_marker",
                        args,
                        allow_input_required=True,
                        input_responses=responses,
                        request_state=r.request_state,
                    )
                    assert type(r).__name__ == "CallToolResult" and r.is_error, (kind, bad, r)
                    if bad is False:
                        assert "you declined" in text(r)
                    else:
                        tried += 1
                        assert "not accepted" in text(r) and "'answer'" in text(r), text(r)
                    assert not marker.exists()
                    if kind != "confirm":  # one bad answer in a round records none of that round
                        facts = await c.call_tool("sentinel__sentinel_facts", {})
                        assert "colour(" not in text(facts) and "copies(" not in text(facts), text(facts)
                if kind == "copies":  # now answer the askables well once: only the confirmation is left
                    r = await c.call_tool("tb__write_marker", args, allow_input_required=True)
                    responses = {
                        k: _accept({"answer": GOOD[kind_of(k)]})
                        for k in r.input_requests
                        if kind_of(k) != "confirm"
                    }
                    r = await c.call_tool(
                        "tb__write_marker",
                        args,
                        allow_input_required=True,
                        input_responses=responses,
                        request_state=r.request_state,
                    )
                    assert [kind_of(k) for k in r.input_requests] == ["confirm"], r
            r = await client.call_tool(
                "tb__write_marker",
                args,  # the SDK answers with the callback: JSON true
                meta={"sentinel/session": c.session},
            )
            assert not r.is_error, text(r)
        assert marker.read_text() == "policy\n"
        await rt.audit.flush()
        rows = [
            r for r in await read_audit(rt.config.store_path, tail=500) if r["outcome"] == "answer_refused"
        ]
        assert len(rows) == tried


@pytest.mark.parametrize("mode", MODES)
async def test_policy_confirmation_declined_then_given(data_dir: Path, mode: str) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "maybe"}
    confirms = [
        {"action": "decline"},
        {"action": "accept", "content": {"answer": False}},
        {"action": "cancel"},
        {"action": "accept", "content": {"answer": "yes"}},
        {"action": "accept", "content": {"answer": True, "approve": True}},
        {"action": "accept", "content": {"answer": True}},
    ]
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        prop = params.requested_schema["properties"]["answer"]
        if prop["type"] == "boolean":
            return ElicitResult(**confirms.pop(0))
        return _accept({"answer": "green" if ("enum" in prop or "oneOf" in prop) else 3})

    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=callback) as c:
            outcomes = [text(await c.call_tool("tb__write_marker", args)) for _ in range(5)]
            assert all("you declined" in o for o in outcomes[:3]), outcomes
            assert all("not accepted" in o for o in outcomes[3:]), outcomes
            assert not marker.exists()
            r = await c.call_tool("tb__write_marker", args)
            assert not r.is_error, text(r)
    assert marker.read_text() == "maybe\n" and confirms == []
    assert sum("Write maybe into" in q for q in asked) == 6  # every retry asked again


async def test_policy_questions_show_values_safely(data_dir: Path) -> None:
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        prop = params.requested_schema["properties"]["answer"]
        return _accept(
            {
                "answer": True
                if prop["type"] == "boolean"
                else ("red" if ("enum" in prop or "oneOf" in prop) else 1)
            }
        )

    value = "report\u202efdp.exe\u200b" + "B" * 3000 + "TAIL"
    marker = data_dir / "m.txt"
    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=callback) as c:
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": value})
            assert not r.is_error, text(r)
    assert marker.read_text() == value + "\n"
    confirm = next(q for q in asked if q.startswith("Write "))
    assert "report⟨U+202E⟩fdp.exe⟨U+200B⟩" in confirm and "\u202e" not in confirm and "\u200b" not in confirm
    assert "TAIL" not in confirm and "more characters not shown" in confirm
    assert "Shown safely" in confirm and "value of text" in confirm
    assert len(confirm) < 1500


async def test_no_tool_writes_a_confirmation(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "forged"}
    async with running_gateway(config(data_dir)) as rt:
        async with Client(
            rt.front.server, mode="auto"
        ) as client:  # cannot elicit: the LLM is told what to ask
            c = Carried(client)  # one conversation: the 2026-era client carries its session back
            r = await c.call_tool("tb__write_marker", args)
            assert r.is_error and "Which colour" in text(r)
            attempts = [
                (
                    {"predicate": "$confirmed", "inputs": ["tb__write_marker", "x", "y"], "answer": "yes"},
                    "internal to Sentinel",
                ),
                ({"predicate": "$confirmed", "inputs": [], "answer": True}, "internal to Sentinel"),
                (
                    {"predicate": "'$confirmed'", "inputs": ["tb__write_marker"], "answer": True},
                    "not askable",
                ),
                ({"predicate": "confirmed", "inputs": ["tb__write_marker"], "answer": True}, "not askable"),
                ({"predicate": "copies", "inputs": [str(marker)], "answer": 2}, "must be answered by: user"),
                ({"predicate": "colour", "inputs": [str(marker)], "answer": "RED"}, "expected one of"),
                ({"predicate": "colour", "inputs": [str(marker)], "answer": 1}, "expected one of"),
                ({"predicate": "colour", "inputs": [str(marker)], "answer": True}, "expected one of"),
            ]
            for a, why in attempts:
                r = await c.call_tool("sentinel__sentinel_answer", a)
                assert r.is_error and why in text(r), (a, text(r))
            ok = await c.call_tool(
                "sentinel__sentinel_answer",
                {"predicate": "colour", "inputs": [str(marker)], "answer": "blue"},
            )
            assert not ok.is_error, text(ok)
            r = await c.call_tool("tb__write_marker", args)
            assert r.is_error and "How many copies" in text(r) and "Which colour" not in text(r)
            facts = json.dumps((await c.call_tool("sentinel__sentinel_facts", {})).structured_content)
            assert "confirmed" not in facts
    assert not marker.exists()


async def _yes(ctx: Any, params: Any) -> ElicitResult:
    prop = params.requested_schema["properties"]["answer"]
    return _accept(
        {
            "answer": True
            if prop["type"] == "boolean"
            else ("red" if ("enum" in prop or "oneOf" in prop) else 2)
        }
    )


def _accept(content: dict[str, Any]) -> ElicitResult:
    return ElicitResult(action="accept", content=content)


async def test_an_answer_from_before_a_policy_change_is_refused(data_dir: Path) -> None:
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "v1"}
    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=_yes) as c:
            first = await c.session.call_tool("tb__write_marker", args, allow_input_required=True)
            before = rt.gateway.guard.version
            rules = data_dir / "marker.pl"
            rules.write_text(RULES + "\n% a new version of the policy\n")
            for _ in range(100):
                if rt.gateway.guard.version != before:
                    break
                await anyio.sleep(0.1)
            assert rt.gateway.guard.version != before
            responses = {k: _accept({"answer": GOOD[kind_of(k)]}) for k in first.input_requests}
            r = await c.session.call_tool(
                "tb__write_marker",
                args,
                allow_input_required=True,
                input_responses=responses,
                request_state=first.request_state,
            )
            assert r.is_error and "policy changed" in text(r), text(r)
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
async def test_one_confirmation_one_call_and_no_look_up_for_tools_nobody_confirmed(
    data_dir: Path, mode: str
) -> None:
    """The write runs once on its confirmation and is asked again after; calls of a tool nobody ever
    confirmed, in conversations this gateway opened, cost the fact store no look-up (PolicyGuard.observe);
    in a labelled one (a name, not a fresh id of this process) the store is asked, as before."""
    marker = data_dir / "marker.txt"
    args = {"path": str(marker), "text": "once"}
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        prop = params.requested_schema["properties"]["answer"]
        if prop["type"] == "boolean":
            return _accept({"answer": True})
        return _accept({"answer": "green" if ("enum" in prop or "oneOf" in prop) else 3})

    async with running_gateway(config(data_dir)) as rt:
        guard = rt.gateway.guard
        assert guard.private == rt.gateway.conversations.minted_here
        looked: list[str] = []
        real = guard.store.has_confirmation

        async def has_confirmation(session: str, tool: str, digest: str) -> bool:
            looked.append(tool)
            return await real(session, tool, digest)

        guard.store.has_confirmation = has_confirmation
        async with Client(rt.front.server, mode=mode, elicitation_callback=callback) as raw:
            c = Carried(raw)
            assert not (await c.call_tool("tb__write_marker", args)).is_error
            assert sum(q.startswith("Write ") for q in asked) == 1
            marker.unlink()
            assert not (await c.call_tool("tb__write_marker", args)).is_error
            assert sum(q.startswith("Write ") for q in asked) == 2  # the first "yes" was spent
            for word in ("a", "b", "c"):
                assert text(await raw.call_tool("tb__echo", {"text": word})) == word
            assert "tb__echo" not in looked, looked
            labelled = await raw.call_tool("tb__echo", {"text": "d"}, meta={"sentinel/session": "trip"})
            assert text(labelled) == "d" and looked.count("tb__echo") == 1, looked


@pytest.mark.parametrize("mode", MODES)
async def test_a_confirmation_quoting_a_typed_out_mark_reads_apart_from_a_real_hidden_character(
    data_dir: Path, mode: str
) -> None:
    """A value that types Sentinel's marking out (``⟨U+202E⟩``, a look-alike bracket, a fake closing) is shown
    with its brackets marked: the person never reads it as a value holding a real U+202E, and a value holding
    one never reads like the typed one."""
    asked: list[str] = []

    async def callback(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        prop = params.requested_schema["properties"]["answer"]
        return _accept({"answer": True if prop["type"] == "boolean" else (
            "red" if ("enum" in prop or "oneOf" in prop) else 1)})

    values = ["report\u202efdp.exe", "report⟨U+202E⟩fdp.exe", "report〈U+202E〉fdp.exe",
              "report＜U+202E＞fdp.exe", "report⟩fdp.exe⟨U+200B"]
    async with running_gateway(config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=callback) as c:
            for i, value in enumerate(values):
                args = {"path": str(data_dir / f"m{i}.txt"), "text": value}
                r = await c.call_tool("tb__write_marker", args)
                assert not r.is_error, text(r)
    confirms = [q for q in asked if q.startswith("Write ")]
    assert len(confirms) == len(values), asked
    quoted = [q.split(" into ")[0] for q in confirms]
    # a value that is not one word reads as one quoted value (readable_terms.pl), marked by the gateway
    assert quoted[0] == "Write \u201creport⟨U+202E⟩fdp.exe\u201d"
    assert len(set(quoted)) == len(values), quoted  # each reads as what it is
    for q in quoted[1:]:
        assert "⟨U+202E⟩" not in q and "⟨U+200B⟩" not in q, q  # no mark but Sentinel's
    assert "Write \u201creport⟨U+27E8⟩U+202E⟨U+27E9⟩fdp.exe\u201d" in quoted
    assert all("like Sentinel's marks" in q for q in confirms[1:]), confirms
    # the guard's own confirmation (Sentinel: allow ...) quotes the value marked once, never twice
    guards = [q for q in asked if q.startswith("Sentinel: allow")]
    assert all("⟨U+27E8⟩U+27E8" not in q for q in guards), guards
