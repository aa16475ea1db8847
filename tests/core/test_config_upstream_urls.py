"""An upstream's ``url`` names one place, read one way, when the config loads: no host, a port out of range
or 0, a space, control character or backslash (URL parsers disagree on where such a URL goes:
``http://evil.example\\@127.0.0.1/`` is loopback to one and evil.example to a browser's), a host that is not
ASCII (a look-alike of another name), a shorthand address (``127.1``: some address to a resolver) are config
errors naming the server and the line (rc 2). Before, each loaded: the upstream failed at every connect, or
was taken for whatever one parser read. A URL is quoted without its credentials.

``config show`` runs in process (``run_command``); one refusal and one load run as the real command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.support.cli_in_process import run_command

pytestmark = pytest.mark.timeout(120)


def _show(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch | None
          ) -> subprocess.CompletedProcess[str]:
    """``config show`` of a config of one upstream at ``url``: in process with ``monkeypatch``."""
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"mcpServers": {"r": {"url": url}}}, indent=2))
    os.chmod(path, 0o600)
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d")}
    return run_command(["-c", str(path), "config", "show"], cwd=tmp_path, env=env, monkeypatch=monkeypatch)


NAMES_NO_ONE_PLACE = [
    ("https://", ["no host"]),
    ("https:///mcp", ["no host"]),
    ("https://:443/mcp", ["no host"]),
    ("https://user:pw@/mcp", ["no host"]),
    ("https://mcp.example.com:99999/mcp", ["port"]),
    ("https://mcp.example.com:0/mcp", ["port"]),
    ("https://mcp.example.com:x/mcp", ["port"]),
    ("https://mcp.exa mple.com/mcp", ["space"]),
    ("https://mcp.example.com/m cp", ["space"]),
    ("http://evil.example\\@127.0.0.1/mcp", ["backslash"]),
    ("https://mcp.example.com\t/mcp", ["control"]),
    ("https://mcp.exаmple.com/mcp", ["not ASCII"]),  # a Cyrillic а
    ("http://127.1/mcp", ["shorthand"]),
    ("http://0x7f000001/mcp", ["shorthand"]),
]
PLAIN = [
    "https://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp?x=1#f", "http://127.0.0.1:8000/mcp",
    "http://localhost/sse", "http://[::1]:9000/mcp", "https://xn--bcher-kva.example/mcp",
    "https://my_host.internal/mcp", "https://u:p@mcp.example.com/mcp",
]


@pytest.mark.parametrize("url, words", NAMES_NO_ONE_PLACE)
def test_a_url_that_names_no_one_place_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         url: str, words: list[str]) -> None:
    _refused(_show(tmp_path, url, monkeypatch), words)


def test_the_command_refuses_a_url_that_names_no_one_place_with_rc_2(tmp_path: Path) -> None:
    url, words = NAMES_NO_ONE_PLACE[3]  # with credentials: never quoted
    _refused(_show(tmp_path, url, None), words)


def _refused(run: subprocess.CompletedProcess[str], words: list[str]) -> None:
    assert run.returncode == 2 and not run.stdout, (run.returncode, run.stdout, run.stderr)
    assert "mcpServers.r" in run.stderr and "(line " in run.stderr, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)
    assert "pw" not in run.stderr.replace("mcpServers", ""), run.stderr


@pytest.mark.parametrize("url", PLAIN)
def test_a_plain_url_still_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    run = _show(tmp_path, url, monkeypatch)
    assert run.returncode == 0, run.stderr


def test_the_command_loads_a_plain_url(tmp_path: Path) -> None:
    run = _show(tmp_path, PLAIN[-1], None)
    assert run.returncode == 0, run.stderr
