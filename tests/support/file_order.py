"""The order in which ``make test`` hands test files to its xdist workers: longest first.

xdist's own order (``--dist loadfile``) is by count of tests, so a file of one 46 s test (a real model's
build) came last, and the run ended on it with the other workers idle. Longest first is the classic remedy. A
file's seconds come from ``file_seconds.txt`` (summed per-test times of a full run; ``main`` here writes it
from a JUnit XML); a file not listed there took less than ``LISTED_FROM`` seconds, or is new: it is estimated
from its count of tests, at most that. The list only orders: a stale one leaves the run as complete, only its
end less even.

Regenerate: ``python -m pytest -n 2 --dist loadfile --junitxml=/tmp/run.xml`` then
``python -m tests.support.file_order /tmp/run.xml``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

SECONDS = Path(__file__).with_name("file_seconds.txt")
PER_TEST = 0.3  # seconds: the mean of an unlisted test (11,509 tests in 3,357 s)
LISTED_FROM = 3.0  # a file under this many seconds is left to the estimate


def listed_seconds(text: str) -> dict[str, float]:
    """``path seconds`` lines, ``#`` comments."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            path, seconds = line.rsplit(None, 1)
            out[path] = float(seconds)
    return out


def longest_first(items: list[Any], seconds: dict[str, float]) -> list[Any]:
    """``items`` regrouped by file, files longest first; a file's own order of tests is kept (stable sort)."""
    def path(item: Any) -> str:
        return item.nodeid.split("::", 1)[0]

    counts = Counter(path(i) for i in items)
    first = {}
    for n, i in enumerate(items):
        first.setdefault(path(i), n)

    def key(item: Any) -> tuple[float, int, int]:
        p = path(item)
        # an unlisted file that was in the run took under LISTED_FROM seconds, whatever its count of tests
        return (-seconds.get(p, min(counts[p] * PER_TEST, LISTED_FROM)), -counts[p], first[p])

    return sorted(items, key=key)


def main(junit: str) -> None:
    import xml.etree.ElementTree as ET

    spent: Counter[str] = Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        spent["/".join(p for p in parts if not p[:1].isupper()) + ".py"] += float(case.get("time") or 0)
    kept = SECONDS.read_text().splitlines() if SECONDS.exists() else []
    head = [line for line in kept if line.startswith("#")]
    rows = [f"{p} {s:.1f}" for p, s in spent.most_common() if s >= LISTED_FROM]
    SECONDS.write_text("\n".join([*head, *rows]) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
