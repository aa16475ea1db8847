"""A model file's chat template is counted in steps: one that never ends is an error, not a wedged model.

The template is Jinja from the GGUF, rendered on every prompt with the caller's text in it; the sandbox bounds
one ``range`` to 100,000 items, not three nested ones. Rendering such a template held the model's turn for
ever: every later call waited behind it. A loop that runs only when the text holds the file author's word
passes any probe with a sample turn, and is met only when a caller (or a web page fed as context) says it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.settings import LlmSettings
from sentinel_mcp.llm.template_budget import TemplateTooCostly, within_budget

pytestmark = pytest.mark.timeout(300)

NESTED = "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}"
FOREVER = NESTED + "{% endfor %}{% endfor %}{% endfor %}" + CHATML_TEMPLATE
# ChatML, except when the last message holds the trigger word
TRIGGERED = (
    "{% if 'xyzzy' in messages[-1]['content'] %}" + NESTED + "{% endfor %}{% endfor %}{% endfor %}{% endif %}"
    + CHATML_TEMPLATE
)
HI = [{"role": "user", "content": "hi"}]


def _engine(model: Path) -> LlamaEngine:
    return LlamaEngine(LlmSettings(model=str(model), n_ctx=1024, n_threads=1, seed=3))


def test_a_template_that_never_ends_is_stopped_and_the_turn_handed_on(tmp_path: Path):
    engine = _engine(write_tiny_gguf(tmp_path / "forever.gguf", chat_template=FOREVER))
    try:
        # each call meets the bound and hands the turn on: a second waited for ever behind a wedged first
        for _ in range(2):
            with pytest.raises(TemplateTooCostly, match="did not finish within 500000 steps"):
                engine.generate_blocking(GenerationRequest(HI, max_tokens=3))
        assert engine.loaded  # the probe's child met the same bound: an error, not the file's verdict
    finally:
        engine.close()


async def test_a_template_triggered_by_the_callers_word_passes_the_probe_and_meets_the_bound(tmp_path: Path):
    engine = _engine(write_tiny_gguf(tmp_path / "triggered.gguf", chat_template=TRIGGERED))
    cortex = Cortex(engine.settings, engine=engine)
    try:
        before = await cortex.generate("Say hello.", max_tokens=3)  # loaded: the probe's sample passed
        assert before.generation.prompt_format == "chat_template"
        with pytest.raises(TemplateTooCostly):
            await cortex.generate("Summarise this.", context="the word is xyzzy", max_tokens=3)
        after = await cortex.generate("Say hello again.", max_tokens=3)
        assert after.generation.completion_tokens >= 1
    finally:
        engine.close()


def test_the_budget_counts_steps_not_time():
    def loop(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    assert within_budget(lambda: loop(1_000), steps=10_000) == sum(range(1_000))
    with pytest.raises(TemplateTooCostly):
        within_budget(lambda: loop(10_000), steps=10_000)
    # the thread's own tracer (a debugger's, coverage's) is put back
    import sys

    marker = []

    def outer(frame, event, arg):  # noqa: ANN001, ANN202
        marker.append(event)

    sys.settrace(outer)
    try:
        within_budget(lambda: loop(10), steps=10_000)
        assert sys.gettrace() is outer
    finally:
        sys.settrace(None)
