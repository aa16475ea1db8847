"""``make test``'s order of files for its xdist workers (``tests/support/file_order.py``): longest first, each
file's tests together and in their own order, a file the list does not know after the ones it does."""

from __future__ import annotations

from dataclasses import dataclass

from tests.support.file_order import SECONDS, listed_seconds, longest_first


@dataclass
class Item:
    nodeid: str


def test_files_go_longest_first_each_in_its_own_order() -> None:
    items = [Item(n) for n in [
        "tests/a/test_short.py::t1", "tests/a/test_long.py::t1[x]", "tests/a/test_short.py::t2",
        "tests/b/test_new_many.py::t1", "tests/a/test_long.py::t1[y]", "tests/b/test_new_one.py::t1",
        "tests/b/test_new_many.py::t2", "tests/a/test_long.py::C::t2",
    ]]
    seconds = listed_seconds("# a comment\ntests/a/test_short.py 4.0\n\ntests/a/test_long.py 40.5  # why\n")
    assert seconds == {"tests/a/test_short.py": 4.0, "tests/a/test_long.py": 40.5}
    order = [i.nodeid for i in longest_first(items, seconds)]
    assert order == [
        "tests/a/test_long.py::t1[x]", "tests/a/test_long.py::t1[y]", "tests/a/test_long.py::C::t2",
        "tests/a/test_short.py::t1", "tests/a/test_short.py::t2",
        "tests/b/test_new_many.py::t1", "tests/b/test_new_many.py::t2",  # unlisted: by count of tests
        "tests/b/test_new_one.py::t1",
    ]
    assert sorted(order) == sorted(i.nodeid for i in items)  # nothing lost, nothing twice


def test_the_shipped_list_reads() -> None:
    seconds = listed_seconds(SECONDS.read_text())
    assert seconds and all(p.startswith("tests/") and p.endswith(".py") and s > 0 for p, s in seconds.items())
