"""What ``${VAR}`` expands to is bounded over the whole config (red team "config11"): the JSON config has no
YAML anchors to make a billion laughs of, but its variables are the same multiplication. A 4 MiB file of
``${BIG}`` (six bytes each) with a 1 MiB variable expanded to 700 GB, in memory, before any check. The
expansion now stops at ``MAX_EXPANDED`` characters in all, with an error naming the key; what any real config
expands to (tokens, URLs, a PEM key) is far below it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.config_vars import MAX_EXPANDED
from sentinel_mcp.core.errors import ConfigError

MIB = 1 << 20


def _config(tmp_path: Path, data: dict) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps(data))
    return cfg


@pytest.mark.parametrize("shape", ["one_string", "many_strings", "env_file"])
def test_variables_multiplied_past_the_bound_are_refused(tmp_path: Path, monkeypatch, shape: str) -> None:
    monkeypatch.setenv("RT_BIG", "x" * MIB)
    count = MAX_EXPANDED // MIB + 2
    if shape == "one_string":
        data = {"mcpServers": {"s": {"command": "x", "args": ["${RT_BIG}" * count]}}}
    elif shape == "many_strings":
        data = {"mcpServers": {"s": {"command": "x", "args": ["${RT_BIG}"] * count}}}
    else:
        env = tmp_path / "big.env"
        env.write_text("".join(f"K{i}=${{RT_BIG}}\n" for i in range(count)))
        data = {"mcpServers": {"s": {"command": "x", "envFile": "big.env"}}}
    with pytest.raises(ConfigError) as refused:
        load_config(_config(tmp_path, data))
    said = str(refused.value)
    assert "mcpServers.s" in said and "expand" in said and len(said) < 2000, said[:3000]


def test_a_large_value_used_a_few_times_loads(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RT_BIG", "x" * MIB)
    cfg = load_config(_config(tmp_path, {"mcpServers": {"s": {"command": "x", "args": ["${RT_BIG}"] * 3}}}))
    assert cfg.mcp_servers["s"].args == ["x" * MIB] * 3
