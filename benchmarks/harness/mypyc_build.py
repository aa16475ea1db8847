"""The mypyc experiment of issue 21 (branch perf-mypyc9): a scratch copy of a git revision with the hot path's
pure-Python modules compiled by mypyc (it ships with mypy, in the venv), so ``latency_ab.py --base DIR`` and
``capacity_ab.py --base DIR`` compare it with the pure tree side by side, and ``micro`` times a few pure
functions in both. Nothing is built inside the repository: the copy is ``git archive`` output in ``--out``.

``build``: ``git archive REV`` into ``--out``, classes mypyc cannot compile as native classes marked
``mypyc_attr(native_class=False)`` in the copy only (``NON_NATIVE``), ``pyproject.toml`` moved aside while
mypyc's setuptools step runs (its ``project.license`` table fails setuptools' validation) with the
``[tool.mypy]`` settings as ``mypy.ini``, then ``mypyc MODULES``. ``MODULES`` is the set that compiled AND
served a stdio call; what was left out, and why, is in benchmarks/README.md (perf-mypyc9).
``micro``: per-call time of ``parse_message``, ``value_problem`` and ``check_shape`` in this interpreter
(run it with ``PYTHONPATH`` on each tree).

Usage: python benchmarks/harness/mypyc_build.py build [--rev HEAD] [--out /tmp/mypyc-tree] [--modules a/b,c/d]
       PYTHONPATH=TREE python benchmarks/harness/mypyc_build.py micro
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MYPYC = Path(sys.executable).with_name("mypyc")

MODULES = """
app/http_protocol app/lean_calls core/json_text core/own_voice core/random_pool core/running_loop
core/wire_limits gateway/argument_check gateway/ask_rounds gateway/audit gateway/call_record
gateway/call_timings gateway/conversations gateway/front gateway/front_link gateway/idle_loop
gateway/in_flight_requests gateway/plain_calls gateway/plain_tool_result gateway/plain_upstream_result
gateway/quick_event gateway/request_state gateway/result_check gateway/result_shape
gateway/stdio_lean_calls gateway/stdio_wire_out gateway/step_deadline gateway/telemetry
gateway/upstream_rounds gateway/wire_guard identity/resolver policy/default_guard storage/inline_policy
storage/sqlite storage/statement_refusal
""".split()

# weak references to it (``Conversations._held``): a native class takes none; ``Authenticator``'s
# ``field(default=None, init=False)`` is never set in a native dataclass (AttributeError on every HTTP call)
NON_NATIVE = {"gateway/conversations": ["Conversation"], "identity/resolver": ["Authenticator"]}

MYPY_INI = "[mypy]\nplugins = pydantic.mypy\nignore_missing_imports = True\nfollow_imports = silent\n"


def _mark(path: Path, classes: list[str]) -> None:
    src = path.read_text()
    for cls in classes:
        src, n = re.subn(rf"^class {cls}\b", f"@_mypyc_attr(native_class=False)\nclass {cls}", src, count=1,
                         flags=re.M)
        if n != 1:
            raise SystemExit(f"{path}: no class {cls}")
    future = "from __future__ import annotations\n"
    marker = "\nfrom mypy_extensions import mypyc_attr as _mypyc_attr\n"
    path.write_text(src.replace(future, future + marker, 1))


def build(rev: str, out: Path, modules: list[str]) -> None:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    for module, classes in NON_NATIVE.items():
        _mark(out / "sentinel_mcp" / f"{module}.py", classes)
    (out / "mypy.ini").write_text(MYPY_INI)
    pyproject = out / "pyproject.toml"
    aside = out / "pyproject.toml.aside"
    pyproject.rename(aside)
    t0 = time.monotonic()
    try:
        subprocess.run([str(MYPYC), *(f"sentinel_mcp/{m}.py" for m in modules)], cwd=out, check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        aside.rename(pyproject)
    built = sorted(p.name for p in (out / "sentinel_mcp").rglob("*.so"))
    print(json.dumps({"tree": str(out), "modules": len(modules), "extensions": len(built),
                      "build_s": round(time.monotonic() - t0, 1)}))


def micro() -> None:
    from sentinel_mcp.core import wire_limits
    from sentinel_mcp.gateway import result_shape

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "tb__noop", "arguments": {"a": [1, 2, {"b": "x" * 40}], "c": 1.5}, "_meta": meta}}).encode()
    value = {"content": [{"type": "text", "text": "hello " * 20}] * 5,
             "structuredContent": {"a": list(range(50)), "b": {"c": "d" * 30}}}
    print(Path(wire_limits.__file__).name)
    for name, fn in (("parse_message", lambda: wire_limits.parse_message(line)),
                     ("value_problem", lambda: wire_limits.value_problem(value, 64)),
                     ("check_shape", lambda: result_shape.check_shape("tools/call", value))):
        best = min(timeit.repeat(fn, number=20000, repeat=5)) / 20000 * 1e6
        print(f"{name:15} {best:6.2f} us a call")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["build", "micro"])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", type=Path, default=Path("/tmp/mypyc-tree"))
    ap.add_argument("--modules", help="comma-separated, e.g. core/json_text,gateway/audit (default: MODULES)")
    args = ap.parse_args()
    if args.what == "build":
        build(args.rev, args.out, args.modules.split(",") if args.modules else MODULES)
    else:
        micro()


if __name__ == "__main__":
    main()
