"""A build's id is ASCII only: ``\\d`` in a ``str`` pattern matches every script's digits (Arabic-Indic,
Devanagari, fullwidth), so ids written in them passed as build ids (``workspace_of``, the console's pages, the
retention sweep), naming directories under the swarm's root no build ever made (red team 'swarm' 4)."""

from __future__ import annotations

import pytest

from sentinel_mcp.swarm.build_service import TASK_ID, UnknownTaskError, new_task_id
from sentinel_mcp.swarm.retention import TASK_DIR

LOOK_ALIKES = [
    # Arabic-Indic
    "t\u0662\u0660\u0662\u0666\u0660\u0661\u0660\u0661-\u0660\u0660\u0660\u0660\u0660\u0660-abcdef",
    "t\uff12\uff10\uff12\uff16\uff10\uff11\uff10\uff11-000000-abcdef",  # fullwidth
    "t2026\u0966\u0967\u0966\u0967-000000-abcdef",  # Devanagari
    "t20260101-000000-abcdef\n",
    "t20260101-000000-ABCDEF",
]


@pytest.mark.parametrize("task_id", LOOK_ALIKES)
def test_an_id_in_other_digits_is_no_build_id(task_id: str, service) -> None:
    assert not TASK_ID.fullmatch(task_id) and not TASK_DIR.fullmatch(task_id)
    with pytest.raises(UnknownTaskError):
        service.workspace_of(task_id)


def test_a_new_id_is_one() -> None:
    tid = new_task_id()
    assert TASK_ID.fullmatch(tid) and TASK_DIR.fullmatch(tid)


HUGE = "t" + "\u0662" * 200_000  # an id no build has, far past any id's length (it was echoed back whole)


async def test_the_task_id_argument_is_bounded_in_the_schema_and_never_echoed(tmp_path) -> None:
    """``task_id`` had no bound in the tools' schemas and an unknown one was echoed in the error: a caller
    could make the gateway carry (and audit) megabytes back, in any script."""
    from mcp import Client

    from sentinel_mcp.core.builtin import BuiltinContext
    from sentinel_mcp.swarm.server import create_server
    from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

    settings = {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS}
    server = create_server(BuiltinContext(name="swarm", data_dir=tmp_path / "swarm", settings=settings))
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("swarm_status", "swarm_cancel"):
            prop = tools[name].input_schema["properties"]["task_id"]
            assert prop["maxLength"] == len(new_task_id()) and prop["minLength"] == len(new_task_id()), prop
            assert prop["pattern"] == "^t[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$", prop
            for bad in (HUGE, "x" * 5000, LOOK_ALIKES[0], "../../etc"):
                refused = await client.call_tool(name, {"task_id": bad})
                text = refused.content[0].text
                # refused by the schema: the MCP layer's message shows at most a clipped bit of the input
                assert refused.is_error and "validation error" in text and len(text) < 600, (name, len(text))
                assert len(bad) < 100 or bad[:100] not in text
            unknown = await client.call_tool(name, {"task_id": "t20260101-000000-abcdef"})
            assert unknown.is_error and "no such task: t20260101-000000-abcdef" in unknown.content[0].text


@pytest.mark.parametrize("task_id", [HUGE, "x" * 5000, *LOOK_ALIKES])
def test_an_odd_id_is_never_echoed_by_the_error(task_id: str, service) -> None:
    with pytest.raises(UnknownTaskError) as unknown:
        service.workspace_of(task_id)
    assert task_id not in str(unknown.value) and len(str(unknown.value)) < 200
