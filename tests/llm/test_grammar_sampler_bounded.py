"""llama.cpp's grammar sampler is bounded in every mode: each of its steps runs in a child process the engine
kills past ``grammar_step_seconds``, the generation's own time limit or its cancellation.

What broke (red team "rt-llm2"): llama.cpp's grammar keeps one stack per reading of the text so far, and a
grammar can double them with each token (``r0 ::= "[" r1 "x" | "[" r1 "y"`` and so on) or at its very start
(``r0 ::= r1 "x" | r1 "y"``). One step is one C call the clock read between tokens never interrupts: a
17-rule grammar of 500 bytes took 17 s in ``llama_sampler_init_grammar`` alone (each rule more doubles it),
in the gateway, holding the model's turn, for every grammar (the start ran as the "parser check" even on the
llguidance path). The sampler runs for an operator's ``grammar_sampler: llama_cpp`` (every caller's schema),
a named grammar llguidance cannot take, and a caller's schema llguidance's parser faults on.

Real parts: the engine on the tiny random GGUF, llama.cpp's grammar in its real child process, llguidance.
The hostile grammars are 40 levels deep (2^40 stacks): no machine finishes them, so only the bound can end
them; what is asserted is how they end and that the model serves the next party, never a duration.
"""

from __future__ import annotations

import signal
import threading

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import GenerationCancelled, GenerationTimedOut, GrammarError
from sentinel_mcp.llm.grammar_process import GrammarChild, GrammarTooCostly
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(180)
USER = [{"role": "user", "content": "Write the answer."}]
LEVELS = 40
SOUND = 'root ::= "{" [a-z]{1,3} "}"\n'


def doubling_per_token(levels: int = LEVELS) -> str:
    """Each "[" the output must start with doubles llama.cpp's stacks."""
    rules = ["root ::= r0"]
    rules += [f'r{i} ::= "[" r{i + 1} "x" | "[" r{i + 1} "y"' for i in range(levels)]
    return "\n".join([*rules, f'r{levels} ::= "a"']) + "\n"


def doubling_at_start(levels: int = LEVELS) -> str:
    """2^levels stacks before the first token: the grammar's start alone never ends."""
    rules = ["root ::= r0"]
    rules += [f'r{i} ::= r{i + 1} "x" | r{i + 1} "y"' for i in range(levels)]
    return "\n".join([*rules, f'r{levels} ::= "a"']) + "\n"


