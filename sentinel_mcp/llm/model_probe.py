"""A model file is first used in a child process: only a file that child survived is loaded into the gateway.

llama.cpp checks much of a GGUF with ``GGML_ASSERT``, which calls ``abort()``: a file whose metadata says
``llama.expert_used_count = 1`` and no experts killed the process that loaded it, the gateway and every
client's session with it. So before the gateway loads a file, a child process runs the engine's own path on
it (load, the control-token scan, the chat template, a grammar's token masks, a one-token decode) under a
time limit. A child killed by a signal, or past the limit, is a verdict on the file (``ModelLoadError``); a
Python error in the child is not (the same error meets the gateway's own load, which reports it); a child
that could not run at all (exit status, no report) loads nothing either. Verdicts are kept per file
identity (device, inode, size, modification time): a file replaced at the same path is probed again, an
unchanged one never twice.

What it does not cover: a crash only at a larger context or on a GPU (the child uses a small context on the
CPU), a file changed between the child's load and the gateway's (the operator's own file), and memory
corruption that does not crash the child.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from sentinel_mcp.llm.errors import ModelLoadError

log = logging.getLogger(__name__)

PROBE_N_CTX = 512  # enough for the sample turn and a token; the context's own allocation is not the file's
STDERR_TAIL = 2000  # bytes of the child's stderr kept for the operator's log (llama.cpp's last words)
_OK = "sentinel-model-probe: ok"
_SAMPLE = [{"role": "system", "content": "probe"}, {"role": "user", "content": "probe"}]
_GRAMMAR = 'root ::= "a" | "b"\n'


@dataclass
class _Probes:
    count: int = 0  # children started (tests count them)


PROBES = _Probes()
_VERDICTS: dict[tuple[int, int, int, int, str], str | None] = {}  # file identity -> why refused, or None
_LOCK = threading.Lock()
_MAX_VERDICTS = 256


def identity(path: Path) -> tuple[int, int, int, int]:
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def ensure_survivable(path: Path, grammar_sampler: str, seconds: float) -> None:
    """Raise ModelLoadError when a child process using ``path`` dies or does not finish within ``seconds``.
    Blocking (the engine calls it in its worker thread, holding the model's turn)."""
    try:
        key = (*identity(path), grammar_sampler)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path}: {exc.strerror}") from None
    with _LOCK:
        if key in _VERDICTS:
            verdict = _VERDICTS[key]
            if verdict is not None:
                raise ModelLoadError(verdict)
            return
    verdict = _probe(path, grammar_sampler, seconds)
    with _LOCK:
        if len(_VERDICTS) >= _MAX_VERDICTS:
            _VERDICTS.pop(next(iter(_VERDICTS)))
        _VERDICTS[key] = verdict
    if verdict is not None:
        raise ModelLoadError(verdict)


def _probe(path: Path, grammar_sampler: str, seconds: float) -> str | None:
    PROBES.count += 1
    request = json.dumps({"model": str(path), "grammar_sampler": grammar_sampler})
    # the package's own folder first on the child's path: the gateway may run from a source tree
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # files: no pipe to fill or drain
        try:
            done = subprocess.run(
                [sys.executable, "-m", "sentinel_mcp.llm.model_probe"],
                input=request.encode(),
                stdout=out,
                stderr=err,
                env=env,
                timeout=seconds,
                check=False,
            )
        except subprocess.TimeoutExpired:  # run() has killed the child
            log.warning("model probe of %s: no end within %s s", path, seconds)
            return (
                f"using {path} did not finish within {seconds:g} s in a probe process (its chat template "
                "or its load never ends); it was not loaded into the gateway "
                "(sentinel.llm.model_probe_seconds bounds it)"
            )
        out.seek(0)
        said = out.read(len(_OK) + 64).decode("utf-8", errors="replace")
        err.seek(max(0, err.seek(0, os.SEEK_END) - STDERR_TAIL))
        tail = err.read().decode("utf-8", errors="replace")
    if done.returncode == 0 and said.startswith(_OK):
        return None
    log.warning("model probe of %s ended with %s; its stderr ends: %s", path, done.returncode, tail)
    if done.returncode < 0:
        try:
            how = f"was killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            how = f"was killed by signal {-done.returncode}"
    else:  # our own child failed (an import, the interpreter): no word on the file, and no load without one
        return (
            f"the probe process for {path} ended with status {done.returncode} before it could use the file "
            "(the log has its last words); the model was not loaded into the gateway"
        )
    return (
        f"llama.cpp cannot use {path}: a probe process using it crashed (it {how}); the file is corrupt or "
        "hostile, and was not loaded into the gateway"
    )


def _child() -> None:
    """The child's side: the engine's own path on the file; a Python error is reported, not a verdict."""
    from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
    from sentinel_mcp.llm.settings import LlmSettings

    request = json.loads(sys.stdin.read(65_536))
    settings = LlmSettings(
        model=request["model"],
        n_ctx=PROBE_N_CTX,
        n_threads=1,
        gpu_layers=0,
        prefix_cache_mb=0,
        seed=0,
        grammar_sampler=request["grammar_sampler"],
    )
    engine = LlamaEngine(settings, probe=False)
    try:
        for grammar in (_GRAMMAR, None):  # token masks (the vocabulary read by llguidance), then free text
            engine.generate_blocking(
                GenerationRequest(list(_SAMPLE), max_tokens=1, grammar=grammar, party="sentinel:probe")
            )
        outcome = "generated"
    except Exception as exc:  # noqa: BLE001 - an error, not a crash: the gateway's own load reports it
        outcome = f"refused ({type(exc).__name__})"
    sys.stdout.write(f"{_OK}: {outcome}\n")
    sys.stdout.flush()
    os._exit(0)  # no interpreter teardown: llama.cpp's destructors are not the file's verdict


if __name__ == "__main__":
    _child()
