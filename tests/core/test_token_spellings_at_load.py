"""A configured bearer token that no request can ever present is refused when the config is read, naming the
key (red team "perms12"). A header is read as Latin-1 bytes with HTTP's spaces around the token taken off
(``identity/credentials.py``), so a token with a character outside printable ASCII (``é``, a no-break space,
a zero-width space, a tab) or with spaces around it never matched: the principal silently could not sign
in. Tokens are compared whole, so the rule is the set of characters a token may hold (printable ASCII, no
space at either end), not a list of the spellings tried here."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.config import load_config
from sentinel_mcp.core.errors import ConfigError

GOOD = "a-good-token-0123456789"
BAD = [GOOD + "é", "é" + GOOD, GOOD + "\u00a0", " " + GOOD, GOOD + " ", "\t" + GOOD, GOOD + "\t",
       GOOD[:8] + "\u200b" + GOOD[8:], GOOD + "\n", GOOD[:8] + "\x7f" + GOOD[8:], GOOD + "\u3000",
       GOOD[:8] + "\x00" + GOOD[8:], "ｔｏｋｅｎ" + GOOD]


def _load(tmp_path: Path, sentinel: dict[str, Any]) -> Any:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], **sentinel}}))
    os.chmod(cfg, 0o600)
    return load_config(cfg)


@pytest.mark.parametrize("token", BAD)
def test_a_principal_token_no_request_can_present_is_refused(tmp_path: Path, token: str) -> None:
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, {"principals": [{"name": "alice", "token": GOOD + "x"},
                                        {"name": "bob", "token": token}]})
    assert re.search(r"principals(\.1|\[1\])\.token", str(e.value)), e.value
    assert "printable ASCII" in str(e.value) or "NUL" in str(e.value)  # (NUL: refused earlier, as ever)
    assert token.strip() not in str(e.value)  # the secret itself is not quoted back


@pytest.mark.parametrize("token", BAD)
def test_the_owners_token_no_request_can_present_is_refused(tmp_path: Path, token: str) -> None:
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, {"http": {"token": token}})
    assert "http.token" in str(e.value)
    assert "printable ASCII" in str(e.value) or "NUL" in str(e.value)


@pytest.mark.parametrize("token", [GOOD, "A" * 16 + "~!#$%&'*+.^_`|", "with inner space ok-12345"])
def test_printable_ascii_tokens_are_kept(tmp_path: Path, token: str) -> None:
    cfg = _load(tmp_path, {"principals": [{"name": "bob", "token": token}], "http": {"token": GOOD + "o"}})
    assert cfg.sentinel.principals[0].token == token


@pytest.mark.parametrize("token", BAD)
def test_an_a2a_token_or_api_key_no_request_can_present_is_refused(tmp_path: Path, token: str) -> None:
    from sentinel_mcp.a2a.settings import A2ASettings

    for section, key in (({"token": token}, "token"), ({"api_keys": {"bob": token}}, "api key of 'bob'")):
        with pytest.raises(ValueError) as e:
            A2ASettings.model_validate(section)
        assert key in str(e.value), e.value
        assert "printable ASCII" in str(e.value), e.value
    assert A2ASettings.model_validate({"api_keys": {"bob": GOOD}}).api_keys == {"bob": GOOD}
