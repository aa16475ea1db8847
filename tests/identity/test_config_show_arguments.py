"""``config show`` masked secrets under secret-named keys and an upstream's env and header values, but an
upstream's ``args`` were printed as they were: a token written on the command line (``["--token", "abc"]``,
``--api-key=abc``, ``--password abc``) reached the terminal or the bug report. The value after a flag whose
name says secret (token, key, secret, password, passwd, auth, credential), or joined to it by ``=``, is
masked now; a value written as ``${VAR}`` is still shown as written, other arguments as they are. The
exposure warning counts such an argument too."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sentinel_mcp import config_secrets

pytestmark = pytest.mark.timeout(120)

SECRET = "s3cr3t-value-9"
SPELLINGS = [
    ["--token", SECRET], ["--token=" + SECRET], ["--api-key", SECRET], ["--api-key=" + SECRET],
    ["--password", SECRET], ["-password", SECRET], ["--passwd=" + SECRET], ["--PASSWORD", SECRET],
    ["--apiKey", SECRET], ["--client-secret", SECRET], ["--auth", SECRET], ["--Authorization=" + SECRET],
    ["--credentials", SECRET], ["--access_token=" + SECRET], ["--key", SECRET], ["API_TOKEN=" + SECRET],
    ["--auth-token", "-" + SECRET],  # a value that starts with a dash is still the flag's value
]


@pytest.mark.parametrize("args", SPELLINGS)
def test_the_value_of_a_secret_named_flag_is_masked(args):
    shown = config_secrets.masked_arguments(["serve", *args, "--verbose", "path/to/dir"])
    assert SECRET not in json.dumps(shown), shown
    assert shown[0] == "serve" and shown[-2:] == ["--verbose", "path/to/dir"], shown
    assert "***" in json.dumps(shown)
    written = config_secrets.written_secrets({"mcpServers": {"u": {"command": "x", "args": args}}})
    assert written == ["mcpServers.u.args"]


def test_other_arguments_and_variables_are_shown_as_written():
    args = ["--port", "8080", "--dir=/srv", "--key=${API_KEY}", "--token", "${TOKEN}", "-v"]
    assert config_secrets.masked_arguments(args) == args
    assert config_secrets.written_secrets({"mcpServers": {"u": {"command": "x", "args": args}}}) == []


def test_config_show_masks_secret_arguments(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({
        "mcpServers": {
            "cmd": {"command": "x", "args": ["--token", SECRET, "--api-key=" + SECRET + "x", "--password",
                                             SECRET + "y", "--port", "8080"]},
        },
        "sentinel": {"data_dir": str(tmp_path)},
    }))
    out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "show"],
                         capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert SECRET not in out.stdout, out.stdout
    assert json.loads(out.stdout)["mcpServers"]["cmd"]["args"] == [
        "--token", "***", "--api-key=***", "--password", "***", "--port", "8080"]
