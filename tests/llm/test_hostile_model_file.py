"""A model file that crashes llama.cpp must not take the gateway down with it.

llama.cpp checks many things in a GGUF with ``GGML_ASSERT``, which calls ``abort()``: a file whose header says
``llama.expert_used_count = 1`` and no experts (70 bytes of metadata) killed the whole process that loaded it,
the gateway included, at the first call of any client. Every file is first loaded, rendered and decoded
from in a child process (``model_probe``); only a file that child survived is loaded into the gateway.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tests.support.tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.llm import model_probe
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import ModelLoadError
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(300)

# each: metadata keys llama.cpp reads with GGML_ASSERT (abort) rather than a thrown error
HOSTILE_KEYS = {
    "experts-used-without-experts": {"llama.expert_used_count": 1},
    "experts-past-the-maximum": {"llama.expert_count": 100_000, "llama.expert_used_count": 1},
    "experts-none-used": {"llama.expert_count": 4},
}


def _hostile(path: Path, keys: dict[str, int], **kw) -> Path:
    return write_tiny_gguf(path, extra_uint32=keys, chat_template=CHATML_TEMPLATE, **kw)


def _settings(model: Path, **kw) -> LlmSettings:
    return LlmSettings(model=str(model), n_ctx=1024, n_threads=1, seed=3, **kw)


@pytest.mark.parametrize("name", sorted(HOSTILE_KEYS))
async def test_a_file_that_aborts_llama_cpp_is_refused_and_the_process_lives(tmp_path: Path, name: str):
    model = _hostile(tmp_path / f"{name}.gguf", HOSTILE_KEYS[name])
    engine = LlamaEngine(_settings(model))
    with pytest.raises(ModelLoadError, match=rf"{name}\.gguf.*(crashed|killed).*SIGABRT") as err:
        await engine.load()
    assert str(tmp_path) not in str(err.value).split("gguf", 1)[1]  # the path is said once, not the log
    assert not engine.loaded
    # this process is still here to say so, and a good model still loads in it
    good = write_tiny_gguf(tmp_path / "good.gguf", chat_template=CHATML_TEMPLATE)
    ok = LlamaEngine(_settings(good))
    try:
        g = ok.generate_blocking(GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=3))
        assert g.completion_tokens >= 1
    finally:
        ok.close()


def test_a_child_that_aborts_is_what_the_probe_sees(tmp_path: Path):
    """The probe's verdict is the child's: without the probe, loading the same file here aborts (shown in a
    child of the test, never in the test's own process)."""
    import subprocess

    model = _hostile(tmp_path / "abort.gguf", HOSTILE_KEYS["experts-used-without-experts"])
    code = (
        "from llama_cpp import Llama\n"
        f"Llama(model_path={str(model)!r}, n_ctx=256, n_threads=1, verbose=False)\n"
        "print('loaded')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, check=False)
    assert r.returncode < 0 and "loaded" not in r.stdout  # killed by a signal


async def test_a_file_replaced_after_its_probe_is_probed_again(tmp_path: Path):
    model = write_tiny_gguf(tmp_path / "model.gguf", chat_template=CHATML_TEMPLATE)
    first = LlamaEngine(_settings(model))
    await first.load()
    first.close()
    probes = model_probe.PROBES.count
    again = LlamaEngine(_settings(model))
    await again.load()  # the same file, unchanged: not probed twice
    again.close()
    assert model_probe.PROBES.count == probes
    # the operator's file swapped for a hostile one at the same path (same size, even)
    hostile = _hostile(tmp_path / "swap.gguf", HOSTILE_KEYS["experts-used-without-experts"])
    os.replace(hostile, model)
    with pytest.raises(ModelLoadError, match="SIGABRT"):
        await LlamaEngine(_settings(model)).load()
    assert model_probe.PROBES.count == probes + 1
    with pytest.raises(ModelLoadError, match="SIGABRT"):  # its verdict remembered: no child per call
        await LlamaEngine(_settings(model)).load()
    assert model_probe.PROBES.count == probes + 1


def test_a_probe_past_its_time_is_the_files_verdict(tmp_path: Path):
    """No child finishes loading a model within a millisecond: the bound is met, the child killed, the file
    refused (a load or template that never ends meets it the same way, later)."""
    model = write_tiny_gguf(tmp_path / "slow.gguf", chat_template=CHATML_TEMPLATE)
    engine = LlamaEngine(_settings(model, model_probe_seconds=0.001))
    with pytest.raises(ModelLoadError, match=r"slow\.gguf did not finish within 0\.001 s in a probe process"):
        engine.generate_blocking(GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=3))
    assert not engine.loaded


def test_a_probe_that_cannot_run_loads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Fails closed: no word from the child is no leave to load (its interpreter gone, here)."""
    model = write_tiny_gguf(tmp_path / "unprobed.gguf", chat_template=CHATML_TEMPLATE)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    engine = LlamaEngine(_settings(model))
    with pytest.raises(ModelLoadError, match=r"unprobed\.gguf ended with status 1 before it could use"):
        engine.generate_blocking(GenerationRequest([{"role": "user", "content": "hi"}], max_tokens=3))
    assert not engine.loaded


async def test_the_gateway_survives_a_hostile_model_and_says_why(data_dir: Path, tmp_path: Path):
    (tmp_path / "models").mkdir()
    model = _hostile(tmp_path / "models" / "hostile.gguf", HOSTILE_KEYS["experts-past-the-maximum"])
    config = parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(data_dir),
                "builtins": ["llm"],
                "llm": {"model": str(model), "n_ctx": 1024, "n_threads": 1},
            },
        },
        source="<test>",
        base_dir=data_dir,
    )
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        for _ in range(2):
            r = await c.call_tool("llm__llm_generate", {"prompt": "Say hello."})
            assert r.is_error
            text = r.content[0].text
            assert "hostile.gguf" in text and "SIGABRT" in text
            assert str(tmp_path) not in text  # where the server keeps it is not the caller's
        status = await c.call_tool("llm__llm_status", {})
        assert not status.is_error and status.structured_content["loaded"] is False
