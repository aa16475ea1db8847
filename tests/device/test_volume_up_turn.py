"""The Volume Up prompt is shown only when its question is the one listening for the press: the phone is
already listening when the person reads it, so a press made the moment it appears is caught (before, the
prompt went out first and an early press fell between the prompt and the listening, and was a no); and a
question waiting behind another shows nothing until its turn, so the one press the person gives confirms the
question they read, never one queued before or after it. Real adb wire protocol (fake adb server), real MCP
client."""

from __future__ import annotations

import anyio
import pytest
from tests.device.device_helpers import adb_server

from mcp import Client

pytestmark = pytest.mark.timeout(60)


def cats(fake) -> list[str]:
    return [c for c in fake.device_commands() if c.startswith("cat ")]


async def test_a_press_the_moment_the_prompt_appears_is_caught(fake_adb, tmp_path):
    # the press comes at once; the bound is only how long a loaded machine may take to carry it (it timed out
    # at 5 s with six test workers on two cores)
    server = adb_server(fake_adb, tmp_path, physical_confirmation=True, confirm_timeout=30)
    prompts: list[str] = []

    async def on_log(params) -> None:
        prompts.append(str(params.data))
        assert fake_adb.key_waiting, "the prompt went out before the phone listened for the press"
        fake_adb.press_key()  # the person presses as soon as the prompt is there

    async with Client(server, mode="legacy", logging_callback=on_log) as client:
        r = await client.call_tool("terminal_run", {"command": "cat", "args": ["/sdcard/a.txt"]})
    assert len(prompts) == 1 and "Volume Up" in prompts[0], prompts
    assert r.structured_content["decision"]["answer"] == "confirmed", r.structured_content
    assert len(cats(fake_adb)) == 1


async def test_a_queued_question_shows_its_prompt_only_in_its_turn(fake_adb, tmp_path):
    # the first press comes at once, the second question's never: the bound is what a loaded machine may take
    # to carry the first (3 s was as short as the bound that timed out above), and how long the second waits
    server = adb_server(fake_adb, tmp_path, physical_confirmation=True, confirm_timeout=15)
    prompts: list[tuple[str, int]] = []  # (the prompt, how many cats the phone had run when it showed)

    async def on_log(params) -> None:
        prompts.append((str(params.data), len(cats(fake_adb))))
        if len(prompts) == 1:
            fake_adb.press_key()  # one press, for the first question shown

    results = {}
    async with Client(server, mode="legacy", logging_callback=on_log) as client:
        async def cat(name: str) -> None:
            args = {"command": "cat", "args": [f"/sdcard/{name}"]}
            results[name] = await client.call_tool("terminal_run", args)

        async with anyio.create_task_group() as tg:
            tg.start_soon(cat, "a.txt")
            tg.start_soon(cat, "b.txt")
    answers = sorted(r.structured_content["decision"]["answer"] for r in results.values())
    assert answers == ["confirmed", "timeout"], answers
    assert len(prompts) == 2, prompts
    # the second prompt came after the first question's action ran: never two prompts up at once
    assert prompts[0][1] == 0 and prompts[1][1] == 1, prompts
    answered = {n: r.structured_content["decision"]["answer"] for n, r in results.items()}
    confirmed = next(n for n, a in answered.items() if a == "confirmed")
    assert confirmed in prompts[0][0], prompts  # the press confirmed the question it was shown for
    assert cats(fake_adb) == [f"cat /sdcard/{confirmed}"], cats(fake_adb)
    assert fake_adb.most_key_waiters == 1
