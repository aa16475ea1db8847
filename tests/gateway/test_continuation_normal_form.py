"""A call the guard allowed, whose upstream then asks its user, goes on once the user answers: its
continuation is the call allowed. The call is decided on its arguments' one form (``argument_form``:
``12.0`` is the upstream's ``12``); the continuation was matched against the digest of the arguments as the
client wrote them, so a call written ``12.0`` never matched what had been allowed and the guard asked again
(its confirmation, a second time, for the same call). Real gateway, real stdio upstream, the real mcp
client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config
from .test_answer_forgery import YES, always_yes, answer, first_round, is_input_required, text

pytestmark = pytest.mark.timeout(120)
ASKER = str(Path(__file__).with_name("counted_asker.py"))
TOOL = "ct__write_times"
WORD = ElicitResult(action="accept", content={"word": "blue"})


def _servers() -> dict[str, Any]:
    return {"ct": {**forked_spec(ASKER), "protocol": "modern"}}


@pytest.mark.parametrize("count", [3, 3.0])
async def test_a_continuation_goes_on_whatever_the_spelling_of_its_number(data_dir: Path, count: Any) -> None:
    out = data_dir / "out.txt"
    args = {"path": str(out), "count": count}
    async with running_gateway(make_config(data_dir, _servers())) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            ours = await first_round(c, args, TOOL)  # destructive: Sentinel's confirmation first
            up = await answer(c, args, {next(iter(ours.input_requests)): YES}, ours.request_state, TOOL)
            assert is_input_required(up), up
            (key,) = up.input_requests
            assert "[counted] a word to write 3 times" in up.input_requests[key].params.message
            done = await answer(c, args, {key: WORD}, up.request_state, TOOL)
            assert not is_input_required(done), done.input_requests  # not asked to confirm again
            assert not done.is_error and text(done) == "wrote blue x3", text(done)
            assert out.read_text() == "blue blue blue\n"
            # the continuation is still for its own arguments only
            again = await first_round(c, args, TOOL)
            up = await answer(c, args, {next(iter(again.input_requests)): YES}, again.request_state, TOOL)
            (key,) = up.input_requests
            other = {**args, "count": 4}
            r = await answer(c, other, {key: WORD}, up.request_state, TOOL)
            assert r.is_error and "other arguments" in text(r), text(r)
            assert out.read_text() == "blue blue blue\n"
