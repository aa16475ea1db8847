"""Policy search and policy coverage, side by side in one run.

Rows: recall@3 of the 48 questions about the airline policy (benchmarks/data/airline_policy_questions.json,
written in other words than policy.md's) for words alone (FTS5 bm25), vectors alone (hashing trick) and both
fused by reciprocal rank (what sentinel_policy_search does), plus llama-cpp embeddings of the small model
package when it is installed; search latency at 10,000 chunks (the policy's paragraphs among generated ones);
and the share of policy.md's paragraphs that airline.pl cites. Each row with its goal beside it.
Usage: python benchmarks/policy_search.py [--chunks N] [--queries N] [--no-model]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_mcp.paths import RULEBASES_DIR  # noqa: E402
from sentinel_mcp.policy.checker import coverage  # noqa: E402
from sentinel_mcp.policy.engine import shared_engine  # noqa: E402
from sentinel_mcp.search.embedding import HashingEmbedder, embedder_for  # noqa: E402
from sentinel_mcp.search.paragraphs import normalize, split_markdown  # noqa: E402
from sentinel_mcp.search.passage_index import NewPassage, PassageIndex  # noqa: E402

POLICY = ROOT / "examples" / "airline" / "data" / "policy.md"
QUESTIONS = ROOT / "benchmarks" / "data" / "airline_policy_questions.json"


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def recall(idx: PassageIndex, paras, questions, how: str) -> float:  # noqa: ANN001
    hits = 0
    for item in questions:
        wanted = {(p.line_start, p.line_end) for p in paras if normalize(item["a"]) in normalize(p.text)}
        if how == "fused":
            got = await idx.search("policy", item["q"], 3)
            lines = [(h.line_start, h.line_end) for h in got]
        else:  # one list alone: bm25 over the words (as searches prune them), or the vectors
            ids = await (idx.words_ranked if how == "words" else idx.vector_ranked)("policy", item["q"], 3)
            lines = [(h.line_start, h.line_end) for h in await idx._fetch(ids)]
        hits += bool(wanted & set(lines))
    return hits / len(questions)


async def indexed(tmp: Path, name: str, embedder, paras) -> PassageIndex:  # noqa: ANN001
    idx = await PassageIndex(tmp / f"{name}.db", embedder).open()
    await idx.replace_source(
        "policy",
        "airline",
        [
            NewPassage(
                text=p.text,
                source="airline",
                heading=p.heading_text,
                line_start=p.line_start,
                line_end=p.line_end,
            )
            for p in paras
        ],
        "v1",
    )
    return idx


async def main(chunks: int, queries: int, use_model: bool) -> None:
    paras = split_markdown(POLICY.read_text(), "airline")
    questions = json.loads(QUESTIONS.read_text())["questions"]
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        idx = await indexed(tmp, "hash", HashingEmbedder(1024), paras)
        for how in ("words", "vector", "fused"):
            r = await recall(idx, paras, questions, how)
            label = {
                "words": "words only (FTS5 bm25)",
                "vector": "vectors only (hashing trick)",
                "fused": "words + vectors, reciprocal rank fusion",
            }[how]
            rows.append(
                (
                    f"recall@3, {len(questions)} questions, {label}",
                    f"{r:.0%}",
                    ">= 70% (fused)" if how == "fused" else "-",
                )
            )
        await idx.close()
        if use_model:
            try:
                t0 = time.perf_counter()
                from sentinel_mcp.llm.model_source import resolve_model_path

                emb = embedder_for(str(resolve_model_path(None)))
                midx = await indexed(tmp, "model", emb, paras)
                r = await recall(midx, paras, questions, "fused")
                rv = await recall(midx, paras, questions, "vector")
                rows.append(
                    (
                        f"recall@3, fused, vectors from {emb.name} (base LM, not an embedding model)",
                        f"{r:.0%} (vectors alone {rv:.0%}; {time.perf_counter() - t0:.0f} s to load and "
                        "index)",
                        "-",
                    )
                )
                await midx.close()
            except Exception as e:  # noqa: BLE001 - the model package is optional
                rows.append(("recall@3 with llama-cpp embeddings", f"not measured ({str(e)[:60]})", "-"))

        # latency at N chunks: the policy's paragraphs among generated ones made of its own words
        rng = random.Random(7)
        vocab = [w for p in paras for w in p.text.split()]
        big = await PassageIndex(tmp / "big.db", HashingEmbedder(1024)).open()
        fill = [
            NewPassage(
                text=" ".join(rng.choice(vocab) for _ in range(rng.randint(12, 40))),
                source="filler",
                heading=f"Section {i // 20}",
            )
            for i in range(chunks - len(paras))
        ]
        t0 = time.perf_counter()
        await big.replace_source("policy", "filler", fill, "f")
        await big.replace_source(
            "policy",
            "airline",
            [
                NewPassage(
                    text=p.text,
                    source="airline",
                    heading=p.heading_text,
                    line_start=p.line_start,
                    line_end=p.line_end,
                )
                for p in paras
            ],
            "a",
        )
        build = time.perf_counter() - t0
        times = []
        await big.search("policy", "warm up", 3)
        for i in range(queries):
            q = questions[i % len(questions)]["q"]
            t = time.perf_counter()
            await big.search("policy", q, 3)
            times.append((time.perf_counter() - t) * 1000)
        r_big = await recall(big, paras, questions, "fused")
        await big.close()
        rows.append((f"search latency at {chunks:,} chunks, p50", f"{pct(times, 0.5):.1f} ms", "<= 50 ms"))
        rows.append((f"search latency at {chunks:,} chunks, p95", f"{pct(times, 0.95):.1f} ms", "<= 100 ms"))
        rows.append((f"recall@3 at {chunks:,} chunks (fused)", f"{r_big:.0%}", "-"))
        rows.append((f"indexing {chunks:,} chunks (hashing vectors)", f"{build:.1f} s", "-"))

    report = await coverage(shared_engine(), [RULEBASES_DIR / "airline.pl"])
    for name, r in report.items():
        rows.append(
            (
                f"policy.md paragraphs cited by airline.pl ({name})",
                f"{r['cited']} of {r['paragraphs']} ({r['share']:.0%}); uncited requirements: "
                f"{r['uncited_rules']}",
                "every rule cited",
            )
        )
    w = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(w)}  {'value':<48} goal")
    for name, value, goal in rows:
        print(f"{name.ljust(w)}  {value:<48} {goal}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--no-model", action="store_true", help="skip the llama-cpp embedding row")
    a = ap.parse_args()
    asyncio.run(main(a.chunks, a.queries, not a.no_model))
