"""A test's stored confirmation of a call: ``'$confirmed'`` names the text the user was shown (its SHA-256,
``proof_interpreter.pl`` shown_digest/2), so a test that plants one first asks the engine which text the
call's guard would show over the facts already there."""

from __future__ import annotations

import time
from typing import Any

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.prolog_text import fact_text

FAR = time.time() + 10 * 365 * 86400  # far past any run of the suite


async def shown_now(guard: Any, c: ToolCall) -> str | None:
    """The digest of the confirmation the call's guard asks over its session's facts now (None: none)."""
    rb = guard.rulebases.current
    mod = await guard.knowledge.ensure(c.session_id, rb)
    limit = rb.info.inference_limit(guard.inference_limit)
    out = await guard.engine.decide(
        rb.module, mod, time.time(), c.identity, c.arguments, c.digest, rb.version, limit, fast=False
    )
    shown = [n["shown"] for n in out.get("needs") or [] if n.get("kind") == "confirm"]
    return shown[0] if shown else None


async def plant_confirmation(
    guard: Any, c: ToolCall, provenance: str, *, answer: str = "yes", version: str | None = None,
    expires: float = FAR,
) -> bool:
    """Store a confirmation of the call for the text its guard shows now (False: it asks none)."""
    shown = await shown_now(guard, c)
    if shown is None:
        return False
    mod = await guard.knowledge.ensure(c.session_id, guard.rulebases.current)
    text = fact_text("$confirmed", [c.identity, c.digest, version or guard.version, shown, answer])
    await guard.engine.assert_facts(mod, [(text, expires, provenance)])
    return True
