"""llama.cpp's grammar sampler in a child process the gateway can stop: every step of it is bounded.

llama.cpp's grammar sampler has no cost bound of its own: its stacks can multiply with each token (a few
hundred bytes of grammar, ``r0 ::= "[" r1 "x" | "[" r1 "y"`` and so on, double them at each ``[``), and one
step is one C call that the generation's clock, read between tokens, cannot interrupt. It held the model's
turn for minutes, or would take the gateway's memory. It now runs in ``grammar_child``, one process a model
kept between generations; the gateway waits for each answer with a bound and kills the child past it:

* each step (the grammar's start, each token's mask) within ``grammar_step_seconds`` (a real step takes
  milliseconds: 262,144 tokens checked against a sound grammar's few stacks), else the grammar is refused
  as too costly (``GrammarError``);
* and within the generation's own time limit and its cancellation, which end it as on the other paths;
* the child's address space capped (``grammar_child.MEMORY_BYTES``): a grammar that eats memory ends the
  child, and is refused the same way.

The model's turn is handed on at once; the next generation on this path starts a fresh child.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from collections.abc import Callable

from sentinel_mcp.llm.child_environment import child_environment
from sentinel_mcp.llm.errors import GenerationCancelled, GrammarError, ModelUnavailable
from sentinel_mcp.llm.model_turns import _Job

_CHILD = "sentinel_mcp.llm.grammar_child"
START_SECONDS = 120.0  # the child's interpreter, llama.cpp and the vocabulary loaded (~0.5 s)
_POLL_SECONDS = 0.05  # how often a wait looks at the generation's cancellation


class GrammarTooCostly(GrammarError):
    """A grammar's step on llama.cpp's sampler outlived its bound or its process's memory."""