def nested_pairs_schema(levels: int = LEVELS) -> dict:
    """A caller's 3 KB schema whose grammar doubles llama.cpp's stacks at each "[" of its output."""
    defs: dict = {
        f"d{i}": {"anyOf": [
            {"type": "array", "prefixItems": [{"$ref": f"#/$defs/d{i + 1}"}, {"const": c}], "items": False,
             "minItems": 2}
            for c in "xy"
        ]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"const": 1}
    return {"type": "object", "properties": {"v": {"$ref": "#/$defs/d0"}}, "required": ["v"], "$defs": defs}


def _engine(settings: LlmSettings, **update) -> LlamaEngine:
    return LlamaEngine(settings.model_copy(update={"grammar_sampler": "llama_cpp", **update}))


async def _serves_the_next_party(engine: LlamaEngine) -> None:
    """The model's turn was handed on: another party's free text and a sound grammar still complete."""
    assert engine.turns.holder is None and engine.tokens_in_flight is None
    g = await engine.generate(GenerationRequest(USER, max_tokens=4, seed=1, party="bob"))
    assert g.completion_tokens > 0
    g = await engine.generate(GenerationRequest(USER, max_tokens=8, grammar=SOUND, seed=1, party="bob"))
    assert g.sampler == engine.settings.grammar_sampler and g.text.startswith("{") and g.text.endswith("}")


async def test_a_grammar_whose_stacks_double_per_token_is_refused_at_the_step_bound(tiny_settings):
    engine = _engine(tiny_settings, grammar_step_seconds=1.0)
    try:
        with pytest.raises(GrammarTooCostly, match=r"^grammar nested.gbnf: .*took more than 1 s.*refused"):
            await engine.generate(GenerationRequest(USER, max_tokens=200, grammar=doubling_per_token(),
                                                    grammar_label="grammar nested.gbnf", party="mallory"))
        record = engine.history[-1]
        assert record.party == "mallory" and 0 < record.completion_tokens < LEVELS
        started = engine.grammar_child.started
        await _serves_the_next_party(engine)
        assert engine.grammar_child.started == started + 1  # the stopped child was replaced
    finally:
        engine.close()


@pytest.mark.parametrize("sampler", ["llguidance", "llama_cpp"])
async def test_a_grammar_whose_start_never_ends_is_refused_not_run_in_the_gateway(tiny_settings, sampler):
    engine = _engine(tiny_settings, grammar_step_seconds=1.0, grammar_sampler=sampler)
    try:
        with pytest.raises(GrammarTooCostly, match=r"grammar's start.*refused as too costly"):
            await engine.generate(GenerationRequest(USER, max_tokens=20, grammar=doubling_at_start(),
                                                    party="mallory"))
        with pytest.raises(GrammarTooCostly):  # the operator's grammar files are checked the same way
            engine.check_grammar(doubling_at_start(), "grammar start.gbnf")
        await _serves_the_next_party(engine)
    finally:
        engine.close()


async def test_a_callers_schema_on_llama_cpps_sampler_is_bounded(tiny_settings):
    engine = _engine(tiny_settings, grammar_step_seconds=1.0)
    cortex = Cortex(engine.settings, engine=engine)
    try:
        with pytest.raises(GrammarError, match=r"too costly"):
            await cortex.generate("Nest.", json_schema=nested_pairs_schema(), max_tokens=400, party="mallory")
        await _serves_the_next_party(engine)
    finally:
        engine.close()


async def test_the_generation_time_limit_ends_a_step_that_outlives_it(tiny_settings):
    # the step bound out of the way: the generation's own limit stops the child mid-step
    engine = _engine(tiny_settings, grammar_step_seconds=600.0, max_generation_seconds=3.0)
    try:
        with pytest.raises(GenerationTimedOut, match=r"max_generation_seconds.*incomplete"):
            await engine.generate(GenerationRequest(USER, max_tokens=200, grammar=doubling_per_token(),
                                                    party="mallory"))
        assert not engine.history[-1].cancelled
        engine.settings = engine.settings.model_copy(update={"max_generation_seconds": 300.0})
        await _serves_the_next_party(engine)
    finally:
        engine.close()


def test_a_cancelled_generation_stops_its_step_at_once(tiny_settings):
    engine = _engine(tiny_settings, grammar_step_seconds=600.0)
    cancel = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            engine.generate_blocking(
                GenerationRequest(USER, max_tokens=200, grammar=doubling_per_token(), party="mallory"), cancel
            )
        except BaseException as exc:  # noqa: BLE001 - looked at below
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    try:
        # deep into the doubling (each step longer than the last), then cancelled: bounded by count
        for _ in range(4000):
            if (engine.tokens_in_flight or 0) >= 12 or not worker.is_alive():
                break
            cancel.wait(0.05)
        cancel.set()
        worker.join(120)
        assert not worker.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], GenerationCancelled), errors
        assert engine.history[-1].cancelled
    finally:
        cancel.set()
        worker.join(120)
        engine.close()


def test_a_step_no_one_waits_for_still_ends_on_its_cpu_allowance(tiny_chat_model):
    # the gateway gone mid-step (nothing reads the answer): the child's own CPU allowance ends it
    child = GrammarChild(tiny_chat_model, 1.0)
    try:
        child.check('root ::= "a"\n', "sound", 600.0)  # started, a grammar served
        process = child._child
        assert process is not None and process.stdin is not None
        data = doubling_at_start().encode()
        process.stdin.write(b"g %d\n" % len(data) + data)  # and no one reads its answer
        for _ in range(3000):  # a bounded count of looks
            if process.poll() is not None:
                break
            threading.Event().wait(0.1)
        assert process.returncode == -signal.SIGXCPU, process.returncode
    finally:
        child.stop()
