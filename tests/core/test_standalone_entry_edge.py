"""The built-ins' own entry points (``python -m sentinel_mcp.llm``, ``sentinel_mcp.swarm``, ``device_tools``,
``device_tools.sensors``) go through the command line's edge as ``sentinel-mcp`` does
(``core/standalone_entry.py``): what they print on stderr reaches no terminal raw (stdout is their MCP
stream, left as the SDK writes it), a client gone (stdout a closed pipe) ends them as SIGPIPE would (141,
no traceback), and ``--opt=--`` is a usage error, not a traceback. Real processes, real pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_cli_output_edge import raw_controls

pytestmark = pytest.mark.timeout(120)
ESCAPES = "\x1b]52;c;QQ==\x07\x1b[2J\u202eexe\r"
ENTRIES = {"llm": "sentinel_mcp.llm", "swarm": "sentinel_mcp.swarm", "device": "device_tools",
           "sensors": "device_tools.sensors"}
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})


def _run(module: str, *args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """The entry point as a program; its output decoded as written (text mode would read ``\\r`` as a line
    end)."""
    run = subprocess.run([sys.executable, "-m", module, *args], timeout=60, env={**os.environ, **(env or {})},
                         **kw)
    out, err = (o.decode("utf-8", "surrogateescape") if isinstance(o, bytes) else o
                for o in (run.stdout, run.stderr))
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


# (entry, arguments, environment, what stderr says of it): each prints a value someone else chose (the
# device's settings error names the setting, not the value: it ended in a traceback)
HOSTILE = [
    ("llm", ["--" + ESCAPES], {}, "unrecognized arguments: --⟨U+001B⟩]52;c;QQ=="),
    ("swarm", ["--" + ESCAPES], {}, "unrecognized arguments: --⟨U+001B⟩]52;c;QQ=="),
    ("swarm", ["--config=/nonexistent/" + ESCAPES + ".json"], {}, "config file not found"),
    ("sensors", [], {"SENTINEL_SENSORS": json.dumps({ESCAPES: 1})}, "⟨U+202E⟩exe⟨U+000D⟩"),
    ("device", [], {"SENTINEL_DEVICE_BACKEND": ESCAPES}, "sentinel.device.backend: Input should be"),
]


@pytest.mark.parametrize(("entry", "args", "env", "said"), HOSTILE, ids=[f"{h[0]}-{h[3]}" for h in HOSTILE])
def test_what_an_entry_point_prints_reaches_no_terminal_raw(tmp_path: Path, entry, args, env, said) -> None:
    run = _run(ENTRIES[entry], *args, env={"SENTINEL_DATA_DIR": str(tmp_path), **env},
               stdin=subprocess.DEVNULL, capture_output=True)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert said in run.stderr, run.stderr
    assert raw_controls(run.stderr.rstrip("\n")) == [] and "Traceback" not in run.stderr, run.stderr


# (entry, an option of one value given the end-of-options marker)
ONE_VALUE = [("llm", "--model=--"), ("llm", "--n-ctx=--"), ("swarm", "--config=--"), ("swarm", "-c=--")]


@pytest.mark.parametrize(("entry", "option"), ONE_VALUE)
def test_an_option_given_the_end_of_options_marker_is_a_usage_error(tmp_path: Path, entry, option) -> None:
    run = _run(ENTRIES[entry], option, env={"SENTINEL_DATA_DIR": str(tmp_path)}, stdin=subprocess.DEVNULL,
               capture_output=True)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert "expected one value" in run.stderr and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("entry", [*sorted(ENTRIES), "serve"])
def test_a_client_gone_ends_an_entry_point_quietly(tmp_path: Path, entry) -> None:
    """The client asks, then is gone before the answer (stdout a closed pipe): exit as SIGPIPE would (141),
    where an exception group's traceback ended it with 1 (``sentinel-mcp serve`` over stdio too)."""
    if entry == "serve":
        cfg = tmp_path / "serve.json"
        cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "d"), "builtins": []}}))
        module, args = "sentinel_mcp", ["-c", str(cfg), "serve"]
    else:
        module, args = ENTRIES[entry], []
    read, write = os.pipe()
    os.close(read)  # gone before the server writes: its first answer meets a broken pipe, every time
    try:
        run = _run(module, *args, env={"SENTINEL_DATA_DIR": str(tmp_path), "SENTINEL_DEVICE_DATA_DIR":
                                        str(tmp_path / "device")},
                   input=(INITIALIZE + "\n").encode(), stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert run.returncode == 141, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr
