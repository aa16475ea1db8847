"""What the local model is doing: loaded or not, which file, context size, threads, whether it is busy, the
grammar engine, the prompt (KV) cache, the last generation's latency and speed. One source for the
``llm_status`` tool, the ``llm://status`` resource, ``/healthz`` and the console's Model page.

Read from the engine's public state only and never loads anything, so ``/healthz`` can show it cheaply.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def model_status(engine: Any) -> dict[str, Any]:
    settings = getattr(engine, "settings", None)
    loaded = bool(getattr(engine, "loaded", False))
    in_flight = getattr(engine, "tokens_in_flight", None)
    path = getattr(settings, "model", None) or os.environ.get("SENTINEL_MODEL")
    # the file's name only: every principal may ask, and where the server keeps its files is not theirs
    configured = Path(path).name if path else "the small model package"
    llm = getattr(engine, "_llm", None)
    n_ctx = (
        llm.n_ctx()
        if (loaded and llm is not None and hasattr(llm, "n_ctx"))
        else getattr(settings, "n_ctx", None)
    )
    return {
        "loaded": loaded,
        "model": getattr(engine, "model_name", None) if loaded else None,
        "configured": str(configured),
        "context_tokens": n_ctx,
        "threads": getattr(settings, "n_threads", None) or os.cpu_count() or 1,
        "gpu_layers": getattr(settings, "gpu_layers", 0),
        "gpu_offload": _gpu_offload(getattr(settings, "gpu_layers", 0)),
        "max_tokens": getattr(settings, "max_tokens", None),
        "load_seconds": round(engine.load_seconds, 2) if getattr(engine, "load_seconds", None) else None,
        "busy": in_flight is not None,
        "tokens_in_flight": in_flight,
        # calls waiting for the model, all parties together (counts only: who waits is nobody else's business)
        "waiting": getattr(getattr(engine, "turns", None), "waiting_count", 0),
        "generations": len(getattr(engine, "history", ()) or ()),
        **_caches_and_speed(engine, llm if loaded else None),
    }


def _caches_and_speed(engine: Any, llm: Any) -> dict[str, Any]:
    """The grammar engine, the prompt/KV cache, the last generation's speed, GPU layers (when known)."""
    out: dict[str, Any] = {
        "grammar_engine": None,
        "prompt_cache": None,
        "kv_tokens": None,
        "last_generation": None,
    }
    status = getattr(engine, "status", None)
    if callable(status):
        try:
            details = status()
        except Exception:  # noqa: BLE001 - a status page never fails because a detail could not be read
            details = {}
        out["grammar_engine"] = details.get("grammar_sampler")
        out["prompt_cache"] = details.get("prefix_cache")
    if llm is not None:
        n_tokens = getattr(llm, "n_tokens", None)
        out["kv_tokens"] = n_tokens if isinstance(n_tokens, int) else None  # tokens held in the context now
        params = getattr(llm, "model_params", None)
        layers = getattr(params, "n_gpu_layers", None)
        if isinstance(layers, int):  # what llama.cpp reports once loaded; else the setting stays
            out["gpu_layers"] = layers
    history = list(getattr(engine, "history", ()) or ())
    if history:
        last = history[-1]
        seconds = max(0.0, float(last.finished) - float(last.started))
        out["last_generation"] = {
            "seconds": round(seconds, 3),
            "completion_tokens": last.completion_tokens,
            "tokens_per_second": round(last.completion_tokens / seconds, 1) if seconds > 0 else None,
            "cancelled": last.cancelled,
        }
    return out


def _gpu_offload(layers: int) -> str:
    """Whether the configured layers really go to a GPU: only when llama.cpp was built with GPU support."""
    if not layers:
        return "off (gpu_layers is 0)"
    try:
        import llama_cpp

        supported = bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:  # noqa: BLE001 - no llama.cpp here: nothing is offloaded
        return "unavailable (llama.cpp is not installed)"
    if not supported:
        return "unavailable (this llama.cpp build has no GPU support; every layer runs on the CPU)"
    return "all layers" if layers < 0 else f"{layers} layers"