class GrammarChild:
    """One model's grammar process, started on first use and after one was stopped. Used under the model's
    turn (one generation at a time), so not locked."""

    def __init__(self, model: Path, step_seconds: float) -> None:
        """``step_seconds``: the child's own CPU allowance a step (the gateway's wait is bounded apart)."""
        self.model, self.step_seconds = model, step_seconds
        self._child: subprocess.Popen[bytes] | None = None
        self.n_vocab = 0
        self.started = 0  # children started (tests count them)

    def _start(self) -> subprocess.Popen[bytes]:
        env = child_environment()  # the interpreter's own settings only, never the gateway's secrets
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", _CHILD, str(self.model), f"{self.step_seconds:g}"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0,
            )
        except OSError as exc:
            raise ModelUnavailable(f"llama.cpp's grammar sampler could not start its process "
                                   f"({exc.strerror or exc}); nothing was generated") from exc
        self.started += 1
        self._child = child
        line = self._read_line(None, START_SECONDS, "start")
        if not line.startswith(b"ready "):
            self.stop()
            raise ModelUnavailable("llama.cpp's grammar sampler process did not start (it could not read the "
                                   "model's vocabulary); nothing was generated")
        self.n_vocab = int(line.split()[1])
        return child

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()
        child.kill()
        child.wait()

    close = stop

    # --- bounded reads ------------------------------------------------------------------------------
    def _read(self, n: int, job: _Job | None, seconds: float, what: str, line: bool = False,
              cut: Callable[[], Exception] | None = None) -> bytes:
        """``n`` bytes (or a line of at most ``n``) from the child, within ``seconds`` and the job's own
        time limit (``cut``: its error) and cancellation; the child is killed past any of them."""
        child = self._child
        assert child is not None and child.stdout is not None
        fd = child.stdout.fileno()
        until = time.perf_counter() + seconds
        got = bytearray()
        while len(got) < n and not (line and got.endswith(b"\n")):
            now = time.perf_counter()
            if job is not None and job.cancel.is_set():
                self.stop()
                raise GenerationCancelled(f"generation cancelled after {job.tokens} tokens")
            if job is not None and cut is not None and now >= job.deadline:
                self.stop()
                job.timed_out = True
                raise cut()
            if now >= until:
                self.stop()
                raise GrammarTooCostly(f"one step of llama.cpp's grammar sampler ({what}) took more than "
                                       f"{seconds:g} s")
            ready, _, _ = select.select([fd], [], [], min(_POLL_SECONDS, until - now))
            if not ready:
                continue
            chunk = os.read(fd, 1 if line else n - len(got))
            if not chunk:  # the child ended: the kernel's memory cap, or llama.cpp aborted
                self.stop()
                raise GrammarTooCostly(f"llama.cpp's grammar sampler ran out of its process's memory "
                                       f"({what})")
            got += chunk
        return bytes(got)

    def _read_line(self, job: _Job | None, seconds: float, what: str,
                   cut: Callable[[], Exception] | None = None) -> bytes:
        return self._read(64, job, seconds, what, True, cut)

    def _send(self, data: bytes) -> None:
        child = self._child
        assert child is not None and child.stdin is not None
        try:
            child.stdin.write(data)
        except (BrokenPipeError, OSError):
            self.stop()
            raise GrammarTooCostly("llama.cpp's grammar sampler process ended") from None

    # --- the matcher's steps ------------------------------------------------------------------------
    def begin(self, gbnf: str, label: str, job: _Job | None, step_seconds: float,
              cut: Callable[[], Exception] | None = None) -> None:
        if self._child is None or self._child.poll() is not None:
            self._child = None
            self._start()
        data = gbnf.encode("utf-8")
        self._send(b"g %d\n" % len(data) + data)
        if self._read_line(job, step_seconds, "the grammar's start", cut) != b"ok\n":
            raise GrammarError(f"{label}: llama.cpp rejected the grammar (syntax, undefined rule or left "
                               "recursion)")

    def check(self, gbnf: str, label: str, step_seconds: float) -> None:
        """llama.cpp's parser on ``gbnf`` and the grammar's start, within ``step_seconds`` (GrammarError)."""
        try:
            self.begin(gbnf, label, None, step_seconds)
        except GrammarTooCostly as exc:
            raise GrammarTooCostly(f"{label}: {exc}; the grammar is refused as too costly") from None

    def mask(self, job: _Job, step_seconds: float, cut: Callable[[], Exception]) -> bytes:
        self._send(b"m\n")
        return self._read((self.n_vocab + 7) // 8, job, step_seconds, f"token {job.tokens + 1}", False, cut)

    def accept(self, token: int) -> None:
        self._send(b"a %d\n" % token)  # answered by the next mask, whose wait is bounded


def child_for(current: GrammarChild | None, model: Path, step_seconds: float) -> GrammarChild:
    """``current`` if it serves ``model`` with this step bound, else a new one (``current`` stopped)."""
    if current is not None and (current.model, current.step_seconds) == (model, step_seconds):
        return current
    if current is not None:
        current.stop()
    return GrammarChild(model, step_seconds)


class ProcessGrammarMatcher:
    """The matcher interface ``MaskedSampler`` reads, over llama.cpp's grammar in ``GrammarChild``."""

    def __init__(self, child: GrammarChild, gbnf: str, label: str, job: _Job, step_seconds: float,
                 cut: Callable[[], Exception]) -> None:
        """``cut``: the error for the generation's time limit reached (``generation_clock.grammar_cut``)."""
        self._child, self._job, self._step, self._cut, self._label = child, job, step_seconds, cut, label
        try:
            child.begin(gbnf, label, job, step_seconds, cut)
        except GrammarTooCostly as exc:
            raise GrammarTooCostly(f"{label}: {exc}; the grammar is refused as too costly, nothing was "
                                   "generated") from None

    def unsafe_compute_mask_ptr(self, address: int, nbytes: int) -> None:
        import ctypes

        try:
            bits = self._child.mask(self._job, self._step, self._cut)
        except GrammarTooCostly as exc:
            raise GrammarTooCostly(f"{self._label}: {exc} after {self._job.tokens} tokens; the grammar is "
                                   "refused as too costly, nothing was returned") from None
        ctypes.memset(address, 0, nbytes)
        ctypes.memmove(address, bits, min(len(bits), nbytes))

    def consume_token(self, token: int) -> bool:
        self._child.accept(token)
        return True

    @staticmethod
    def is_error() -> bool:
        return False

    @staticmethod
    def get_error() -> str:
        return ""

    @staticmethod
    def is_stopped() -> bool:
        return False  # a complete grammar allows only end-of-generation tokens: the loop stops on one

    def close(self) -> None:
        pass  # the child keeps running for the next grammar; ``begin`` replaces this one there

