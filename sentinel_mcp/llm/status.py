"""What the local model is doing: loaded or not, which file, context size, threads, whether it is busy, the
grammar engine, the prompt (KV) cache, the last generation's latency and speed. One source for the
``llm_status`` tool, the ``llm://status`` resource, ``/healthz`` and the console's Model page.

A caller sees the shared facts (the model, its settings) and only its own party's figures: whether its own
call holds the model or waits (``busy``), how many of its calls wait, its prompt cache snapshots and hits,
the context's length when the context holds its tokens, its own generations. Another party's would tell it
what that party sent (a hit on a preamble, the length of a prompt) and when: ``busy`` was whether anyone's
generation ran, so a party polling it read when and how long another used the model. A party's view is the
same whatever others do; another's work shows only as its own calls waiting longer. Only the operator
(``/healthz`` for the owner's credential) sees the whole engine's (``operator_status``).

Read from the engine's public state only and never loads anything, so ``/healthz`` can show it cheaply.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

_EVERYONE = object()  # the operator's view: the whole engine's figures


def model_status(engine: Any, party: str | None) -> dict[str, Any]:
    """The status as ``party`` may see it: the shared facts and its own figures (none for None: a reader
    the server cannot name, such as the ``llm://status`` resource)."""
    return _status(engine, party)


def operator_status(engine: Any) -> dict[str, Any]:
    """Every party's figures together: for an operator who may see everything, never for a caller."""
    return _status(engine, _EVERYONE)


def _status(engine: Any, viewer: object) -> dict[str, Any]:
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
    turns = getattr(engine, "turns", None)
    in_turn = getattr(turns, "holder", None)  # the job holding the model's turn
    generating = in_flight is not None and _sees(viewer, getattr(in_turn, "party", None))
    waiting = _waiting(turns, viewer)
    history = _generations(engine, viewer)
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
        # the viewer's own generation runs or its calls wait (the operator: anyone's); None: a reader the
        # server cannot name has no calls
        "busy": None if viewer is None else bool(generating or waiting),
        # how far the running generation is: the viewer's own only
        "tokens_in_flight": in_flight if generating else None,
        # calls waiting for the model: the viewer's own (how many another party queued, and when, is that
        # party's); every party's together for the operator
        "waiting": waiting,
        "generations": _count(engine, viewer, history),  # the viewer's own (the operator: of those kept)
        **_caches_and_speed(engine, llm if loaded else None, viewer, history),
    }


def _generations(engine: Any, viewer: object) -> list[Any]:
    """The generations the viewer may see, newest last: everyone's kept for the operator; a party's own
    newest from its own count (``party_generations.py``), never filtered out of the shared history, which
    others' work moves."""
    if viewer is _EVERYONE:
        return list(getattr(engine, "history", ()) or ())
    own = getattr(engine, "party_generations", None)
    if not isinstance(viewer, str) or own is None:
        return []
    newest = own.of(viewer)[1]
    return [] if newest is None else [newest]


def _count(engine: Any, viewer: object, history: list[Any]) -> int | None:
    if viewer is None:
        return None
    if viewer is _EVERYONE:
        return len(history)
    own = getattr(engine, "party_generations", None)
    return own.of(viewer)[0] if own is not None and isinstance(viewer, str) else 0


def _waiting(turns: Any, viewer: object) -> int | None:
    if viewer is None:  # a reader the server cannot name has no calls of its own
        return None
    if turns is None:  # an engine not built yet: nothing waits
        return 0
    if viewer is _EVERYONE:
        return int(getattr(turns, "waiting_count", 0))
    by_party = turns.waiting() if callable(getattr(turns, "waiting", None)) else {}
    return int(by_party.get(viewer, 0))


def _sees(viewer: object, party: object) -> bool:
    return viewer is _EVERYONE or (viewer is not None and party == viewer)


def _caches_and_speed(engine: Any, llm: Any, viewer: object, history: list[Any]) -> dict[str, Any]:
    """The grammar engine, the viewer's prompt/KV cache figures, its last generation's speed, GPU layers."""
    out: dict[str, Any] = {
        "grammar_engine": None,
        "prompt_cache": None,
        "kv_tokens": None,
        "last_generation": None,
    }
    status = getattr(engine, "status", None)
    if callable(status):
        try:
            details = status(viewer if isinstance(viewer, str) else None)
        except Exception:  # noqa: BLE001 - a status page never fails because a detail could not be read
            details = {}
        out["grammar_engine"] = details.get("grammar_sampler")
        if viewer is not None:
            out["prompt_cache"] = details.get("prefix_cache")
    if llm is not None:
        n_tokens = getattr(llm, "n_tokens", None)
        cache = getattr(engine, "prefix_cache", None)
        # tokens held in the context now: the length of the last prompt and answer, the viewer's own only
        mine = viewer is _EVERYONE or (
            isinstance(viewer, str) and cache is not None and cache.holds_context_of(viewer)
        )
        out["kv_tokens"] = n_tokens if isinstance(n_tokens, int) and mine else None
        params = getattr(llm, "model_params", None)
        layers = getattr(params, "n_gpu_layers", None)
        if isinstance(layers, int):  # what llama.cpp reports once loaded; else the setting stays
            out["gpu_layers"] = layers
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
