"""Sentinel's own name (its card's name, its mDNS instance) is held to the rules a peer's name is: a name that
hides characters, mixes scripts, or reads as a name the config gives a peer (pinned in ``peer_keys``, listed
in ``bridge_targets``) would make this agent the look-alike a person or a peer is misled by. Such a config is
refused when it is loaded, naming the file, the key and the problem, as a refused ``peer_keys`` name is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.a2a.test_card_signatures import ALICE, pem

from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.a2a.settings import A2ASettings

PEER = "Booking Agent"
FLAWED = [
    ("Sen\u200btinel", "invisible"),  # a zero-width space
    ("Sentinel\u202e", "invisible"),  # a right-to-left override
    ("Sen\u200dtinel", "invisible"),  # a zero-width joiner
    ("S\u0435ntinel", "mixes letters"),  # a Cyrillic е
    ("Sent\u0456nel", "mixes letters"),  # a Cyrillic і
    ("S\u03bfntinel", "mixes letters"),  # a Greek ο
]
# each reads as a peer's name (own name, peer's name): confusables of one script, other look-alike letters
IMITATIONS = [
    ("\u0412\u041e\u041e\u041a\u0406\u039dG \u0410G\u0415\u039d\u0422", PEER),  # (mixed: refused either way)
    ("B00king Agent", PEER),  # zeros
    ("Bookin\u0261 Agent", PEER),  # a Latin script g
    ("B\u022foking Agent", PEER),  # a dot above
    ("\u0412\u041e\u041e\u041a", "book"),  # Cyrillic capitals
    ("\u0392\u039f\u039f\u039a", "book"),  # Greek capitals
    ("\u0410\u0421\u041c\u0415", "acme"),  # Cyrillic А, С, М, Е
]
SAME = ["BOOKING AGENT", "ＢＯＯＫＩＮＧ ＡＧＥＮＴ", "booking agent"]  # the name itself, as pins compare it


def _load(tmp_path: Path, a2a: dict) -> str:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": a2a}}, indent=2))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = str(caught.value)
    assert str(path) in text and "sentinel.a2a.name" in text, text
    return text


@pytest.mark.parametrize(("name", "problem"), FLAWED)
def test_an_own_name_that_cannot_read_as_itself_is_a_config_error(tmp_path: Path, name: str,
                                                                    problem: str) -> None:
    assert problem in _load(tmp_path, {"name": name})


@pytest.mark.parametrize(("name", "peer"), IMITATIONS)
@pytest.mark.parametrize("where", ["peer_keys", "bridge_targets"])
def test_an_own_name_that_reads_as_a_configured_peers_is_a_config_error(tmp_path: Path, name: str, peer: str,
                                                                          where: str) -> None:
    value = pem(ALICE) if where == "peer_keys" else "http://127.0.0.1:9100/a2a"
    text = _load(tmp_path, {"name": name, where: {peer: value}})
    assert "mixes letters" in text or (f"sentinel.a2a.{where}" in text and "look-alike" in text), text


@pytest.mark.parametrize("name", SAME)
@pytest.mark.parametrize("where", ["peer_keys", "bridge_targets"])
def test_an_own_name_that_is_a_configured_peers_name_is_a_config_error(tmp_path: Path, name: str,
                                                                         where: str) -> None:
    value = pem(ALICE) if where == "peer_keys" else "http://127.0.0.1:9100/a2a"
    text = _load(tmp_path, {"name": name, where: {PEER: value}})
    assert f"sentinel.a2a.{where}" in text and "is the name" in text, text


@pytest.mark.parametrize("name", ["Sentinel", "Бронирование", "Κράτηση", "東京タワー Tower", "kitchen-2"])
def test_an_own_name_of_one_script_beside_other_peers_is_fine(name: str) -> None:
    settings = A2ASettings.from_section({"name": name, "peer_keys": {PEER: pem(ALICE)},
                                         "bridge_targets": {"helper": "http://127.0.0.1:9100/a2a"}})
    assert settings.name == name
