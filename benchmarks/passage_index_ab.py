"""CPU per search and per memory added in the passage index (5,000 chunks, hashing vectors), one line.

Run it with each tree's own interpreter, interleaved, to compare (the index moved behind the storage seam):
  (cd /work/main && .venv/bin/python <this tree>/benchmarks/passage_index_ab.py)
  .venv/bin/python benchmarks/passage_index_ab.py
Goal: search within a few percent of main's CPU (policy_search.py holds the latency goals).
"""

import asyncio
import random
import tempfile
import time
from pathlib import Path
from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.passage_index import NewPassage, PassageIndex

async def main():
    rng = random.Random(7)
    vocab = (
        "bag fee gold silver member cabin economy basic refund cancel change flight seat pet insurance "
        "baggage upgrade lounge miles voucher"
    ).split()
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 40))) for _ in range(5000)]
    with tempfile.TemporaryDirectory() as d:
        idx = await PassageIndex(Path(d) / "p.db", HashingEmbedder(1024)).open()
        await idx.replace_source("policy", "doc", [NewPassage(text=t, source="doc") for t in texts], "d1")
        qs = [" ".join(rng.choice(vocab) for _ in range(5)) for _ in range(300)]
        await idx.search("policy", qs[0], 3)
        c0, w0 = time.process_time(), time.perf_counter()
        for q in qs:
            await idx.search("policy", q, 3)
        c1, w1 = time.process_time(), time.perf_counter()
        t0 = time.process_time()
        for i in range(300):
            await idx.add("memory:a", NewPassage(text=f"note {i} " + qs[i], source="memory"), keep=200)
        t1 = time.process_time()
        await idx.close()
    print(f"search cpu {(c1 - c0) / 300 * 1e3:.2f} ms wall {(w1 - w0) / 300 * 1e3:.2f} ms; "
          f"add cpu {(t1 - t0) / 300 * 1e3:.2f} ms")

asyncio.run(main())
