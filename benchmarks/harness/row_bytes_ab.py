"""Are the audit rows two source trees write for the same entries byte-identical? (perf-rows9: the row
path's cuts must change no row.) Each tree, in a process of its own (its sources first on the path), writes
the entries of ``tests/records/test_row_bytes_reference.py`` (many shapes: unicode, lone surrogates, NUL, big
ints, floats, nested, the optional tail empty or not; fixed timestamps and decision ids) through its
``AuditLog``, half alone and half in batches, with and without a seal key; then every stored row (all
columns, ``repr``) is compared, and each tree's ``audit_chain.verify_file`` is run on its own files.
Usage: python benchmarks/harness/row_bytes_ab.py --base /work/main
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
REFERENCE = ROOT / "tests" / "records" / "test_row_bytes_reference.py"


def child(out: str) -> None:
    import importlib.util

    from sentinel_mcp.gateway.audit_chain import verify_file

    spec = importlib.util.spec_from_file_location("row_reference", REFERENCE)
    assert spec is not None and spec.loader is not None
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    dumped = {}
    for name, key in (("plain", None), ("sealed", ref.KEY)):
        path = Path(out) / f"{name}.db"
        asyncio.run(ref.write_all(path, key))
        dumped[name] = [repr(sorted(r.items())) for r in ref.stored(path)]
        dumped[name + "_verifies"] = [verify_file(path, key=key).ok]
    (Path(out) / "rows.json").write_text(json.dumps(dumped))


def run(tree: Path, out: Path) -> dict[str, list]:
    out.mkdir(parents=True)
    python = tree / ".venv" / "bin" / "python"
    subprocess.run([str(python if python.exists() else sys.executable), str(HERE), "--child", str(out)],
                   env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}, check=True, cwd=tree)
    return json.loads((out / "rows.json").read_text())  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", help="the other source tree (required)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    if not args.base:
        ap.error("--base is required")
    with tempfile.TemporaryDirectory() as d:
        base, this = run(Path(args.base), Path(d) / "base"), run(ROOT, Path(d) / "this")
    same = True
    for name in ("plain", "sealed"):
        a, b = base[name], this[name]
        differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        ok = len(a) == len(b) and not differ
        same = same and ok
        print(f"{name:7s}: {len(a)} / {len(b)} rows, {'byte-identical' if ok else f'{len(differ)} differ'};"
              f" verifies base {base[name + '_verifies']} this {this[name + '_verifies']}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
