"""What the load check of text/1 (policy/prolog/own_texts.pl) costs beside the rest of a load, in one
SWI-Prolog: CPU seconds of the whole load (every file read and every load check, this one included) and
of this check alone, run again on the loaded module. Rulebases: the shipped ones, and a generated one of
5,001 clauses (1,000 label tables, helpers that join their labels, branches, guards that wrap them in
text/1).

    .venv/bin/python benchmarks/own_text_check.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from sentinel_mcp.paths import RULEBASES_DIR

CORE = Path(__file__).resolve().parents[1] / "sentinel_mcp" / "policy" / "prolog" / "sentinel_core.pl"
GOAL_CPU = 0.5  # seconds of CPU for the check of 5,000 clauses ("well under a second")

SCRIPT = """
:- use_module(library(http/json)).
:- use_module('{core}').
run(Files) :-
    atom_json_term(J, Files, [as(atom)]),
    statistics(cputime, T0), sentinel_core:sn_load(rb1, J, _), statistics(cputime, T1),
    sentinel_core:own_text_errors(rb1, Es), statistics(cputime, T2), length(Es, N),
    L is T1 - T0, C is T2 - T1, format("~6f ~6f ~w~n", [L, C, N]).
"""


def generated(path: Path) -> None:
    lines = ["binding(passenger(R, Name, Born), tool('x__get', [id = R]), "
             "extract([Name = '/name', Born = '/born']), []).\n"]
    for i in range(1000):
        lines.append(f"lab{i}(a{i}, 'Label {i}').\nlab{i}(b{i}, text('Other {i}')).\n")
        lines.append(f"help{i}(R, T) :- lab{i}(R, L), atom_concat(L, ' x', T0), "
                     "format(atom(T), '~w!', [T0]).\n")
        lines.append(f"chain{i}(R, T) :- ( R == z -> help{i}(R, T) ; help{(i + 1) % 1000}(R, T) ).\n")
        lines.append(f"guard('x__t{i}', [id = R], ( chain{i}(R, T), passenger(R, N, _), "
                     "confirmed('~w ~w?', [text(T), N]) )).\n")
    path.write_text("".join(lines))


def measure(script: Path, files: list[Path]) -> tuple[float, float, int]:
    goal = "run([" + ", ".join(f"'{f}'" for f in files) + "])"
    out = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt", str(script)], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), int(out[2])


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script, big = Path(tmp) / "bench.pl", Path(tmp) / "big.pl"
        script.write_text(SCRIPT.format(core=CORE))
        generated(big)
        sets = {"shipped (7 files)": sorted(RULEBASES_DIR.glob("*.pl")), "generated 5,001 clauses": [big]}
        print(f"load average {os.getloadavg()[0]:.2f}; {rounds} rounds, the sets alternated")
        got: dict[str, list[tuple[float, float, int]]] = {k: [] for k in sets}
        for _ in range(rounds):
            for name, files in sets.items():
                got[name].append(measure(script, files))
        for name, rows in got.items():
            load = sorted(r[0] for r in rows)[len(rows) // 2]
            check = sorted(r[1] for r in rows)[len(rows) // 2]
            verdict = "ok" if check <= GOAL_CPU else "OVER"
            print(f"{name:26} load with every check {load * 1000:7.1f} ms CPU; text/1 check alone "
                  f"{check * 1000:6.1f} ms CPU ({rows[0][2]} errors) "
                  f"(goal <= {GOAL_CPU * 1000:.0f} ms): {verdict}")
        print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    main(ap.parse_args().rounds)
