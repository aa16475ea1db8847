"""A value of the wrong JSON type is refused naming its key, at every level of the config: never coerced
(``"port": true`` is not port 1, ``"disabled": "no"`` is not a boolean, ``"timeout": "5"`` is not a number).
An unknown key is named with the key it most likely meant."""

from __future__ import annotations

import pytest

from sentinel_mcp.config import ConfigError, parse_config


def _refused(data: dict, *words: str) -> str:
    with pytest.raises(ConfigError) as err:
        parse_config(data, source="cfg.json")
    text = str(err.value)
    for w in words:
        assert w in text, text
    return text


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"mcpServers": {"a": {"command": "x", "timeout": "5"}}}, "mcpServers.a.timeout"),
        ({"mcpServers": {"a": {"command": "x", "disabled": "no"}}}, "mcpServers.a.disabled"),
        ({"mcpServers": {"a": {"command": "x", "disabled": 1}}}, "mcpServers.a.disabled"),
        ({"mcpServers": {"a": {"url": "https://h.example/mcp", "connect_timeout": True}}},
         "mcpServers.a.connect_timeout"),
        ({"sentinel": {"http": {"port": True}}}, "sentinel.http.port"),
        ({"sentinel": {"http": {"port": "8080"}}}, "sentinel.http.port"),
        ({"sentinel": {"policy": {"confirm_ttl": True}}}, "sentinel.policy.confirm_ttl"),
        ({"sentinel": {"policy": {"max_fetches": "12"}}}, "sentinel.policy.max_fetches"),
        ({"sentinel": {"max_argument_bytes": "1000"}}, "sentinel.max_argument_bytes"),
        ({"sentinel": {"principals": [{"name": "bob", "token": "t" * 20, "burst": True}]}},
         "sentinel.principals.0.burst"),
        ({"sentinel": {"builtins": ["device"], "device": {"physical_confirmation": "no"}}},
         "sentinel.device.physical_confirmation"),
        ({"sentinel": {"builtins": ["device"], "device": {"adb_port": "5037"}}}, "sentinel.device.adb_port"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_its_key(data: dict, key: str) -> None:
    _refused(data, "cfg.json", key)


def test_the_right_types_still_load() -> None:
    cfg = parse_config({"mcpServers": {"a": {"command": "x", "timeout": 5, "disabled": False}},
                        "sentinel": {"http": {"port": 8080}, "policy": {"confirm_ttl": 60}}})
    assert cfg.mcp_servers["a"].timeout == 5.0 and cfg.sentinel.http.port == 8080


@pytest.mark.parametrize(
    ("data", "key", "meant"),
    [
        ({"sentinel": {"http": {"prot": 1}}}, "sentinel.http.prot", "port"),
        ({"sentinel": {"policy": {"defualt": "deny"}}}, "sentinel.policy.defualt", "default"),
        ({"sentinel": {"principals": [{"name": "bob", "tokn": "t" * 20}]}}, "tokn", "token"),
        ({"sentinel": {"builtins": ["device"], "device": {"backnd": "simulated"}}}, "sentinel.device.backnd",
         "backend"),
    ],
)
def test_an_unknown_key_is_named_with_the_key_meant(data: dict, key: str, meant: str) -> None:
    _refused(data, key, f"did you mean '{meant}'?")


def test_a_misspelt_server_setting_is_refused_with_the_key_meant() -> None:
    """A server entry's unknown keys are other hosts' settings and only warned about, but one that is a near
    miss of Sentinel's own (``"disable": true``) would leave the server running: it is refused."""
    _refused({"mcpServers": {"a": {"command": "x", "disable": True}}}, "mcpServers.a.disable",
             "did you mean 'disabled'?")
    _refused({"mcpServers": {"a": {"command": "x", "timout": 5}}}, "did you mean 'timeout'?")
    # a misspelt section at the top level would drop the whole policy or every server
    _refused({"sentinal": {"policy": {"default": "deny"}}}, "sentinal", "did you mean 'sentinel'?")
    _refused({"mcpServrs": {"a": {"command": "x"}}}, "mcpServrs", "did you mean 'mcpServers'?")
    # other hosts' own keys are still only warnings
    cfg = parse_config({"mcpServers": {"a": {"command": "x", "autoApprove": ["t"], "transportType": "stdio",
                                             "description": "d"}}})
    assert len(cfg.warnings) == 3, cfg.warnings
