"""LlamaEngine: one llama.cpp model per process, loaded lazily, used by one generation at a time.

llama.cpp's context is not thread-safe, so generations take turns (``model_turns``), shared fairly between
the parties asking (``fair_turns``: round-robin, bounded waiting); each runs in a worker thread so the event
loop keeps serving. A generation whose awaiting task is cancelled is
stopped at the next token (a flag read once per token on both decoding paths). No generation holds the
model past ``max_generation_seconds``: the clock is read between prompt batches and once per token, and a
generation past it ends there (free text marked ``time_limit``, grammar output refused as incomplete).

Grammar-constrained output goes through llguidance's token masks (``masked_decoding``) unless the
settings ask for llama.cpp's own grammar sampler or llguidance cannot take the grammar; then the
old sampler runs (in a child process whose every step is bounded: ``grammar_process``) and the reason is
logged. Compiled grammars are kept per party (``grammar_cache``), never
shared by content between callers. Prompt preambles are restored from KV snapshots, each party's own,
and the context is reused only by the party that filled it (``prefix_cache``).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from sentinel_mcp.llm.decoding_paths import DecodingPaths
from sentinel_mcp.llm.party_generations import PartyGenerations
from sentinel_mcp.llm.generation_types import (  # (their home before: still imported from here)
    IN_PROCESS_PARTY as IN_PROCESS_PARTY,
    Generation,
    GenerationRecord,
    GenerationRequest,
)
from sentinel_mcp.llm.errors import (
    ContextOverflow,
    GenerationCancelled,
    ModelLoadError,
    ModelUnavailable,
)
from sentinel_mcp.llm.grammar_process import GrammarChild, child_for
from sentinel_mcp.llm.masked_decoding import (
    MaskError,
    ParserRefused,
    SamplingParams,
)
from sentinel_mcp.llm.model_source import check_gguf_header, resolve_model_path
from sentinel_mcp.llm.model_turns import ENGINE_PARTY, ModelTurns, _Job
from sentinel_mcp.core.closed_at_exit import forget, remember
from sentinel_mcp.llm import model_probe, prefix_cache
from sentinel_mcp.llm.prefix_cache import PrefixCache
from sentinel_mcp.llm.control_tokens import ControlTexts
from sentinel_mcp.llm import caller_grammars, grammar_cache
from sentinel_mcp.llm.grammar_cache import GrammarCache
from sentinel_mcp.llm.prompt_format import render_preamble, render_prompt
from sentinel_mcp.llm.sanitizer import unicode_text
from sentinel_mcp.llm.settings import LlmSettings
from sentinel_mcp.llm.token_masks import UnsupportedGrammar

log = logging.getLogger(__name__)

Progress = Callable[[int, int], Awaitable[None]]  # (completion tokens so far, max tokens)
PROGRESS_EVERY_SECONDS = 0.5
FIRST_PROGRESS_POLL_SECONDS = 0.02
MAX_LOGGED_FALLBACKS = 64  # (label, reason) pairs remembered, least recently seen out


class LlamaEngine(ModelTurns, DecodingPaths):
    def __init__(
        self,
        settings: LlmSettings | None = None,
        *,
        grammars_per_party: int = grammar_cache.PER_PARTY,
        grammar_parties: int = grammar_cache.PARTIES,
        prefix_per_party: int = prefix_cache.PER_PARTY,
        prefix_parties: int = prefix_cache.PARTIES,
        probe: bool = True,
    ) -> None:
        """``probe``: use each model file in a child process before loading it here (model_probe); False
        only in that child."""
        settings = settings or LlmSettings()
        super().__init__(settings.max_queued_per_party, settings.max_queued)
        self.settings = settings
        self._llm: Any = None
        self._path: Path | None = None
        # llama.cpp's and llguidance's compiled grammars, each party's own
        self.grammar_cache = GrammarCache(grammars_per_party, grammar_parties)
        # fallbacks already logged, so a repeated one is not logged on every call; an LRU, so that past the
        # bound the newest are still remembered (a full set stopped remembering and logged every call)
        self._fallbacks_logged: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._control_texts: tuple[Any, ControlTexts] | None = None  # (the model it was read from, its texts)
        # KV snapshots of preambles, each party's own
        self.prefix_cache = PrefixCache(
            self.settings.prefix_cache_mb * 1024 * 1024, prefix_per_party, prefix_parties
        )
        self.n_ctx: int | None = None  # the context window in use (after the model's own cap)
        self.history: deque[GenerationRecord] = deque(maxlen=256)  # everyone's newest: the operator's view
        self.party_generations = PartyGenerations()  # each party's own, apart from the others' volume
        self.load_seconds: float | None = None
        self._probe = probe
        self.grammar_child: GrammarChild | None = None  # llama.cpp's grammar sampler, bounded

    # --- model ------------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self._llm is not None

    @property
    def model_name(self) -> str:
        return self._path.name if self._path else "(not loaded)"

    def resolve(self) -> Path:
        """The model file this engine uses (ModelUnavailable says how to get one)."""
        return resolve_model_path(self.settings.model)

    def _controls(self, llm: Any) -> ControlTexts:
        """The loaded model's control tokens (read once a model: 262,000 tokens take ~0.1 s)."""
        if self._control_texts is None or self._control_texts[0] is not llm:
            self._control_texts = (llm, ControlTexts.of_model(llm))
        return self._control_texts[1]

    def _ensure_loaded(self) -> Any:
        if self._llm is not None:
            return self._llm
        path = self.resolve()
        check_gguf_header(path)
        if self._probe:  # a file that kills llama.cpp kills a child, never the gateway
            s = self.settings
            model_probe.ensure_survivable(path, s.grammar_sampler, s.model_probe_seconds)
        try:
            from llama_cpp import Llama

            from sentinel_mcp.llm import inert_templates
        except ImportError:
            raise ModelUnavailable("llama-cpp-python is not installed: `pip install 'sentinel-mcp[llm]'` "
                                   "(see the README for the portable build flags)") from None
        inert_templates.install()  # Llama() compiled the file's Jinja here; template_process renders it
        t0 = time.perf_counter()
        llm = self._open(Llama, path, self.settings.n_ctx)
        trained = llm._model.n_ctx_train()
        if 0 < trained < self.settings.n_ctx:
            # beyond its trained context a model degrades; the default asks for more than small models have
            log.info(
                "%s was trained on %d tokens of context; using n_ctx=%d instead of %d",
                path.name,
                trained,
                trained,
                self.settings.n_ctx,
            )
            llm.close()
            llm = self._open(Llama, path, trained)
        self.load_seconds = time.perf_counter() - t0
        self._llm, self._path, self.n_ctx = llm, path, llm.n_ctx()
        remember(self)
        return llm

    def _open(self, llama_class: Any, path: Path, n_ctx: int) -> Any:
        s = self.settings
        try:
            return llama_class(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=s.n_threads or os.cpu_count() or 1,
                n_batch=min(s.n_batch, n_ctx),
                n_gpu_layers=s.gpu_layers,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(
                f"llama.cpp could not load {path}: the file is corrupt, truncated or of an "
                f"unsupported architecture ({exc})"
            ) from None

    def close(self) -> None:
        """Free the model (waits for a running generation to finish; goes before the turns waiting)."""
        turn = self._wait_turn_blocking(_Job(), ENGINE_PARTY, first=True)
        try:
            if self._llm is not None:
                self._llm.close()
            self._llm, self.n_ctx = None, None
            if self.grammar_child is not None:
                self.grammar_child.stop()
                self.grammar_child = None
            self.grammar_cache = GrammarCache(self.grammar_cache.per_party, self.grammar_cache.parties)
            self.prefix_cache.clear()
        finally:
            self.turns.done(turn)
        forget(self)

    # --- which grammar sampler ---------------------------------------------------------------------
    def _matcher(self, llm: Any, gbnf: str, request: GenerationRequest) -> tuple[Any | None, str | None]:
        """An llguidance matcher for the request's grammar, or (None, why not) for llama.cpp's sampler."""
        if self.settings.grammar_sampler == "llama_cpp":
            return None, None  # chosen, not a fallback
        try:
            return self.grammar_cache.matcher(llm, request.party, gbnf, request.json_schema), None
        except UnsupportedGrammar as exc:
            if request.json_schema is not None:  # a caller's: bounded cost or refused (caller_grammars)
                return caller_grammars.schema_matcher(self.grammar_cache, llm, request.party, gbnf, exc), None
            reason = str(exc)
            key = (request.grammar_label, reason)
            if key in self._fallbacks_logged:
                self._fallbacks_logged.move_to_end(key)
            else:
                self._fallbacks_logged[key] = None
                while len(self._fallbacks_logged) > MAX_LOGGED_FALLBACKS:
                    self._fallbacks_logged.popitem(last=False)
                log.warning(
                    "%s: llguidance cannot take it (%s); using llama.cpp's grammar sampler",
                    request.grammar_label,
                    reason,
                )
            return None, reason

    def grammar_sampler_for(
        self, grammar: str | None = None, json_schema: dict[str, Any] | None = None, label: str = "grammar"
    ) -> tuple[str, str | None]:
        """("llguidance" | "llama_cpp", the reason for a fallback) for a grammar; loads the model. Blocking.
        """
        job = _Job()
        turn = self._wait_turn_blocking(job, ENGINE_PARTY)

        def which() -> tuple[str, str | None]:
            llm = self._ensure_loaded()
            gbnf = grammar
            if gbnf is None:
                from sentinel_mcp.llm.schema_grammar import compile_schema

                gbnf = compile_schema(json_schema)
            self.grammar_cache.llama_grammar(self._check_natively, ENGINE_PARTY, gbnf, label)
            matcher, reason = self._matcher(
                llm,
                gbnf,
                GenerationRequest(
                    [], grammar=gbnf, grammar_label=label, json_schema=json_schema, party=ENGINE_PARTY
                ),
            )
            return ("llguidance", None) if matcher is not None else ("llama_cpp", reason)

        return self._holding_turn(which, job, turn)

    def status(self, party: str | None = None) -> dict[str, Any]:
        """What the engine runs on and what its caches hold: ``party``'s own prompt cache figures, or the
        whole cache's for None (the operator's health page, benchmarks)."""
        if self.settings.grammar_sampler == "llama_cpp":
            sampler = "llama_cpp (configured)"
        elif self.grammar_cache.masks_unavailable:
            sampler = f"llama_cpp (llguidance unavailable: {self.grammar_cache.masks_unavailable})"
        else:
            sampler = "llguidance"
        return {
            "model": self.model_name,
            "loaded": self.loaded,
            "n_ctx": self.n_ctx,
            "load_seconds": self.load_seconds,
            "tokenizer_seconds": self.grammar_cache.tokenizer_seconds,
            "grammar_sampler": sampler,
            "prefix_cache": self.prefix_cache.figures(party),
        }

    async def load(self) -> None:
        """Load the model (and llguidance's view of its vocabulary) now; otherwise the first call does."""

        def load_all() -> None:
            llm = self._ensure_loaded()
            if self.settings.grammar_sampler == "llguidance":
                try:
                    self.grammar_cache.mask_compiler(llm)
                except UnsupportedGrammar as exc:
                    log.warning("llguidance unavailable (%s); grammars use llama.cpp's sampler", exc)

        await self._in_turn(load_all, _Job(), ENGINE_PARTY)

    def check_grammar(self, text: str, label: str) -> None:
        """Compile ``text`` with llama.cpp (loads the model if needed). Blocking."""
        job = _Job()
        turn = self._wait_turn_blocking(job, ENGINE_PARTY)
        self._holding_turn(lambda: self._check_loaded(text, label), job, turn)

    def _check_loaded(self, text: str, label: str) -> None:
        self._ensure_loaded()
        self.grammar_cache.llama_grammar(self._check_natively, ENGINE_PARTY, text, label)

    def _grammar_process(self) -> GrammarChild:
        """The loaded model's grammar process (``grammar_process``), made on first use."""
        assert self._path is not None
        self.grammar_child = child_for(self.grammar_child, self._path, self.settings.grammar_step_seconds)
        return self.grammar_child

    def _check_natively(self, text: str, label: str) -> None:
        """llama.cpp's parser and the grammar's start, in the bounded grammar process (GrammarError)."""
        self._grammar_process().check(text, label, self.settings.grammar_step_seconds)

    # --- generation -------------------------------------------------------------------------------
    async def generate(self, request: GenerationRequest, progress: Progress | None = None) -> Generation:
        """Generate off the event loop; waits its party's turn (``ModelBusy`` at once when too many wait);
        stops the generation when the caller is cancelled."""
        job = _Job(check=request.check)
        if progress is None:
            return await self._in_turn(lambda: self._generate_locked(request, job), job, request.party)

        async def report() -> None:
            # the first report as soon as tokens flow (a wait for the model's turn or load is not
            # generation), then one per interval: a short generation is still seen to start
            last = 0
            while job.tokens == 0:
                await anyio.sleep(FIRST_PROGRESS_POLL_SECONDS)
            while True:
                if job.tokens > last:
                    last = job.tokens
                    await progress(last, request.max_tokens)
                await anyio.sleep(PROGRESS_EVERY_SECONDS)

        result: Generation | None = None
        error: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(report)
            try:
                result = await self._in_turn(lambda: self._generate_locked(request, job), job, request.party)
            except Exception as exc:  # noqa: BLE001 - re-raised below, outside the group (no ExceptionGroup)
                error = exc
            finally:
                tg.cancel_scope.cancel()
        if error is not None:
            raise error
        assert result is not None
        return result

    def generate_blocking(
        self, request: GenerationRequest, cancel: threading.Event | None = None
    ) -> Generation:
        """The same, for callers already on a worker thread; set ``cancel`` to stop it."""
        job = _Job(cancel=cancel or threading.Event(), check=request.check)
        turn = self._wait_turn_blocking(job, request.party)
        if not job.still_holds("as its turn of the model came"):  # as ``_in_turn`` asks on the event loop
            self.turns.done(turn)
            raise job.lapse  # type: ignore[misc]
        return self._holding_turn(lambda: self._generate_locked(request, job), job, turn)

    def _generate_locked(self, request: GenerationRequest, job: _Job) -> Generation:
        if job.cancel.is_set():
            raise GenerationCancelled("cancelled before the generation started")
        s = self.settings
        job.deadline = time.perf_counter() + s.max_generation_seconds  # the turn's clock starts with it
        llm = self._ensure_loaded()
        gbnf = request.grammar
        if gbnf is None and request.json_schema is not None:
            from sentinel_mcp.llm.schema_grammar import compile_schema

            gbnf = compile_schema(request.json_schema)
        # llama.cpp compiles every grammar: its parser is the authority, and it is the fallback sampler
        cache, party = self.grammar_cache, request.party
        if gbnf:
            cache.llama_grammar(self._check_natively, party, gbnf, request.grammar_label)
        matcher, reason = self._matcher(llm, gbnf, request) if gbnf else (None, None)
        # special=True: the template's role tokens must be real control tokens; what a message spells never is
        for m in request.messages:  # an in-process caller's text (the swarm's) is checked here, by the sink
            unicode_text(m.get("content", ""), f"the {m.get('role', 'message')} message")
        messages = self._controls(llm).messages(request.messages)
        prompt = render_prompt(llm, messages)
        tokens = llm.tokenize(prompt.text.encode("utf-8"), add_bos=not prompt.added_special, special=True)
        n_ctx = llm.n_ctx()
        if len(tokens) >= n_ctx - 1:
            raise ContextOverflow(
                f"the prompt is {len(tokens)} tokens but the model's context window is {n_ctx} "
                "tokens; shorten the prompt or context, or raise sentinel.llm.n_ctx"
            )
        max_tokens = max(1, min(request.max_tokens, n_ctx - len(tokens) - 1))
        boundary = self._preamble_length(llm, messages, prompt, tokens)
        temperature = s.temperature if request.temperature is None else request.temperature
        seed = request.seed if request.seed is not None else s.seed
        params = SamplingParams(
            temperature,
            s.top_p,
            s.top_k,
            s.repeat_penalty,
            seed if seed is not None else secrets.randbits(31),
        )
        job.started_at = time.perf_counter()
        record = GenerationRecord(time.monotonic(), 0.0, 0, False, request.party)
        result: Generation | None = None
        try:
            if matcher is not None:
                try:
                    result = self._decode_with_masks(
                        llm, party, tokens, boundary, matcher, params, max_tokens, prompt, job,
                        request.grammar_label,
                    )
                except MaskError as exc:
                    reason = f"llguidance failed after {job.tokens} tokens ({exc})"
                    # a caller's schema past llguidance's cost limits is not run on llama.cpp's sampler; one
                    # llguidance's own parser fault stopped (a token its mask allowed, refused) is, as the
                    # operator's are: the schema was within llguidance's bounds, and a random-weight model
                    # hits that fault on sound schemas (the swarm's plan)
                    if request.json_schema is not None and not isinstance(exc, ParserRefused):
                        log.warning("%s: %s; refused", request.grammar_label, reason)
                        label = request.grammar_label
                        raise caller_grammars.refused_mid_way(exc, job.tokens, label) from None
                    log.warning(
                        "%s: %s; generating again with llama.cpp's grammar sampler",
                        request.grammar_label,
                        reason,
                    )
                    job.tokens, job.first_token_at = 0, None
            if result is None and gbnf:
                result = self._decode_with_llama_grammar(
                    llm, party, tokens, boundary, gbnf, reason, params, max_tokens, prompt, job,
                    request.grammar_label,
                )
            if result is None:
                result = self._decode_with_llama(
                    llm, party, tokens, boundary, params, max_tokens, prompt, job
                )
            return result
        finally:
            record.finished = time.monotonic()
            record.cancelled = job.cancel.is_set() or job.lapse is not None  # stopped for its caller
            record.completion_tokens = result.completion_tokens if result else job.tokens
            self.history.append(record)
            self.party_generations.add(record.party, record)

    def _preamble_length(
        self, llm: Any, messages: list[dict[str, str]], prompt: Any, tokens: list[int]
    ) -> int | None:
        """How many leading prompt tokens are the shared preamble (everything before the user's content)."""
        if not self.prefix_cache.enabled:
            return None
        text = render_preamble(llm, messages, prompt)
        if not text:
            return None
        head = llm.tokenize(text.encode("utf-8"), add_bos=not prompt.added_special, special=True)
        n = 0
        for a, b in zip(head, tokens, strict=False):
            if a != b:
                break
            n += 1
        return n or None


_SHARED: dict[tuple[Any, ...], LlamaEngine] = {}
_SHARED_LOCK = threading.Lock()


def shared_engine(settings: LlmSettings) -> LlamaEngine:
    """One engine (one loaded model) per process for a given model and context setup."""
    key = (settings.model_dump_json(), os.environ.get("SENTINEL_MODEL"))
    with _SHARED_LOCK:
        engine = _SHARED.get(key)
        if engine is None:
            engine = _SHARED[key] = LlamaEngine(settings)
        return engine
