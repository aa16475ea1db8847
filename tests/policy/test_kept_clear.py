"""``sentinel-mcp kept``: the operator lists the kept facts and clears one by its exact text (a pattern or a
near text clears nothing), each clear recorded (``kept log``); a cleared fact is gone for every conversation
of a running guard, those loaded before and those begun after (a SQLite store: followed by the guard's
upkeep within a second). The real CLI in a subprocess, real SWI-Prolog, a real SQLite store both write."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_kept_facts import RULES, _write, upstream

from sentinel_mcp.core.decision import Allow, Deny
from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.kept_clears import clear
from sentinel_mcp.policy.store_upkeep import upkeep

pytestmark = pytest.mark.timeout(120)


def kept(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "kept", *args],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60, env=env)


def listed(config: Path, env: dict[str, str] | None = None) -> list[str]:
    out = kept(config, "list", "--json", env=env)
    assert out.returncode == 0, out.stderr
    return sorted(f["fact"] for f in json.loads(out.stdout)["kept"])


async def redeemed(port: ClientPort, guard: PolicyGuard, code: str, session: str) -> bool:
    """Whether the guard denies redeeming ``code`` in ``session`` as already redeemed."""
    d = await guard.decide(port.call_of("kv__redeem", {"code": code}, session_id=session))
    assert isinstance(d, (Allow, Deny)), d
    return isinstance(d, Deny) and "already redeemed" in d.unmet


async def until(what: Any, why: str) -> None:
    deadline = time.monotonic() + 20
    while not await what():
        assert time.monotonic() < deadline, f"never: {why}"
        await asyncio.sleep(0.05)


async def cleared_everywhere(config: Path, port: ClientPort, writer: PolicyGuard, guard: PolicyGuard,
                             env: dict[str, str] | None = None) -> None:
    """Two kept facts written (by ``writer``); the operator clears one; it is gone for a conversation
    ``guard`` had loaded and for a new one."""
    await _write(port, writer, "redeem", "c1", "s1")
    await _write(port, writer, "redeem", "c2", "s1")
    assert await redeemed(port, guard, "c1", "loaded")  # this conversation is mirrored now
    # exact texts only: a pattern, another spelling, a fact of a conversation clear nothing
    for wrong in ("redeemed(_)", "redeemed(X)", "redeemed( c1 )", "redeemed('c1 ')", "redeemed", "",
                  "redeemed(c1).", "'$kept'", "noted(c1)", "REDEEMED(c1)"):
        assert await clear(guard.store, wrong, "test") is None, wrong
    out = kept(config, "clear", "redeemed(_)", env=env)
    assert out.returncode == 1 and "nothing cleared" in out.stderr, (out.stdout, out.stderr)
    out = kept(config, "clear", "redeemed(c1)", "--reason", "refund reversed", env=env)
    assert out.returncode == 0 and json.loads(out.stdout)["cleared"] == "redeemed(c1)", out.stderr
    assert await clear(guard.store, "redeemed(c1)", "test") is None  # once
    assert listed(config, env) == ["redeemed(c2)"]

    async def gone() -> bool:
        return not await redeemed(port, guard, "c1", "loaded")

    await until(gone, "the clear reaching the loaded conversation")
    assert not await redeemed(port, guard, "c1", "new")
    assert await redeemed(port, guard, "c2", "loaded") and await redeemed(port, guard, "c2", "new")
    log = json.loads(kept(config, "log", "--json", env=env).stdout)["clears"]
    assert [(r["fact"], r["reason"], r["source_tool"]) for r in log] == [
        ("redeemed(c1)", "refund reversed", "kv__redeem")]
    assert log[0]["cleared_by"].startswith("cli:")


async def test_the_operator_clears_a_kept_fact_for_every_conversation(tmp_path: Path) -> None:
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path),
                                                                 "rulebases": [str(rb)]}}))
    assert kept(config, "list").stdout.strip() == "no kept facts"
    async with Client(upstream(), mode="auto") as client:
        port = ClientPort(client, prefix="kv")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[rb], seeds={})
        follower = asyncio.create_task(upkeep(guard.knowledge, guard.search, 3600.0))
        try:
            await cleared_everywhere(config, port, guard, guard)
        finally:
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)
            await guard.close()
