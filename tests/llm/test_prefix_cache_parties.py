"""Prompt preambles are reused per party, never across parties (red team 'cortex prefix cache').

A caller sets ``llm_generate``'s ``system``. The KV snapshots of preambles were keyed by the preamble's tokens
and shared by every principal, and llama-cpp-python's own reuse of what the context still held crossed
parties too: Bob's call with the system prompt Alice had just sent reported (``cached_prompt_tokens``) and ran
faster for it, so Bob could tell which preamble Alice used; ``llm_status`` showed every caller the engine's
snapshot and hit counts, the context's token count and the last generation (anyone's). Here, on the tiny GGUF
model with real generations, a party only ever reuses what it evaluated itself, and sees only its own figures.
No timing: the counts of reused tokens are what the speed-up would have been.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm import engine as engine_module
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(180)
SYSTEM = "You are the accounts assistant of Example Bank. Never reveal the vault code 4711. " * 3


def _gen(engine: LlamaEngine, party: str, user: str, system: str = SYSTEM):
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return engine.generate_blocking(GenerationRequest(messages, max_tokens=2, party=party))


def _preamble_tokens(engine: LlamaEngine, system: str = SYSTEM) -> int:
    return len(engine._llm.tokenize(("<|im_start|>system\n" + system).encode(), add_bos=True, special=True))


def test_a_preamble_alice_sent_is_not_restored_for_bob(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings)
    try:
        first = _gen(engine, "alice", "What is my balance?")
        assert first.cached_prompt_tokens == 0
        preamble = _preamble_tokens(engine)
        # right after alice, with her preamble in the context and in her snapshot: bob reuses none of it
        bob = _gen(engine, "bob", "What is my balance?")
        assert bob.cached_prompt_tokens == 0
        again = _gen(engine, "alice", "Send 5 EUR to Carol.")  # her own: restored from her snapshot
        assert again.cached_prompt_tokens >= preamble
        bob_again = _gen(engine, "bob", "Send 5 EUR to Dave.")  # what bob himself set up is his to reuse
        assert bob_again.cached_prompt_tokens >= preamble
        cache = engine.prefix_cache
        assert cache.held("alice") == 1 and cache.held("bob") == 1
        assert cache.party_hits("alice") == 1 and cache.party_hits("bob") == 1
    finally:
        engine.close()


@pytest.mark.parametrize("system", [SYSTEM, "Short.", "x " * 400])
def test_without_snapshots_the_context_alice_left_is_not_reused_for_bob(
    tiny_settings: LlmSettings, system: str
):
    engine = LlamaEngine(tiny_settings.model_copy(update={"prefix_cache_mb": 0}))
    try:
        _gen(engine, "alice", "one", system)
        assert _gen(engine, "bob", "one", system).cached_prompt_tokens == 0  # the very same prompt, even
        own = _gen(engine, "bob", "two", system)  # bob's own turn still in the context: his to reuse
        assert own.cached_prompt_tokens >= _preamble_tokens(engine, system)
        assert _gen(engine, "alice", "three", system).cached_prompt_tokens == 0
    finally:
        engine.close()


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
def test_grammar_generations_do_not_reuse_another_partys_context(tiny_settings: LlmSettings, sampler: str):
    pytest.importorskip("llguidance", reason="llguidance is not installed")
    engine = LlamaEngine(tiny_settings.model_copy(update={"prefix_cache_mb": 0, "grammar_sampler": sampler}))
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Pick."}]
    try:
        for party, reused in (("alice", False), ("bob", False), ("bob", True), ("alice", False)):
            g = engine.generate_blocking(
                GenerationRequest(messages, max_tokens=1, grammar='root ::= "a" | "b"\n', party=party)
            )
            assert (g.cached_prompt_tokens > 0) is reused, (party, g.cached_prompt_tokens)
    finally:
        engine.close()


def test_a_partys_snapshots_are_bounded_and_its_flood_evicts_only_its_own(tiny_settings: LlmSettings):
    engine = LlamaEngine(tiny_settings, prefix_per_party=2, prefix_parties=4)
    try:
        _gen(engine, "bob", "hi")
        for i in range(5):
            _gen(engine, "alice", "hi", f"Alice's preamble number {i}. " * 6)
        cache = engine.prefix_cache
        assert cache.held("alice") == 2 and cache.held("bob") == 1
        assert _gen(engine, "bob", "again").cached_prompt_tokens >= _preamble_tokens(engine)
        for party in ("p1", "p2", "p3"):  # three more parties: alice (now least recently active) goes
            _gen(engine, party, "hi")
        assert cache.held("alice") == 0 and cache.held("bob") == 1
        assert cache.bytes <= cache.max_bytes and cache.party_bytes("bob") <= cache.max_party_bytes
    finally:
        engine.close()


def test_fallback_log_dedup_is_a_bounded_lru(tiny_settings: LlmSettings, caplog: pytest.LogCaptureFixture,
                                            monkeypatch: pytest.MonkeyPatch):
    """Past the bound, a repeated fallback was logged on every call (the set was full, nothing was added);
    as an LRU the newest are remembered and the oldest forgotten."""
    pytest.importorskip("llguidance", reason="llguidance is not installed")
    monkeypatch.setattr(engine_module, "MAX_LOGGED_FALLBACKS", 3)
    engine = LlamaEngine(tiny_settings.model_copy(update={"grammar_sampler": "llguidance"}))
    refused = 'root ::= "x" [\\u00e0-\\u00ff]{1,3}'  # valid GBNF llguidance refuses
    user = [{"role": "user", "content": "Say it."}]

    def run(label: str) -> None:
        engine.generate_blocking(
            GenerationRequest(user, max_tokens=1, grammar=refused, grammar_label=label, party="alice")
        )

    def logged(label: str) -> int:
        return sum(1 for r in caplog.records if r.getMessage().startswith(f"{label}: llguidance cannot"))

    try:
        with caplog.at_level(logging.WARNING, logger="sentinel_mcp.llm.engine"):
            for label in ("g0", "g1", "g2", "g3", "g4"):
                run(label)
            run("g4")
            run("g4")
            assert logged("g4") == 1  # remembered although more labels than the bound were seen
            run("g0")  # the oldest was forgotten: logged again
            assert logged("g0") == 2
        assert len(engine._fallbacks_logged) == 3
    finally:
        engine.close()


# --- llm_status through the gateway ---------------------------------------------------------------------


def _status(out) -> dict:
    from sentinel_mcp.core.port import Completed

    assert isinstance(out, Completed) and not out.result.is_error, out
    status = out.result.structured_content
    return status.get("result", status)


async def test_llm_status_shows_a_caller_only_its_own_figures(data_dir: Path, tiny_chat_model: Path):
    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.config import parse_config

    principals = [
        {"name": "alice", "token": "alice-token-0123456789abcdef"},
        {"name": "bob", "token": "bob-token-0123456789abcdef01"},
    ]
    llm = {"model": str(tiny_chat_model), "n_ctx": 2048, "n_threads": 1, "seed": 6161, "temperature": 0.8}
    config = parse_config(
        {"mcpServers": {}, "sentinel": {"data_dir": str(data_dir), "builtins": ["llm"], "llm": llm,
                                        "principals": principals}},
        source="<test>",
        base_dir=data_dir,
    )
    async with running_gateway(config) as rt:

        async def call(who: str, tool: str, arguments: dict, i: int = 0):
            return await rt.gateway.invoke(
                f"llm__{tool}", arguments, session_id=f"{who}/s{i}", client="red-team", principal=who
            )

        out = await call("alice", "llm_generate", {"prompt": "Balance?", "system": SYSTEM, "max_tokens": 3})
        assert not out.result.is_error, out
        alice = _status(await call("alice", "llm_status", {}))
        assert alice["prompt_cache"]["snapshots"] == 1 and alice["prompt_cache"]["bytes"] > 0
        assert alice["generations"] == 1 and alice["kv_tokens"] > 0
        assert alice["last_generation"]["completion_tokens"] >= 1
        bob = _status(await call("bob", "llm_status", {}))
        # none of alice's: no snapshot, context length or generation of hers
        assert bob["prompt_cache"]["snapshots"] == 0 and bob["prompt_cache"]["hits"] == 0
        assert bob["prompt_cache"]["bytes"] == 0 and bob["generations"] == 0
        assert bob["kv_tokens"] in (None, 0) and bob["last_generation"] is None
        # the shared facts stay: the model, its context window, the per-party limit
        assert bob["model"] == alice["model"] == tiny_chat_model.name and bob["context_tokens"] == 2048
        assert bob["prompt_cache"]["limit_bytes"] == alice["prompt_cache"]["limit_bytes"] > 0
        # bob's own call with alice's system prompt: his own snapshot, no hit from hers
        await call("bob", "llm_generate", {"prompt": "Balance?", "system": SYSTEM, "max_tokens": 3}, 1)
        await call("alice", "llm_generate", {"prompt": "Pay Carol.", "system": SYSTEM, "max_tokens": 3}, 2)
        alice = _status(await call("alice", "llm_status", {}))
        assert alice["prompt_cache"]["snapshots"] == 1 and alice["prompt_cache"]["hits"] == 1  # her own
        assert alice["generations"] == 2 and alice["kv_tokens"] > 0
        bob = _status(await call("bob", "llm_status", {}))
        assert bob["prompt_cache"]["snapshots"] == 1 and bob["prompt_cache"]["hits"] == 0
        assert bob["generations"] == 1 and bob["kv_tokens"] in (None, 0)  # the context holds alice's now
        assert bob["last_generation"]["completion_tokens"] >= 1
