"""A rulebase another local account could change is refused at every load, the hot reload's included (red
team "perms12"): the config loader checks the files at start (``config_file_trust.py``), but a rulebase made
world-writable (or moved into such a folder) while Sentinel ran was taken at the next reload, letting any
local user rewrite the policy. The policy in force stays, and the reload says why. The deployer's opt-out
(``SENTINEL_SHARED_FILES=trust``) keeps such a file, with a warning. Real SWI-Prolog, real files."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import RulebaseError, load_rulebase

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio]


def call(args: dict) -> ToolCall:
    return ToolCall(name="t__ok", server="t", tool="ok", arguments=args, session_id="s1")


@pytest.fixture(autouse=True)
def no_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)


@pytest.mark.parametrize("change", ["file 0666", "file 0646", "folder 0777", "another owns the file"])
async def test_a_reload_of_a_file_others_could_change_keeps_the_policy_in_force(tmp_path: Path,
                                                                                change: str) -> None:
    home = tmp_path / "rules"
    home.mkdir(mode=0o755)
    f = home / "p.pl"
    f.write_text("guard('t__ok', [n = N], N =< 10).\n")
    g = await make_guard(None, tmp_path / "facts.db", files=[f])
    try:
        v1 = g.version
        f.write_text("guard('t__ok', [n = N], N =< 1000).\n")  # what the other account would write
        if change.startswith("file 0"):
            os.chmod(f, int(change.split()[1], 8))
        elif change == "folder 0777":
            os.chmod(home, 0o777)
        else:
            os.chown(f, 54321, -1)
        assert await g.rulebases.check_for_changes() is False
        assert g.version == v1
        assert g.rulebases.last_error is not None and "another account could change" in g.rulebases.last_error
        assert isinstance(await g.decide(call({"n": 500})), Deny)  # the policy in force still decides
    finally:
        await g.close()


async def test_a_shared_file_never_loads_and_the_opt_out_keeps_it_with_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [n = N], N =< 10).\n")
    os.chmod(f, 0o666)
    with pytest.raises(RulebaseError) as e:
        await load_rulebase(shared_engine(), [f])
    assert any(str(f) in p.file and "chmod go-w" in p.message for p in e.value.problems), e.value.problems
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    with caplog.at_level(logging.WARNING):
        rb = await load_rulebase(shared_engine(), [f])
    await shared_engine().unload(rb.module)
    assert any(str(f) in r.getMessage() and "SENTINEL_SHARED_FILES" in r.getMessage() for r in caplog.records)


async def test_an_ordinary_file_reloads(tmp_path: Path) -> None:
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [n = N], N =< 10).\n")
    g = await make_guard(None, tmp_path / "facts.db", files=[f])
    try:
        f.write_text("guard('t__ok', [n = N], N =< 1000).\n")
        os.chmod(f, 0o664)  # a private group (this account's own) may write: fine, as ssh
        assert await g.rulebases.check_for_changes() is True
        assert isinstance(await g.decide(call({"n": 500})), Allow)
    finally:
        await g.close()
