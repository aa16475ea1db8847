"""A call's caller is checked again exactly once before its upstream gets it, whichever way the call reaches
the upstream (no ``max_in_flight``, a free slot, its party's turn, both); a caller whose credentials no
longer hold by then is refused (``credentials_lapsed``) and the upstream never sees the call.

Why counted (issue 21): the check (``gateway/caller_recheck.py``) was asked in the pipeline before the
forward and again in the upstream's slot, back to back when nothing made the call wait: two checks a call
(a SHA-256 and a file's clock, or a certificate's checks) where the one nearest the send is the one that
counts. Real gateway, real stdio toolbox upstream, real SWI-Prolog, real SQLite audit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.caller_recheck import OUTCOME
from sentinel_mcp.identity.resolver import AuthFailed

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)

# each way a call reaches the upstream: plain, in its upstream's max_in_flight (a free slot), in its party's
# turn (a handshake-era upstream's calls of one party take turns; "concurrent": false: one at a time), both
WAYS = {
    "plain": {"concurrent": True},
    "slot": {"concurrent": True, "max_in_flight": 2},
    "turn": {"concurrent": False},
    "turn_and_slot": {"concurrent": False, "max_in_flight": 2},
}


class Check:
    """A caller's recheck: counts its calls; raises AuthFailed once ``lapsed``."""

    def __init__(self) -> None:
        self.calls = 0
        self.lapsed = False

    def __call__(self) -> Any:
        self.calls += 1
        if self.lapsed:
            raise AuthFailed("invalid token or API key")
        return "owner"


def _text(outcome: Any) -> str:
    result = getattr(outcome, "result", None)
    if result is None:
        return repr(outcome)
    return " ".join(getattr(b, "text", "") for b in result.content)


@pytest.mark.parametrize("way", sorted(WAYS))
async def test_an_unqueued_call_is_checked_once_and_refused_once_lapsed(tmp_path: Path, way: str) -> None:
    cfg = make_config(tmp_path / "data", servers={"tb": toolbox_stdio(**WAYS[way], fork=True)},
                      policy={"allow": ["tb__*"]}, builtins=[])
    marker = tmp_path / "marker.txt"
    async with running_gateway(cfg) as rt:
        check = Check()
        calls = 5
        for i in range(calls):
            out = await rt.gateway.execute("tb__write_marker", {"path": str(marker), "text": f"ok{i}"},
                                           session_id="s1", recheck=check)
            assert "wrote" in _text(out), out
        assert marker.read_text().split() == [f"ok{i}" for i in range(calls)]
        assert check.calls == calls, f"{check.calls} checks for {calls} calls"  # one a call, never zero
        check.lapsed = True
        before = check.calls
        out = await rt.gateway.execute("tb__write_marker", {"path": str(marker), "text": "lapsed"},
                                       session_id="s1", recheck=check)
        assert "no longer hold" in _text(out), out
        assert check.calls == before + 1
        # a call without a check of its own (stdio, a token that holds for the process) runs as before
        out = await rt.gateway.execute("tb__write_marker", {"path": str(marker), "text": "unchecked"},
                                       session_id="s1")
        assert "wrote" in _text(out), out
        await rt.audit.flush()
        rows = await rt.audit.read(tail=5)
    assert "lapsed" not in marker.read_text().split(), "the lapsed caller's call reached the upstream"
    assert marker.read_text().split()[-1] == "unchecked"
    assert [r["outcome"] for r in rows].count(OUTCOME) == 1, rows
