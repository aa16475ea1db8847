"""LlamaEngine: one llama.cpp model per process, loaded lazily, used by one generation at a time.

llama.cpp's context is not thread-safe, so a single lock serializes generations; each runs in a
worker thread so the event loop keeps serving. A generation whose awaiting task is cancelled is
stopped at the next token through a stopping criterion that reads a flag.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio

from sentinel_mcp.llm.errors import ContextOverflow, GenerationCancelled, GrammarError, ModelLoadError, ModelUnavailable
from sentinel_mcp.llm.model_source import check_gguf_header, resolve_model_path
from sentinel_mcp.llm.prompt_format import render_prompt
from sentinel_mcp.llm.settings import LlmSettings

Progress = Callable[[int, int], Awaitable[None]]  # (completion tokens so far, max tokens)
LOCK_POLL_SECONDS = 0.05
PROGRESS_EVERY_SECONDS = 0.5
CANCEL_GRACE_SECONDS = 60.0


@dataclass
class GenerationRequest:
    messages: list[dict[str, str]]  # [{"role": "system"|"user"|"assistant", "content": ...}]
    max_tokens: int = 256
    temperature: float | None = None  # None: the settings' temperature
    grammar: str | None = None  # GBNF text
    grammar_label: str = "grammar"  # names the grammar in errors (file name or "json_schema")
    seed: int | None = None


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" (natural end or grammar complete) | "length" (hit max_tokens)
    model: str
    prompt_format: str  # "chat_template" | "plain"
    seconds: float
    first_token_seconds: float | None


@dataclass
class GenerationRecord:
    """When a generation held the model: the evidence that generations never overlap."""

    started: float
    finished: float
    completion_tokens: int
    cancelled: bool


@dataclass
class _Job:
    cancel: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    tokens: int = 0
    started_at: float = 0.0
    first_token_at: float | None = None


class LlamaEngine:
    def __init__(self, settings: LlmSettings | None = None) -> None:
        self.settings = settings or LlmSettings()
        self._lock = threading.Lock()
        self._llm: Any = None
        self._path: Path | None = None
        self._grammars: dict[str, Any] = {}  # GBNF text -> compiled LlamaGrammar (checked natively)
        self.history: deque[GenerationRecord] = deque(maxlen=256)
        self.load_seconds: float | None = None
        self._current: _Job | None = None  # the generation holding the model, if any

    # --- model ------------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        return self._llm is not None

    @property
    def tokens_in_flight(self) -> int | None:
        """Tokens sampled so far by the running generation; None when the model is idle."""
        job = self._current
        return job.tokens if job is not None else None

    @property
    def model_name(self) -> str:
        return self._path.name if self._path else "(not loaded)"

    def resolve(self) -> Path:
        """The model file this engine uses (ModelUnavailable says how to get one)."""
        return resolve_model_path(self.settings.model)

    async def load(self) -> None:
        await anyio.to_thread.run_sync(self._load_locked)

    def _load_locked(self) -> None:
        with self._lock:
            self._ensure_loaded()

    def _ensure_loaded(self) -> Any:
        if self._llm is not None:
            return self._llm
        path = self.resolve()
        check_gguf_header(path)
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ModelUnavailable("llama-cpp-python is not installed: `pip install 'sentinel-mcp[llm]'` "
                                   "(see the README for the portable build flags)") from None
        s = self.settings
        t0 = time.perf_counter()
        try:
            llm = Llama(model_path=str(path), n_ctx=s.n_ctx, n_threads=s.n_threads or os.cpu_count() or 1,
                        n_batch=min(s.n_batch, s.n_ctx), verbose=False)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(f"llama.cpp could not load {path}: the file is corrupt, truncated or of an "
                                 f"unsupported architecture ({exc})") from None
        self.load_seconds = time.perf_counter() - t0
        self._llm, self._path = llm, path
        return llm

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
            self._llm, self._grammars = None, {}

    # --- grammars ---------------------------------------------------------------------------------
    def _compiled_grammar(self, llm: Any, text: str, label: str) -> Any:
        grammar = self._grammars.get(text)
        if grammar is not None:
            return grammar
        import llama_cpp
        from llama_cpp import LlamaGrammar

        # llama-cpp-python does not parse the grammar; a NULL sampler added to the chain would crash.
        sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, text.encode("utf-8"), b"root")
        if not sampler:
            raise GrammarError(f"{label}: llama.cpp rejected the grammar (syntax, undefined rule or left "
                               "recursion; llama.cpp printed the details on stderr)")
        llama_cpp.llama_sampler_free(sampler)
        grammar = LlamaGrammar.from_string(text, verbose=False)
        self._grammars[text] = grammar
        return grammar

    def check_grammar(self, text: str, label: str) -> None:
        """Compile ``text`` with llama.cpp (loads the model if needed)."""
        with self._lock:
            self._compiled_grammar(self._ensure_loaded(), text, label)

    # --- generation -------------------------------------------------------------------------------
    async def generate(self, request: GenerationRequest, progress: Progress | None = None) -> Generation:
        """Generate off the event loop; waits its turn; stops the generation when the caller is cancelled."""
        job = _Job()

        async def report() -> None:
            last = -1
            while True:
                await anyio.sleep(PROGRESS_EVERY_SECONDS)
                if progress is not None and job.tokens > max(last, 0):
                    last = job.tokens
                    await progress(last, request.max_tokens)

        result: Generation | None = None
        error: Exception | None = None
        try:
            async with anyio.create_task_group() as tg:
                if progress is not None:
                    tg.start_soon(report)
                try:
                    # abandon_on_cancel: the await ends at once; the flag below stops the thread.
                    result = await anyio.to_thread.run_sync(self._run, request, job, abandon_on_cancel=True)
                except Exception as exc:  # noqa: BLE001 - re-raised below, outside the group (no ExceptionGroup)
                    error = exc
                finally:
                    tg.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            job.cancel.set()
            with anyio.CancelScope(shield=True):
                # hold the caller until the model is free again, so a cancelled call leaves nothing running
                with anyio.move_on_after(CANCEL_GRACE_SECONDS):
                    while not job.finished.is_set():
                        await anyio.sleep(0.01)
            raise
        if error is not None:
            raise error
        assert result is not None
        return result

    def generate_blocking(self, request: GenerationRequest, cancel: threading.Event | None = None) -> Generation:
        """The same, for callers already on a worker thread."""
        job = _Job(cancel=cancel or threading.Event())
        return self._run(request, job)

    def _run(self, request: GenerationRequest, job: _Job) -> Generation:
        try:
            while not self._lock.acquire(timeout=LOCK_POLL_SECONDS):
                if job.cancel.is_set():
                    raise GenerationCancelled("cancelled while waiting for the model")
            self._current = job
            try:
                return self._generate_locked(request, job)
            finally:
                self._current = None
                self._lock.release()
        finally:
            job.finished.set()

    def _generate_locked(self, request: GenerationRequest, job: _Job) -> Generation:
        from llama_cpp import StoppingCriteriaList

        if job.cancel.is_set():
            raise GenerationCancelled("cancelled before the generation started")
        llm = self._ensure_loaded()
        s = self.settings
        grammar = self._compiled_grammar(llm, request.grammar, request.grammar_label) if request.grammar else None
        prompt = render_prompt(llm, request.messages)
        # special=True: the template's role tokens must be real control tokens; user text was sanitized.
        tokens = llm.tokenize(prompt.text.encode("utf-8"), add_bos=not prompt.added_special, special=True)
        n_ctx = llm.n_ctx()
        if len(tokens) >= n_ctx - 1:
            raise ContextOverflow(f"the prompt is {len(tokens)} tokens but the model's context window is {n_ctx} "
                                  "tokens; shorten the prompt or context, or raise sentinel.llm.n_ctx")
        max_tokens = max(1, min(request.max_tokens, n_ctx - len(tokens) - 1))

        def stop_when_cancelled(_ids: Any, _logits: Any) -> bool:
            job.tokens += 1
            if job.first_token_at is None:
                job.first_token_at = time.perf_counter()
            return job.cancel.is_set()

        temperature = s.temperature if request.temperature is None else request.temperature
        seed = request.seed if request.seed is not None else s.seed
        job.started_at = time.perf_counter()
        record = GenerationRecord(time.monotonic(), 0.0, 0, False)
        try:
            out = llm.create_completion(
                tokens, max_tokens=max_tokens, temperature=temperature, top_p=s.top_p, top_k=s.top_k,
                repeat_penalty=s.repeat_penalty, seed=seed if seed is not None else secrets.randbits(31),
                grammar=grammar, stop=None if grammar else (prompt.stop or None),
                stopping_criteria=StoppingCriteriaList([stop_when_cancelled]))
        finally:
            record.finished = time.monotonic()
            record.cancelled = job.cancel.is_set()
            record.completion_tokens = job.tokens
            self.history.append(record)
        if job.cancel.is_set():
            raise GenerationCancelled(f"generation cancelled after {job.tokens} tokens")
        choice, usage = out["choices"][0], out["usage"]
        record.completion_tokens = usage["completion_tokens"]
        return Generation(
            text=choice["text"], prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
            finish_reason=choice.get("finish_reason") or "stop", model=self.model_name, prompt_format=prompt.format,
            seconds=time.perf_counter() - job.started_at,
            first_token_seconds=(job.first_token_at - job.started_at) if job.first_token_at else None)


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
