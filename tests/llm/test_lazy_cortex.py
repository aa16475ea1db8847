"""The llm built-in's Cortex built on its first use (issue 21): status readers build nothing and see what a
fresh engine shows, the first call builds it (once, however many first calls come at once), and a build that
fails is a tool error like a model that cannot load, tried again by the next call."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
from mcp import Client

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.llm import cortex as cortex_module
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.lazy_cortex import LazyCortex
from sentinel_mcp.llm.server import create_server
from sentinel_mcp.llm.settings import LlmSettings
from sentinel_mcp.llm.status import model_status, operator_status

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
def test_before_its_build_the_status_is_a_fresh_engines(sampler: str) -> None:
    settings = LlmSettings(n_ctx=1024, n_threads=1, prefix_cache_mb=8, grammar_sampler=sampler)
    lazy = LazyCortex(settings, GrammarRegistry.load())
    fresh = LlamaEngine(settings)
    for view in (operator_status, lambda e: model_status(e, None), lambda e: model_status(e, "alice")):
        assert view(lazy.engine) == view(fresh)
    assert lazy.engine.status("alice") == fresh.status("alice") and not lazy.built


def _counted_slow_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The real Cortex, its construction slowed so that first calls at once overlap in it; counts them."""
    built: list[int] = []
    real = cortex_module.Cortex.__init__

    def slow_init(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        built.append(threading.get_ident())
        time.sleep(0.2)
        real(self, *args, **kwargs)

    monkeypatch.setattr(cortex_module.Cortex, "__init__", slow_init)
    return built


async def test_first_calls_at_once_build_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _counted_slow_builds(monkeypatch)
    lazy = LazyCortex(LlmSettings(n_threads=1), GrammarRegistry.load())
    got: list[object] = []

    async def first() -> None:
        got.append(await lazy.ready())

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(first)
    assert len(built) == 1 and len(got) == 4 and all(c is got[0] for c in got)
    assert lazy.built and lazy.engine is got[0].engine  # type: ignore[attr-defined]


async def test_the_first_llm_call_builds_it_and_works(tmp_path: Path, tiny_chat_model: Path) -> None:
    ctx = BuiltinContext("llm", tmp_path, {"model": str(tiny_chat_model), "n_ctx": 2048, "n_threads": 1,
                                           "seed": 7373})  # a seed of its own: a fresh engine
    server = create_server(ctx)
    lazy = ctx.services["cortex"]
    async with Client(server) as c:
        status = (await c.call_tool("llm_status", {})).structured_content
        assert status["loaded"] is False and not lazy.built
        r = await c.call_tool("llm_generate", {"prompt": "hi", "max_tokens": 2})
        assert not r.is_error, r.content[0].text
        assert lazy.built
        status = (await c.call_tool("llm_status", {})).structured_content
        assert status["loaded"] is True and status["model"] == tiny_chat_model.name


async def test_a_failed_build_is_a_tool_error_and_the_next_call_tries_again(
    tmp_path: Path, tiny_chat_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = cortex_module.Cortex.__init__
    failures = [RuntimeError("no engine here")]

    def failing_once(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        if failures:
            raise failures.pop()
        real(self, *args, **kwargs)

    monkeypatch.setattr(cortex_module.Cortex, "__init__", failing_once)
    ctx = BuiltinContext("llm", tmp_path, {"model": str(tiny_chat_model), "n_ctx": 2048, "n_threads": 1})
    server = create_server(ctx)
    async with Client(server) as c:
        r = await c.call_tool("llm_generate", {"prompt": "hi", "max_tokens": 2})
        assert r.is_error and "could not be started: no engine here" in r.content[0].text
        assert not ctx.services["cortex"].built
        assert "could not be started: no engine here" in ctx.services["cortex"].problem  # for /healthz
        r = await c.call_tool("llm_classify_risk", {"action": {"action": "scroll"}})
        assert not r.is_error, r.content[0].text
        assert ctx.services["cortex"].built and ctx.services["cortex"].problem is None
