"""The one build slot is shared fairly: a principal whose build just ended waits behind another principal
that asked for the slot while that build ran (red team 'swarm' 5: one principal held the slot with builds
back to back, 90 minutes each, and every other principal was refused for ever)."""

from __future__ import annotations

import asyncio

import pytest
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import NO_TOOLS, openai_factory

from sentinel_mcp.config import ConfigError
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.task_lock import BuildBusyError

pytestmark = pytest.mark.timeout(120)


async def test_a_principal_that_just_had_the_slot_waits_behind_one_that_asked_meanwhile(
    tmp_path, model_server
) -> None:
    service = BuildService(tmp_path / "swarm", swarm_settings({"backend": "openai", "verify": NO_TOOLS}))
    await service.start(sweep=False)
    model = openai_factory(model_server)
    try:
        model_server.hold.clear()  # mallory's build waits on its first model call: the slot is held
        first = await service.submit(SPEC, model, principal="mallory")
        while not model_server.requests:
            await asyncio.sleep(0.02)
        with pytest.raises(BuildBusyError, match="another build is running"):
            await service.submit(SPEC, model, principal="alice")
        model_server.hold.set()
        assert (await service.wait(first))["state"] == "COMPLETED"

        # the slot is free, but alice asked while mallory's build ran: mallory's next build waits its turn
        with pytest.raises(BuildBusyError, match="another caller is waiting for the build slot") as refused:
            await service.submit(SPEC, model, principal="mallory")
        assert "alice" not in str(refused.value) and "nothing was started" in str(refused.value)
        alices = await service.submit(SPEC, model, principal="alice")
        assert (await service.wait(alices))["state"] == "COMPLETED"
        # alice had her turn and nobody else waits: mallory builds again (so may alice, back to back)
        again = await service.submit(SPEC, model, principal="mallory")
        assert (await service.wait(again))["state"] == "COMPLETED"
        again = await service.submit(SPEC, model, principal="mallory")
        assert (await service.wait(again))["state"] == "COMPLETED"
    finally:
        model_server.hold.set()
        await service.close()


async def test_a_waiter_that_never_comes_back_holds_no_one_up_for_long(tmp_path, model_server) -> None:
    service = BuildService(
        tmp_path / "swarm", swarm_settings({"backend": "openai", "verify": NO_TOOLS, "fair_turn_seconds": 60})
    )
    await service.start(sweep=False)
    model = openai_factory(model_server)
    try:
        model_server.hold.clear()
        first = await service.submit(SPEC, model, principal="mallory")
        while not model_server.requests:
            await asyncio.sleep(0.02)
        with pytest.raises(BuildBusyError):
            await service.submit(SPEC, model, principal="alice")
        model_server.hold.set()
        assert (await service.wait(first))["state"] == "COMPLETED"
        with pytest.raises(BuildBusyError, match=r"ask again in \d+ s"):
            await service.submit(SPEC, model, principal="mallory")
        # a minute after mallory's build ended alice has not come back: her turn lapsed, the slot is anyone's
        clock = service.store.now

        async def a_minute_later() -> float:
            return await clock() + 61

        service.store.now = a_minute_later  # type: ignore[method-assign]
        again = await service.submit(SPEC, model, principal="mallory")
        assert (await service.wait(again))["state"] == "COMPLETED"
    finally:
        model_server.hold.set()
        await service.close()


@pytest.mark.parametrize("value", [-1, 3601, 1e12, "30", True])
def test_the_turn_is_bounded_and_typed(value) -> None:
    with pytest.raises(ConfigError, match=r"sentinel.swarm.fair_turn_seconds: "):
        swarm_settings({"fair_turn_seconds": value})


@pytest.mark.parametrize(
    "section,key",
    [
        ({"max_builds_per_hour": "3"}, "max_builds_per_hour"),
        ({"heartbeat_seconds": True}, "heartbeat_seconds"),
        ({"debug_log": "yes"}, "debug_log"),
        ({"retention": {"max_kept_workspaces": 2.0}}, "retention.max_kept_workspaces"),
        ({"limits": {"max_steps": "5"}}, "limits.max_steps"),
        ({"retention": {"sweep_hours": "Infinity"}}, "retention.sweep_hours"),
    ],
)
def test_swarm_settings_are_read_strictly(section, key) -> None:
    """``swarm_settings`` (the built-in's and the CLI's reading, the CLI's own overrides included) took a
    string "3" for a number and "yes" for true (pydantic's lax mode), as the config file's check does not."""
    with pytest.raises(ConfigError, match=rf"sentinel.swarm.{key}: "):
        swarm_settings(section)


def test_a_swarm_setting_of_the_wrong_type_is_refused_with_its_file_and_line(tmp_path) -> None:
    from sentinel_mcp.config import load_config

    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {},\n "sentinel": {\n  "swarm": {"fair_turn_seconds": "30"}}}')
    with pytest.raises(ConfigError, match=r"sentinel.json: sentinel.swarm.fair_turn_seconds: .*\(line 3\)"):
        load_config(bad)
