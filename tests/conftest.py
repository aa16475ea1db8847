"""Shared test helpers: free ports, processes that are always reaped, HTTP readiness."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# each data dir's audit anchor (key + anchors.log) lives outside it, by default under $XDG_STATE_HOME: the
# tests' own (inherited by every gateway and CLI they start), never the user's
_STATE = tempfile.mkdtemp(prefix="sentinel-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE
atexit.register(shutil.rmtree, _STATE, True)
PY = sys.executable


# Ports for the tests' servers come from a slice of their own per xdist worker, below the kernel's ephemeral
# range: a port probed free and then released was taken in between by another worker's server bound to port 0
# (CI: a conformance server took a gateway's port). Slices never overlap, and nothing the kernel hands out for
# port 0 or an outgoing connection falls in them.
_WORKER_SLICES = 5


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_EPHEMERAL_LOW = _ephemeral_low()
_PORT_BASE = 10000 if _EPHEMERAL_LOW > 12000 else 1024
_PORT_SLICE = max(100, min(4000, (_EPHEMERAL_LOW - _PORT_BASE) // _WORKER_SLICES))
_port_next: list[int] = []


def _worker_slice() -> tuple[int, int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    low = _PORT_BASE + (index % _WORKER_SLICES) * _PORT_SLICE
    return low, low + _PORT_SLICE


def free_port() -> int:
    """A port no server listens on now, from this worker's slice (the next one each call, wrapping)."""
    low, high = _worker_slice()
    if not _port_next:
        _port_next.append(low + os.getpid() % _PORT_SLICE)  # a rerun starts elsewhere in the slice
    for _ in range(_PORT_SLICE):
        port = _port_next[0]
        _port_next[0] = low if port + 1 >= high else port + 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # held by a server of this worker's (or a stray process): the next
            return port
    raise RuntimeError(f"no free port in {low}-{high - 1}")


def wait_http(
    url: str, timeout: float = 30.0, proc: subprocess.Popen | None = None, context: Any = None
) -> None:
    """``context``: the SSL context for an https ``url`` (its CA)."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as r:
                if r.status < 500:
                    return
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.02)  # a refused connect costs next to nothing; a longer sleep is the caller's wait
    raise TimeoutError(f"{url} did not answer within {timeout}s")


def copy_shipped_rulebase(name: str, copy: Path, text: str | None = None) -> Path:
    """A copy of a shipped rulebase at ``copy``, the files it includes (include_rules/1) beside it as they are
    beside the shipped one, as a user copies one to change it; ``text``: the copy's own instead of the
    shipped one's."""
    from sentinel_mcp.paths import RULEBASES_DIR
    from sentinel_mcp.policy.rulebase_includes import copy_included

    shipped = RULEBASES_DIR / name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(shipped.read_text() if text is None else text)
    copy_included(shipped, copy.parent)
    return copy


def stop_process(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL) if _is_group_leader(proc) else proc.kill()
            proc.wait(5)
    return proc.returncode


def _is_group_leader(proc: subprocess.Popen) -> bool:
    try:
        return os.getpgid(proc.pid) == proc.pid
    except ProcessLookupError:
        return False


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(d))
    return d


def _utf8(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def pytest_collection_modifyitems(config: pytest.Config, items: list[Any]) -> None:
    """Under xdist (a worker: the controller collects nothing), files longest first
    (``support/file_order.py``), so the run does not end on one long file with the other workers idle;
    ``make test`` passes ``--no-loadscope-reorder`` so that xdist keeps this order. A run without xdist keeps
    the files' own order."""
    if hasattr(config, "workerinput"):
        from tests.support.file_order import SECONDS, listed_seconds, longest_first

        items[:] = longest_first(items, listed_seconds(SECONDS.read_text()))


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Any:
    """While the test files are imported, pytest may keep its assertion-rewritten code of each (a pyc beside
    it, written atomically; read back only while the file is unchanged). Under PYTHONDONTWRITEBYTECODE=1
    (``make test``'s shell) it kept none: each run's every worker rewrote all 1,300 files again, ~18 s of
    CPU a worker of a collection's ~27 s. Only this process and only during collection: the environment
    the tests' own processes inherit is left as it is."""
    prior = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = prior


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    """A report's texts with a lone surrogate in them (many tests here feed them to Sentinel, whose log lines
    then quote them) are escaped: xdist sends a worker's report as UTF-8, and one that could not be encoded
    (a failure's text, or the log captured while a test passed) ended the whole run with an internal error."""
    outcome = yield
    report = outcome.get_result()
    report.sections = [(_utf8(title), _utf8(content)) for title, content in report.sections]
    if report.longrepr is not None:
        text = str(report.longrepr)
        if _utf8(text) is not text:
            report.longrepr = _utf8(text)


@pytest.fixture(autouse=True)
def _a_process_clock_of_its_own() -> Any:
    """Each test reads TTLs on a process clock of its own (``core/process_clock.py``). The clock never goes
    back: a test that moved ``time.time`` forward (to expire facts) left it an hour ahead for every later test
    of its worker, whose facts then expired early, or read as "from the future" to a CLI in a subprocess."""
    from sentinel_mcp.core import process_clock

    process_clock.CLOCK = process_clock.ProcessClock()
    yield
    process_clock.CLOCK = process_clock.ProcessClock()


def pytest_unconfigure(config: pytest.Config) -> None:
    from tests.support.forked_upstreams import stop

    stop()  # this worker's fork server, if it started one, and its socket's directory


@pytest.fixture(autouse=True)
def _no_forked_upstream_outlives_its_test() -> Any:
    """A test upstream started through the fork server (``support/forked_upstreams.py``) whose launcher is
    gone must be gone too, as a directly started one dies with it (bounded looks: its keeper kills it)."""
    yield
    from tests.support.forked_upstreams import orphans, server_pid

    if server_pid() is None:
        return
    for _ in range(3000):
        if not orphans():
            return
        time.sleep(0.01)
    raise AssertionError(f"forked upstreams outlived their launcher: keepers {orphans()}")
