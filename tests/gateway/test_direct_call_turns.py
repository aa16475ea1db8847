"""Whether a built-in's call takes turns (``UpstreamCalls._serialized``) is told without asking the
connection's protocol version when the built-in has direct calls (they exist only on a handshake-era
connection: ``builtin_direct.direct_path``); the answer is the one asking gave, in both eras and on both
paths (issue 21: five properties a call, from ``Upstream.modern`` down to the session's version)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.upstream import BuiltinTarget, Upstream
from tests.gateway.helpers import make_config
from tests.gateway.twin_builtin import DIRECT, build_twin

pytestmark = pytest.mark.timeout(90)


def _calls_of(code: Any, counted: list[int]) -> Any:
    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is code:
            counted[0] += 1

    return hook


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_turns_are_told_as_before_and_without_the_version(data_dir: Any, era: str) -> None:
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        pair = rt.manager.add("mcp", BuiltinTarget(server=build_twin(), protocol=era))
        direct = rt.manager.add("dir", BuiltinTarget(server=build_twin(), protocol=era, direct_tools=DIRECT))
        for up in (pair, direct):
            assert await up.wait_ready(20), up.last_error
        assert (direct.direct is None) == (era == "modern")
        assert pair.modern == direct.modern == (era == "modern")
        for plain in (True, False):
            # the pair (no direct calls) asks the version: the same target's answer
            assert direct._serialized(plain) is pair._serialized(plain)
        for concurrent in (False, True):  # the config's word, on either path
            for up in (pair, direct):
                object.__setattr__(up.target, "concurrent", concurrent)
                assert up._serialized(True) is (era == "legacy" and not concurrent)
        counted = [0]
        sys.setprofile(_calls_of(Upstream.modern.fget.__code__, counted))  # type: ignore[attr-defined]
        try:
            for i in range(3):
                result = await direct.call_tool("echo", {"text": f"t{i}"}, principal="alice")
                assert not result.is_error and result.structured_content == {  # type: ignore[union-attr]
                    "text": f"t{i}", "count": 1, "tags": []}
        finally:
            sys.setprofile(None)
        if era == "legacy":  # the direct path's calls: the version not asked (once a call before)
            assert direct.direct is not None and direct.direct.direct_calls == 3
            assert counted == [0]
