"""The sensors take each argument in its own JSON type only, as the device tools do: a retention of ``true``
was read as 1 second, "60" and 60.0 as 60, a rate of "1" as 1.0. Refused before the user is asked anything;
the honest types still read."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.server import create_server
from sentinel_mcp.core.builtin import BuiltinContext

pytestmark = [pytest.mark.timeout(60)]
READ = {"sensor": "battery", "policy_tag": "battery-for-planning"}
LOOSE = [{"retention": True}, {"retention": "60"}, {"retention": 60.0}, {"rate": "1"}, {"rate": True},
         {"scope": 1}]


class User:
    def __init__(self) -> None:
        self.questions: list[str] = []

    async def __call__(self, context, params) -> ElicitResult:
        self.questions.append(params.message)
        return ElicitResult(action="accept", content={"allow": True, "remember": "this request only"})


async def test_an_argument_in_another_json_type_is_refused_before_anyone_is_asked(tmp_path):
    user = User()
    srv = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors"))
    async with Client(srv, mode="legacy", elicitation_callback=user) as c:
        for extra in LOOSE:
            r = await c.call_tool("sensor_read", READ | extra)
            assert r.is_error and "validation error" in r.content[0].text, (extra, r.content[0].text)
        assert user.questions == []
        r = await c.call_tool("sensor_read", READ | {"retention": 60, "rate": 1})  # a JSON int for a float
        assert not r.is_error, r.content[0].text
