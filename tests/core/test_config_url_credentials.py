"""A credential written in a URL of the config (a user name and password, a key in the query: the way many
hosted MCP servers are configured, ``https://server.example/mcp?api_key=...``) is never printed: ``config
show`` (meant for a terminal or a bug report; "tokens masked") showed it whole, and the error of an upstream
in plaintext beyond loopback quoted it, though the A2A orchestrator's error already left it out. Shown: the
scheme, host, port and path, a password and each query value as ``***``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

pytestmark = pytest.mark.timeout(120)

SECRET = "hunter2-s3cret"


def _run(tmp_path: Path, data: dict, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT), **variables}
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), *args],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)


SHOWN = [
    ({"mcpServers": {"r": {"url": f"https://bob:{SECRET}@mcp.example.com/mcp"}}},
     "https://bob:***@mcp.example.com/mcp"),
    ({"mcpServers": {"r": {"url": f"https://mcp.example.com/mcp?api_key={SECRET}&profile=p1"}}},
     "https://mcp.example.com/mcp?api_key=***&profile=***"),
    ({"mcpServers": {"r": {"url": f"https://mcp.example.com/mcp?{SECRET}"}}}, "https://mcp.example.com/mcp?***"),
    ({"mcpServers": {"r": {"url": f"https://:{SECRET}@[::1]:8443/mcp#frag"}}}, "https://:***@[::1]:8443/mcp#frag"),
    ({"mcpServers": {"r": {"url": f"https://{SECRET}@mcp.example.com/mcp"}}}, "https://***@mcp.example.com/mcp"),
    ({"mcpServers": {}, "sentinel": {"a2a": {"orchestrator_url": f"https://o:{SECRET}@orch.example.com/a2a"}}},
     "https://o:***@orch.example.com/a2a"),
]


@pytest.mark.parametrize("data, shown", SHOWN)
def test_config_show_masks_a_credential_in_a_url(tmp_path: Path, data: dict, shown: str) -> None:
    run = _run(tmp_path, data, "config", "show")
    assert run.returncode == 0, run.stderr
    assert SECRET not in run.stdout and shown in run.stdout, run.stdout


@pytest.mark.parametrize("url", [
    f"http://bob:{SECRET}@mcp.example.com/mcp",
    f"http://mcp.example.com/mcp?token={SECRET}",
    f"http://mcp.example.com/mcp#{SECRET}",
    f"http://{SECRET}@mcp.example.com/mcp",
    f"http://b@b:{SECRET}@mcp.example.com/mcp",
])
def test_an_error_quoting_an_upstream_url_leaves_its_credentials_out(tmp_path: Path, url: str) -> None:
    run = _run(tmp_path, {"mcpServers": {"r": {"url": url}}}, "config", "show")
    assert run.returncode == 2 and "plaintext beyond loopback" in run.stderr, (run.stdout, run.stderr)
    assert SECRET not in run.stderr and "mcp.example.com/mcp" in run.stderr, run.stderr


def test_a_credential_from_a_variable_is_shown_as_written(tmp_path: Path) -> None:
    """``${VAR}`` names where a secret comes from (config show prints a string a variable was expanded in as
    written): kept, while a literal beside it is masked."""
    url = "https://${NAME}:${PASSWORD}@h.example/mcp?key=${KEY}&v=" + SECRET
    run = _run(tmp_path, {"mcpServers": {"r": {"url": url}}}, "config", "show", NAME="n", PASSWORD="p-value",
               KEY="k-value")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["mcpServers"]["r"]["url"] == (
        "https://${NAME}:${PASSWORD}@h.example/mcp?key=${KEY}&v=***")
