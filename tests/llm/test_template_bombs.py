"""A chat template that builds a huge value in one step is refused; the gateway's memory is not the file's.

The step budget (``template_budget``) counts Python lines, and ``'a' * 10**9`` is one line: a single C-level
operation built a gigabyte in the gateway, and a few such (or a doubling in a loop of 40 steps) took the
host's memory. The template is Jinja from the model file, rendered on every call (and compiled, with its
constants folded, by ``Llama()`` at load). Each spelling below builds its value in one or a few steps; every
one must be refused with ``TemplateTooCostly`` (not rendered, not quietly replaced by the plain format), and
the next render of a sound template must work.
"""

from __future__ import annotations

import resource
from pathlib import Path

import pytest
from tests.support.tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm.prompt_format import render_prompt
from sentinel_mcp.llm.template_budget import TemplateTooCostly

pytestmark = pytest.mark.timeout(300)

NS = "{% set ns = namespace(s='xy', l=[1]) %}"
BOMBS = {
    "str-times-int": "{{ 'a' * 10**9 }}",
    "int-times-str": "{{ 10**9 * 'a' }}",
    "list-times-int": "{{ ([1] * 10**9)|length }}",
    "tuple-times-int": "{{ ((1,) * 10**9)|length }}",
    "percent-width": "{{ '%999999999s' % 'x' }}",
    "percent-star-width": "{{ '%*s' % (999999999, 'x') }}",
    "percent-precision": "{{ '%.999999999f' % 1.0 }}",
    "format-method-width": "{{ '{:>999999999}'.format('x') }}",
    "format-filter-width": "{{ '%999999999d'|format(1) }}",
    "center-filter": "{{ 'x'|center(10**9) }}",
    "indent-filter": "{{ 'x\ny'|indent(10**9) }}",
    "wordwrap-filter": "{{ ('x ' * 50000)|wordwrap(1, wrapstring='y' * 100000) }}",
    "truncate-filter-end": (
        "{{ ('x' * 200000)|truncate(150000, True, 'e' * 100000)|replace('e', 'e' * 100000) }}"
    ),
    "join-filter-separator": "{{ range(100000)|join('y' * 100000) }}",
    "join-of-a-multiplied-list": "{{ ((range(100000)|list) * 100000)|length }}",
    "replace-growth": "{{ ('a' * 100000)|replace('a', 'b' * 100000) }}",
    "ljust-method": "{{ 'x'.ljust(10**9) }}",
    "zfill-method": "{{ '1'.zfill(10**9) }}",
    "expandtabs-method": "{{ ('\t' * 1000).expandtabs(10**7) }}",
    "tojson-indent": "{{ (range(100000)|list)|tojson(indent=100000) }}",
    "concat-doubling": NS + "{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    "plus-doubling": NS + "{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
    "list-doubling": NS + "{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
    "output-repeated": "{% set s = 'y' * 10**6 %}{% for i in range(100000) %}{{ s }}{% endfor %}",
    "huge-int-power": "{{ (10 ** (10 ** 8)) % 7 }}",  # CPU, not memory: Jinja's ** is left-associative
    "string-of-a-list-of-big": "{% set s = 'y' * 10**6 %}{{ ([s] * 100000)|string|length }}",
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from llama_cpp import Llama

    from sentinel_mcp.llm import inert_templates

    inert_templates.install()  # as the engine's load does: Llama() itself compiled (and folded) the template
    d = tmp_path_factory.mktemp("bombs")
    loaded: dict[str, object] = {}
    for name, bomb in [*BOMBS.items(), ("sound", "")]:
        path = write_tiny_gguf(d / f"{name}.gguf", chat_template=bomb + CHATML_TEMPLATE)
        loaded[name] = Llama(model_path=str(path), n_ctx=512, n_threads=1, verbose=False)
    yield loaded
    for llm in loaded.values():
        llm.close()  # type: ignore[attr-defined]


HI = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_template_that_builds_a_huge_value_is_refused(models: dict[str, object], name: str):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TemplateTooCostly):
        render_prompt(models[name], HI)
    # the bomb was not built here: this process grew by far less than the value it spelled (KiB)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000
    sound = render_prompt(models["sound"], HI)
    assert sound.format == "chat_template" and sound.text.endswith("<|im_start|>assistant\n")


def test_a_sound_template_renders_as_before(models: dict[str, object]):
    two = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi \U0001f600"}]
    out = render_prompt(models["sound"], two)
    assert out.text == (
        "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi \U0001f600<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert out.added_special


def _grew_kib(run) -> int:  # noqa: ANN001
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before


def test_a_bomb_folded_at_compile_is_not_built_by_the_engines_load(tmp_path: Path):
    """``Llama()`` compiled the file's template at load, and Jinja folds ``'a' * 10**9`` while compiling: the
    gateway built the gigabyte before any render (and before any bound) ran."""
    from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
    from sentinel_mcp.llm.settings import LlmSettings

    model = write_tiny_gguf(tmp_path / "folded.gguf", chat_template="{{ 'a' * 10**9 }}" + CHATML_TEMPLATE)
    engine = LlamaEngine(LlmSettings(model=str(model), n_ctx=512, n_threads=1, seed=3))
    try:
        def call() -> None:
            with pytest.raises(TemplateTooCostly):
                engine.generate_blocking(GenerationRequest(HI, max_tokens=3))

        assert _grew_kib(call) < 200_000
        assert engine.loaded
    finally:
        engine.close()


def test_an_embedding_models_template_is_not_compiled_at_its_load(tmp_path: Path):
    from sentinel_mcp.search.embedding import LlamaEmbedder

    model = write_tiny_gguf(tmp_path / "embed.gguf", chat_template="{{ 'a' * 10**9 }}" + CHATML_TEMPLATE)
    made: list[LlamaEmbedder] = []
    assert _grew_kib(lambda: made.append(LlamaEmbedder(model, threads=1, n_ctx=256))) < 200_000
    assert made[0].dim > 0
    made[0].close()


SURROGATES = ["{{ '\\ud800' }}", "{{ 'a\\udfff' }}", "{% set s = '\\udbff' %}{{ s }}"]


@pytest.mark.parametrize("spelling", SURROGATES)
def test_a_template_that_writes_a_lone_surrogate_is_a_failed_template(tmp_path: Path, spelling: str):
    """No UTF-8 holds a lone surrogate: the prompt's encoding raised UnicodeEncodeError out of the engine (no
    Sentinel error, no message). It is a template that failed, as one that raises: the plain format is
    used."""
    from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
    from sentinel_mcp.llm.settings import LlmSettings

    model = write_tiny_gguf(tmp_path / "surrogate.gguf", chat_template=spelling + CHATML_TEMPLATE)
    engine = LlamaEngine(LlmSettings(model=str(model), n_ctx=512, n_threads=1, seed=3))
    try:
        g = engine.generate_blocking(GenerationRequest(HI, max_tokens=3))
        assert g.prompt_format == "plain" and g.completion_tokens >= 1
    finally:
        engine.close()


def test_a_render_whose_child_never_answers_is_ended_by_the_wall_clock(monkeypatch: pytest.MonkeyPatch):
    """The child's CPU is bounded by the kernel, but a child that does not run (stopped from outside, swapped
    out) would hold the model's turn for ever: past ``ANSWER_SECONDS`` it is killed, the render refused, and
    the next render gets a new child."""
    import os
    import signal

    from sentinel_mcp.llm import template_process

    monkeypatch.setattr(template_process, "ANSWER_SECONDS", 1.0)
    process = template_process.TemplateProcess(CHATML_TEMPLATE, "<|im_end|>", "")
    messages = [{"role": "user", "content": "hi"}]
    try:
        assert "hi" in process.render(messages, 10_000)[0]
        stopped = process._child
        assert stopped is not None
        os.kill(stopped.pid, signal.SIGSTOP)
        with pytest.raises(TemplateTooCostly):
            process.render(messages, 10_000)
        assert stopped.returncode == -signal.SIGKILL
        assert "hi" in process.render(messages, 10_000)[0] and process.started == 2
    finally:
        process.close()


@pytest.mark.parametrize("child", ["tests.support.no_such_template_child",
                                   "tests.support.template_child_ends"])
def test_a_rendering_process_that_cannot_run_is_not_called_a_costly_template(
        monkeypatch: pytest.MonkeyPatch, child: str):
    """A child that ends before answering for a reason of its own (its module does not import, it exits) is
    the process's trouble: the caller reads that the template could not be rendered, not that the template was
    too costly (which sends an operator looking at a sound model file)."""
    from sentinel_mcp.llm import template_process
    from sentinel_mcp.llm.errors import ModelUnavailable

    monkeypatch.setattr(template_process, "_CHILD", child)
    process = template_process.TemplateProcess(CHATML_TEMPLATE, "<|im_end|>", "")
    try:
        with pytest.raises(ModelUnavailable, match=r"rendering process ended \(exit [13]\) before answering"):
            process.render([{"role": "user", "content": "hi"}], 10_000)
        assert process._child is None
    finally:
        process.close()


def test_a_rendering_process_that_does_not_start_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from sentinel_mcp.llm import template_process
    from sentinel_mcp.llm.errors import ModelUnavailable

    monkeypatch.setattr(template_process.sys, "executable", str(tmp_path / "no-python"))
    process = template_process.TemplateProcess(CHATML_TEMPLATE, "<|im_end|>", "")
    with pytest.raises(ModelUnavailable, match="did not start"):
        process.render([{"role": "user", "content": "hi"}], 10_000)


def test_a_child_out_of_memory_outside_a_render_is_a_costly_template(monkeypatch: pytest.MonkeyPatch):
    """The child's own memory end (``MEMORY_EXIT``: a MemoryError reading a request or writing an answer) is
    read as the template being too costly, as the kernel's CPU end is."""
    from sentinel_mcp.llm import template_process

    monkeypatch.setattr(template_process, "_CHILD", "tests.support.template_child_out_of_memory")
    process = template_process.TemplateProcess(CHATML_TEMPLATE, "<|im_end|>", "")
    try:
        with pytest.raises(TemplateTooCostly):
            process.render([{"role": "user", "content": "hi"}], 10_000)
    finally:
        process.close()
