"""Python calls of a gateway's start, counted (issue 21's cold start, noise-free): on the gateway's
``PYTHONPATH`` with ``START_COUNTS_DIR`` set (``cold_start_ab.py --count``), every thread's calls (Python and
C: the profile hook's ``call`` and ``c_call``) are counted from interpreter start to exit, and at exit the
gateway (``python -m sentinel_mcp``: not the upstreams, which run with the same environment; the reaper runs
``-I -S`` and never loads this) writes ``gateway.calls``: calls and modules loaded. A start driven to its
first answer and then stopped the same way on both sides counts the same shutdown on both. ``serve --http``
stopped by SIGTERM ends by raising that signal again once uvicorn has stopped (``signal.raise_signal``),
which skips ``atexit``: the count is written just before that."""

import os

_dir = os.environ.get("START_COUNTS_DIR")
if _dir:
    import atexit
    import itertools
    import signal
    import sys
    import threading

    _calls = itertools.count()

    def _count(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" or event == "c_call":
            next(_calls)

    def _written() -> None:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        here = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
        if os.path.basename(os.path.dirname(here)) == "sentinel_mcp" and here.endswith("__main__.py"):
            with open(os.path.join(_dir, "gateway.calls"), "w") as f:
                f.write(f"{next(_calls)} {len(sys.modules)}\n")

    _raise_signal = signal.raise_signal

    def _written_then_raised(sig: int) -> None:
        _written()
        _raise_signal(sig)

    atexit.register(_written)
    signal.raise_signal = _written_then_raised
    threading.setprofile(_count)
    sys.setprofile(_count)
