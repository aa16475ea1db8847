"""A bad built-in section stops Sentinel when the config is loaded, naming the file, the key and the problem.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sentinel_mcp.config import ConfigError, embedded_default, load_config, parse_config
from sentinel_mcp.core.builtin import APPLICATION_SECTIONS, BUILTINS, SECTION_MODELS, load_section_model


def _problem(sentinel: dict, source: str = "/etc/sentinel.json") -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config({"sentinel": sentinel}, source)
    return str(caught.value)


@pytest.mark.parametrize(
    "section",
    [
        "devcie",
        "Device",
        "DEVICE",
        "device ",
        " device",
        "devices",
        "dev",
        "sensor",
        "sensros",
        "lmm",
        "LLM",
        "swarms",
        "a2A",
        "agents",
        "serach",
        "consoel",
        "oauth2",
        "telemetery",
        "device.backend",
        "",
        "\u0435device",
        "device\u200b",
        "policy_",
        "sentinel_",
        "__class__",
        "model_config",
    ],
)
def test_a_misspelt_section_stops_the_load_with_its_name(section):
    text = _problem({section: {}})
    assert text.startswith("invalid config /etc/sentinel.json: ")
    assert f"sentinel.{section}: unknown section" in text


def test_a_near_miss_suggests_the_section_meant():
    assert "did you mean 'device'?" in _problem({"devcie": {"backend": "adb"}})
    assert "did you mean 'sensors'?" in _problem({"sensros": {}})


@pytest.mark.parametrize(
    "typo,meant",
    [("rulebase", "rulebases"), ("rule_bases", "rulebases"), ("seed", "seeds"), ("datadir", "data_dir"),
     ("principal", "principals"), ("builtin", "builtins"), ("Store", "store"), ("polcy", "policy")],
)
def test_a_misspelt_setting_of_sentinel_suggests_the_setting_meant(typo, meant):
    """A typo of one of ``sentinel``'s own settings (``rulebase`` for ``rulebases``) names the setting meant;
    before, it was "unknown section" followed by the list of built-in sections, none of which was meant."""
    text = _problem({typo: ["x.pl"] if "rule" in typo else {}})
    assert text.startswith(f"invalid config /etc/sentinel.json: sentinel.{typo}: unknown "), text
    assert f"(did you mean {meant!r}?)" in text, text


def test_an_unknown_name_far_from_every_key_lists_settings_and_sections():
    text = _problem({"zzzzqqq": {}})
    assert "unknown section or setting" in text, text
    for name in ("rulebases", "store", "principals", "device", "llm"):
        assert name in text, text


@pytest.mark.parametrize(
    "sentinel,key",
    [
        ({"device": {"backend": "bogus"}}, "sentinel.device.backend"),
        ({"device": {"backend": "ADB"}}, "sentinel.device.backend"),
        ({"device": {"backend": ""}}, "sentinel.device.backend"),
        ({"device": {"backend": None}}, "sentinel.device.backend"),
        ({"device": {"backend": ["adb"]}}, "sentinel.device.backend"),
        ({"device": {"backnd": "adb"}}, "sentinel.device.backnd"),
        ({"device": {"adb_port": 0}}, "sentinel.device.adb_port"),
        ({"device": {"adb_port": "5037x"}}, "sentinel.device.adb_port"),
        ({"device": {"confirm_timeout": -1}}, "sentinel.device.confirm_timeout"),
        ({"device": {"risk_classifier": "model"}}, "sentinel.device.risk_classifier"),
        ({"sensors": {"source": "bogus"}}, "sentinel.sensors.source"),
        ({"sensors": {"sourse": "simulated"}}, "sentinel.sensors.sourse"),
        ({"llm": {"n_ctx": "big"}}, "sentinel.llm.n_ctx"),
        ({"llm": {"modle": "x.gguf"}}, "sentinel.llm.modle"),
        ({"swarm": {"backend": "bogus"}}, "sentinel.swarm.backend"),
        ({"agent": {"unknown_knob": 1}}, "sentinel.agent.unknown_knob"),
        ({"a2a": {"token": "short"}}, "sentinel.a2a.token"),
        ({"search": {"hashing_dim": 3}}, "sentinel.search.hashing_dim"),
        ({"sentinel": {"anything": 1}}, "sentinel.sentinel.anything"),
    ],
)
def test_a_bad_key_in_a_known_section_stops_the_load_naming_it(sentinel, key):
    text = _problem(sentinel)
    assert text.startswith("invalid config /etc/sentinel.json: ")
    assert key + ":" in text


@pytest.mark.parametrize("value", ["simulated", 1, True, [], [{"backend": "adb"}], "{}"])
def test_a_section_that_is_not_an_object_stops_the_load(value):
    for section in ("device", "console", "telemetry"):
        assert f"sentinel.{section}: must be an object" in _problem({section: value})


@pytest.mark.parametrize(
    "name", ["devcie", "Device", "llm ", "", "gateway", "policy", "../device", "device;rm"]
)
def test_an_unknown_built_in_stops_the_load(name):
    assert "sentinel.builtins[1]: unknown built-in" in _problem({"builtins": ["llm", name]})
    assert f"sentinel.builtin_timeouts.{name}: unknown built-in" in _problem(
        {"builtin_timeouts": {name: {"timeout": 10}}}
    )


def test_good_sections_load():
    cfg = parse_config(
        {
            "sentinel": {
                "builtins": sorted(BUILTINS),
                "device": {"backend": "adb", "adb_port": 5038},
                "sensors": {},
                "llm": {},
                "swarm": {},
                "agent": {},
                "a2a": {},
                "search": {"hashing_dim": 512},
                "console": {},
                "telemetry": {},
                "oauth": {},
                "sentinel": {},
            }
        },
        "good.json",
    )
    assert cfg.sentinel.builtin_settings("device") == {"backend": "adb", "adb_port": 5038}
    embedded_default()  # the shipped default passes its own check


def test_every_section_model_loads_and_forbids_unknown_keys():
    for name in SECTION_MODELS:
        model = load_section_model(name)
        assert model is not None and model.model_config.get("extra") == "forbid", name
    assert not APPLICATION_SECTIONS & set(SECTION_MODELS)


def test_load_config_names_the_file(tmp_path):
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"device": {"backend": "bogus"}}}))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(path) in str(caught.value) and "sentinel.device.backend" in str(caught.value)


def test_serve_does_not_start_on_a_bad_section(tmp_path):
    path = tmp_path / "sentinel.json"
    path.write_text(
        json.dumps({"sentinel": {"data_dir": str(tmp_path / "data"), "devcie": {"backend": "adb"}}})
    )
    run = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(path), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2, run.stderr
    assert f"invalid config {path}: sentinel.devcie: unknown section (did you mean 'device'?)" in run.stderr
    assert not (tmp_path / "data").exists()  # nothing started, nothing written
