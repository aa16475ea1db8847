"""The collector paused while start-up imports (``core/import_collector.py``): paused inside, back afterwards
as it was, only for a first import, and never left off by nested or concurrent uses."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

from sentinel_mcp.core.import_collector import imports_uncollected

NOT_IMPORTED = "sentinel_mcp_no_such_module_for_the_collector_test"


def test_paused_inside_enabled_and_frozen_after() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with imports_uncollected(NOT_IMPORTED):
            kept = [[] for _ in range(100)]
            assert not gc.isenabled()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        gc.unfreeze()


def test_an_imported_module_pauses_nothing() -> None:
    with imports_uncollected("gc"):
        assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with imports_uncollected(NOT_IMPORTED):
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_nested_and_interleaved_uses_give_the_collector_back() -> None:
    inner_in, outer_out = threading.Event(), threading.Event()

    def other() -> None:  # enters while the main thread's block runs, leaves after it ended
        with imports_uncollected(NOT_IMPORTED):
            inner_in.set()
            outer_out.wait(10)
            assert not gc.isenabled()  # still paused: the other block ended, this one did not

    t = threading.Thread(target=other)
    try:
        with imports_uncollected(NOT_IMPORTED):
            t.start()
            assert inner_in.wait(10)
            with imports_uncollected(NOT_IMPORTED):
                assert not gc.isenabled()
            assert not gc.isenabled()
        outer_out.set()
        t.join(10)
        assert gc.isenabled()
    finally:
        outer_out.set()
        gc.enable()
        gc.unfreeze()


def test_the_cli_leaves_the_collector_on() -> None:
    code = (
        "import gc, sys\n"
        "from sentinel_mcp.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert gc.isenabled(), 'collector left off'\n"
        "assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()\n"  # the command modules, frozen
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
