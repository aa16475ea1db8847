"""A look-up that raises (an engine error reading a hostile upstream's result, e.g. one holding NaN, which
the engine's JSON reader refuses) denies: the read counts as one with nothing to read (what it taught before
goes), the deny says its result could not be read, and never quotes the engine's error text (its goals and
stream addresses reached the client once), which goes to Sentinel's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.policy.policy_rig import rig

from sentinel_mcp.core.decision import Deny
from sentinel_mcp.policy.engine import EngineError, PrologEngine

pytestmark = pytest.mark.timeout(60)


async def test_a_lookup_that_raises_denies_without_the_engine_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def extract(self: Any, *args: Any) -> Any:
        raise EngineError("prolog error: sn_extract raised error(syntax_error(json(illegal_json)),"
                          "stream(<stream>(0x7f4d9c20fd00),1,11,11))")

    monkeypatch.setattr(PrologEngine, "extract", extract)
    async with rig(tmp_path / "facts.db") as r:
        d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
        assert isinstance(d, Deny), d
        told = " ".join([d.reason, *d.unmet, *(d.how_to_unblock or [])])
        assert "the result cannot be read" in told, told
        assert "prolog error" not in told and "stream(" not in told and "EngineError" not in told, told
    assert any("illegal_json" in rec.getMessage() for rec in caplog.records)  # the operator has it
