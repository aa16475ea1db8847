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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio

from sentinel_mcp.llm.errors import (
    ContextOverflow,
    GenerationCancelled,
    GrammarError,
    ModelLoadError,
    ModelUnavailable,
)
from sentinel_mcp.llm.model_source import check_gguf_header, resolve_model_path
from sentinel_mcp.llm.prompt_format import render_prompt
from sentinel_mcp.llm.settings import LlmSettings

_T = TypeVar("_T")
Progress = Callable[[int, int], Awaitable[None]]  # (completion tokens so far, max tokens)
LOCK_POLL_SECONDS = 0.05
PROGRESS_EVERY_SECONDS = 0.5
CANCEL_GRACE_SECONDS = 60.0
MAX_CACHED_GRAMMARS = 64


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
    _state: threading.Lock = field(default_factory=threading.Lock)
    _entered: bool = False
    _abandoned: bool = False

    def enter(self) -> bool:
        """Called by the worker: False if the caller gave up before the worker started."""
        with self._state:
            if self._abandoned:
                return False
            self._entered = True
            return True

    def abandon_if_not_started(self) -> bool:
        with self._state:
            if self._entered:
                return False
            self._abandoned = True
            return True


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
        self._queue: deque[object] = deque()  # FIFO of callers waiting for the model
        self._queue_lock = threading.Lock()

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
        """Free the model (waits for a running generation to finish)."""
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
        if len(self._grammars) >= MAX_CACHED_GRAMMARS:  # ad-hoc schemas must not grow memory forever
            self._grammars.pop(next(iter(self._grammars)))
        self._grammars[text] = grammar
        return grammar

    # --- turns on the model ----------------------------------------------------------------------
    # Waiting happens on the event loop (FIFO, cancellable, no worker thread parked per waiter); the
    # turn's holder runs in one worker thread and releases the lock there when llama.cpp is done.
    def _try_take_turn(self, ticket: object) -> bool:
        with self._queue_lock:
            if self._queue and self._queue[0] is ticket and self._lock.acquire(blocking=False):
                self._queue.popleft()
                return True
            return False

    def _leave_queue(self, ticket: object) -> None:
        with self._queue_lock:
            if ticket in self._queue:
                self._queue.remove(ticket)

    async def _wait_turn(self) -> None:
        ticket = object()
        with self._queue_lock:
            self._queue.append(ticket)
        try:
            while not self._try_take_turn(ticket):
                await anyio.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            self._leave_queue(ticket)
            raise

    def _wait_turn_blocking(self, job: _Job) -> None:
        ticket = object()
        with self._queue_lock:
            self._queue.append(ticket)
        try:
            while not self._try_take_turn(ticket):
                if job.cancel.is_set():
                    raise GenerationCancelled("cancelled while waiting for the model")
                time.sleep(LOCK_POLL_SECONDS)
        except BaseException:
            self._leave_queue(ticket)
            raise

    async def _in_turn(self, fn: Callable[[], _T], job: _Job) -> _T:
        """Run ``fn`` in a worker thread once it is our turn; on cancellation stop it and wait until it has."""
        await self._wait_turn()
        try:
            return await anyio.to_thread.run_sync(self._holding_lock, fn, job, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            job.cancel.set()
            if job.abandon_if_not_started():
                self._lock.release()  # the worker never ran, so the turn is still ours to give back
            else:
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_SECONDS):
                    # hold the caller until the model is free again: a cancelled call leaves nothing running
                    while not job.finished.is_set():
                        await anyio.sleep(0.01)
            raise

    def _holding_lock(self, fn: Callable[[], _T], job: _Job) -> _T:
        if not job.enter():
            raise GenerationCancelled("cancelled before the generation started")
        self._current = job
        try:
            return fn()
        finally:
            self._current = None
            self._lock.release()
            job.finished.set()

    async def load(self) -> None:
        """Load the model now (otherwise the first generation does)."""
        await self._in_turn(self._ensure_loaded, _Job())

    def check_grammar(self, text: str, label: str) -> None:
        """Compile ``text`` with llama.cpp (loads the model if needed). Blocking."""
        job = _Job()
        self._wait_turn_blocking(job)
        self._holding_lock(lambda: self._compiled_grammar(self._ensure_loaded(), text, label), job)

    # --- generation -------------------------------------------------------------------------------
    async def generate(self, request: GenerationRequest, progress: Progress | None = None) -> Generation:
        """Generate off the event loop; waits its turn; stops the generation when the caller is cancelled."""
        job = _Job()
        if progress is None:
            return await self._in_turn(lambda: self._generate_locked(request, job), job)

        async def report() -> None:
            last = 0
            while True:
                await anyio.sleep(PROGRESS_EVERY_SECONDS)
                if job.tokens > last:
                    last = job.tokens
                    await progress(last, request.max_tokens)

        result: Generation | None = None
        error: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(report)
            try:
                result = await self._in_turn(lambda: self._generate_locked(request, job), job)
            except Exception as exc:  # noqa: BLE001 - re-raised below, outside the group (no ExceptionGroup)
                error = exc
            finally:
                tg.cancel_scope.cancel()
        if error is not None:
            raise error
        assert result is not None
        return result

    def generate_blocking(self, request: GenerationRequest, cancel: threading.Event | None = None) -> Generation:
        """The same, for callers already on a worker thread; set ``cancel`` to stop it."""
        job = _Job(cancel=cancel or threading.Event())
        self._wait_turn_blocking(job)
        return self._holding_lock(lambda: self._generate_locked(request, job), job)

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
