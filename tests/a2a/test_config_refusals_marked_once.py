"""A config refused for an A2A name quotes the name marked once: ``sentinel-mcp`` prints a real override as
``⟨U+202E⟩`` and a typed-out bracket as ``⟨U+27E8⟩``, never the mark of a mark (the validator's marked text
was a plain ``str`` again in pydantic's message and in each ``ConfigError`` that wrapped it, and was marked
again where it was printed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sentinel_mcp.cli import _shown
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.errors import user_message

URL = "http://127.0.0.1:1/a2a"
KEY = "sha256:" + "0" * 64


def printed(tmp_path: Path, a2a: dict) -> str:
    """What ``sentinel-mcp`` prints for the config (``cli.main``: the error's text, shown)."""
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": a2a}}, indent=2))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return _shown(user_message(caught.value))


@pytest.mark.parametrize("a2a, once", [
    ({"name": "Sen\u202etinel"}, "Sen⟨U+202E⟩tinel"),  # its own name hides a character
    ({"peer_keys": {"Bo\u202eok": KEY}}, "Bo⟨U+202E⟩ok"),  # a pinned name does
    ({"bridge_targets": {"Bo\u200bok": URL}}, "Bo⟨U+200B⟩ok"),  # a listed name does
    ({"name": "Book⟨x⟩", "bridge_targets": {"Book⟨x⟩": URL}}, "Book⟨U+27E8⟩x⟨U+27E9⟩"),  # its own is a peer's
    ({"name": "B00k⟨x⟩", "peer_keys": {"Book⟨x⟩": KEY}}, "B00k⟨U+27E8⟩x⟨U+27E9⟩"),  # it reads as a peer's
])
def test_a_refused_name_is_printed_marked_once(tmp_path: Path, a2a: dict, once: str) -> None:
    text = printed(tmp_path, a2a)
    assert once in text and "⟨U+27E8⟩U+" not in text, text
    assert str(tmp_path) in text  # the file is still named


def test_the_other_problems_of_a_section_still_read_as_they_did(tmp_path: Path) -> None:
    text = printed(tmp_path, {"nme": "x", "port": "80"})
    assert "sentinel.a2a.nme: unknown key (did you mean 'name'?)" in text and "⟨" not in text, text
