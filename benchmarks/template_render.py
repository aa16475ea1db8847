"""Cost of rendering a chat template (ChatML, a short conversation) through ``render_prompt``, per call.

Run against two trees in one go to compare (A/B alternated, same machine, same moment):
``python benchmarks/template_render.py --base /work/main`` runs this tree's and the base tree's render in
alternating child processes. Goal: a render costs no more than before (the file's Jinja now runs in a
bounded child process; before it was compiled anew and rendered in the gateway on every call).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

GOAL = "per-render cost <= the base tree's"
CALLS = 300

_CHILD = r"""
import json, sys, time
from pathlib import Path
from typing import Any
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, str(Path(sys.argv[1]) / "tests" / ".."))
from tests.support.tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf
from llama_cpp import Llama
from sentinel_mcp.llm.prompt_format import render_prompt
try:
    from sentinel_mcp.llm import inert_templates
    inert_templates.install()
except ImportError:
    pass
model = write_tiny_gguf(Path(sys.argv[2]), chat_template=CHATML_TEMPLATE)
llm = Llama(model_path=str(model), n_ctx=512, n_threads=1, verbose=False)
msgs = [{"role": "system", "content": "You answer briefly."},
        {"role": "user", "content": "Summarise: " + "word " * 200}]
first = render_prompt(llm, msgs)  # the first starts the child (this tree) / warms imports
t0 = time.process_time(); w0 = time.perf_counter()
for _ in range(int(sys.argv[3])):
    render_prompt(llm, msgs)
n = int(sys.argv[3])
print(json.dumps({
    "sha": __import__("hashlib").sha256(first.text.encode()).hexdigest()[:12], "format": first.format,
    "wall_ms": (time.perf_counter() - w0) * 1000 / n, "gateway_cpu_ms": (time.process_time() - t0) * 1000 / n,
}))
"""


def _run(tree: str, model: str, calls: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": tree}
    out = subprocess.run([sys.executable, "-c", _CHILD, tree, model, str(calls)], env=env,
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the tree to compare with (e.g. /work/main)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    print(f"load average {os.getloadavg()}; goal: {GOAL}")
    with tempfile.TemporaryDirectory() as d:
        for r in range(args.rounds):
            for name, tree in (("base", args.base), ("this", here)):
                fig = _run(tree, str(Path(d) / f"{name}{r}.gguf"), CALLS)
                same = f"prompt {fig['format']} sha256 {fig['sha']}"
                print(f"round {r} {name:4}: {fig['wall_ms']:.3f} ms wall, "
                      f"{fig['gateway_cpu_ms']:.3f} ms gateway CPU per render; {same}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
