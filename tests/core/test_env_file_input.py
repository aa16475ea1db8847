"""A server's ``envFile`` is a path the config names: ``/dev/zero`` (a whole read never ended), a FIFO (a
plain open waited for a writer forever), a huge file or bytes that are not UTF-8 end as one error naming
the key and the file. A dotenv file holds secrets: one other users can read loads with a warning."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.config_shapes import MAX_ENV_FILE_BYTES

pytestmark = pytest.mark.timeout(60)


def _config(tmp_path: Path, env_file: str) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "envFile": env_file}}}))
    os.chmod(cfg, 0o600)
    return cfg


@pytest.mark.parametrize("kind", ["zero", "fifo", "huge", "binary", "directory"])
def test_an_unreadable_env_file_is_one_error(tmp_path, kind):
    target = tmp_path / "secrets.env"
    if kind == "zero":
        target = Path("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "huge":
        with open(target, "wb") as f:
            f.truncate(MAX_ENV_FILE_BYTES + 1)
    elif kind == "binary":
        target.write_bytes(b"TOKEN=\xff\xfe\n")
    else:
        target.mkdir()
    with pytest.raises(ConfigError) as err:
        load_config(_config(tmp_path, str(target)))
    assert "mcpServers.s.envFile" in str(err.value) and str(target) in str(err.value), str(err.value)


def test_an_env_file_others_can_read_is_warned_about(tmp_path):
    env = tmp_path / "secrets.env"
    env.write_text("TOKEN=abc\n")
    os.chmod(env, 0o644)
    cfg = load_config(_config(tmp_path, str(env)))
    assert cfg.mcp_servers["s"].env == {"TOKEN": "abc"}
    assert any("readable by other users" in w and str(env) in w for w in cfg.warnings), cfg.warnings
    os.chmod(env, 0o600)
    assert not load_config(_config(tmp_path, str(env))).warnings
