"""An error about a config value that came from ``${VAR}`` names the variable, never its value: the value may
be a secret (a key in a URL's query, a token), and a host such as Claude Desktop keeps a server's stderr in a
log file."""

from __future__ import annotations

import pytest

from sentinel_mcp.config import ConfigError, parse_config

SECRET = "hunter2 s3cret/value"


@pytest.mark.parametrize("data", [
    {"sentinel": {"http": {"host": "${LEAKME}"}}},
    {"sentinel": {"rulebases": ["shipped:${LEAKME}/../x.pl"]}},
    {"sentinel": {"builtins": ["${LEAKME}"]}},
    {"sentinel": {"builtins": ["x${LEAKME}"]}},
])
def test_an_error_names_the_variable_not_its_value(monkeypatch, data):
    monkeypatch.setenv("LEAKME", SECRET)
    with pytest.raises(ConfigError) as err:
        parse_config(data, source="cfg.json")
    assert SECRET not in str(err.value) and "${LEAKME}" in str(err.value), str(err.value)


def test_an_upstream_url_quoted_in_an_error_names_the_variable(monkeypatch):
    """Plaintext beyond loopback quotes the URL (its path: a query is never quoted,
    test_config_url_credentials.py); a URL holding a space is refused without quoting it at all."""
    monkeypatch.setenv("LEAKME", "hunter2-s3cret")
    with pytest.raises(ConfigError) as err:
        parse_config({"mcpServers": {"r": {"url": "http://h.example/${LEAKME}/mcp"}}}, source="cfg.json")
    assert "hunter2-s3cret" not in str(err.value) and "${LEAKME}" in str(err.value), str(err.value)
