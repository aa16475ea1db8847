"""The llm built-in's Cortex, built on its first use rather than at start (issue 21: building it imports the
engine module, a tenth of a second of a cold start, for a model most starts never call).

Shared with ``/healthz``, ``llm://status``, ``llm_status`` and the console, which read ``.engine`` and never
build anything: before the first build that is ``UnbuiltEngine``, which reports exactly what a fresh engine
would (``loaded: false``, no model, empty caches), since none is loaded yet either way.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import anyio

from sentinel_mcp.llm import prefix_cache
from sentinel_mcp.llm.errors import ModelLoadError
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.prefix_cache import PrefixCache
from sentinel_mcp.llm.settings import LlmSettings

if TYPE_CHECKING:
    from sentinel_mcp.llm.cortex import Cortex

_PROBLEM_CHARS = 2000  # an exception's text is unbounded; health shows its start


class UnbuiltEngine:
    """Status of the engine not made yet: the same public facts a fresh ``LlamaEngine`` shows (llm/status.py
    reads settings, loaded, history, turns, prefix_cache, status()); nothing here loads or imports the
    engine."""

    loaded = False
    model_name = "(not loaded)"
    load_seconds = None
    tokens_in_flight = None
    turns = None
    history: tuple[Any, ...] = ()
    _llm = None

    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings
        self.prefix_cache = PrefixCache(
            settings.prefix_cache_mb * 1024 * 1024, prefix_cache.PER_PARTY, prefix_cache.PARTIES
        )

    def status(self, party: str | None = None) -> dict[str, Any]:
        # the engine's own words before its first load (engine.LlamaEngine.status)
        configured = self.settings.grammar_sampler == "llama_cpp"
        return {
            "model": self.model_name,
            "loaded": False,
            "n_ctx": None,
            "load_seconds": None,
            "tokenizer_seconds": None,
            "grammar_sampler": "llama_cpp (configured)" if configured else "llguidance",
            "prefix_cache": self.prefix_cache.figures(party),
        }


class LazyCortex:
    """Builds the ``Cortex`` once, on the first call that needs it; two first calls at once build it once.
    Any attribute of the Cortex other than ``engine``, ``grammars`` and ``settings`` builds it (in-process
    callers keep the Cortex API); the tools await ``ready()`` so the build runs off the event loop."""

    def __init__(self, settings: LlmSettings, grammars: GrammarRegistry, built: Cortex | None = None) -> None:
        self.settings = settings
        self.grammars = grammars  # loaded and checked at start: a broken file still stops start-up
        self._cortex = built
        self._lock = threading.Lock()
        self._unbuilt = UnbuiltEngine(settings)
        # why the last build failed (None: none failed, or one worked since): /healthz says degraded with it
        # rather than showing the unbuilt engine's status as if nothing were wrong
        self.problem: str | None = None

    @property
    def built(self) -> bool:
        return self._cortex is not None

    @property
    def engine(self) -> Any:
        """The running engine, or before the first build its stand-in: read by status pages, never builds."""
        cortex = self._cortex
        return cortex.engine if cortex is not None else self._unbuilt

    def get(self) -> Cortex:
        """The Cortex, built now if it is not yet (blocking: the engine module's import). A failed build is a
        ``ModelLoadError`` (a tool error with its text, as a model that cannot load) and is tried again next
        time."""
        cortex = self._cortex
        if cortex is not None:
            return cortex
        with self._lock:
            if self._cortex is None:
                try:
                    from sentinel_mcp.llm.cortex import Cortex

                    self._cortex = Cortex(self.settings, grammars=self.grammars)
                except Exception as exc:  # noqa: BLE001 - any failure to start the engine is the model's
                    error = ModelLoadError(f"the local model engine could not be started: {exc}")
                    self.problem = str(error)[:_PROBLEM_CHARS]
                    raise error from exc
                self.problem = None
            return self._cortex

    async def ready(self) -> Cortex:
        """``get()`` off the event loop (the first build imports the engine)."""
        cortex = self._cortex
        if cortex is not None:
            return cortex
        return await anyio.to_thread.run_sync(self.get)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.get(), name)


__all__ = ["LazyCortex", "UnbuiltEngine"]
