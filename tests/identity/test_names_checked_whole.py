"""A name check matches the whole name: ``re.match`` with a pattern ending in ``$`` also takes the name with
a newline after it (``$`` matches before a last ``\\n``). ``"owner\\n"`` was a peer name the reserved names
did not catch, ``"alice\\n"`` a certificate subject and file name; and the standalone A2A service took an API
key named for a reserved principal (``owner``) or with any characters in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.swarm.spec import TaskSpec
from sentinel_mcp.tls.authority import AuthorityError, LocalCA

KEY = "peer-key-0123456789abcdef"
NAMES = ["owner\n", "bot\n", "owner", "sentinel", "a/b", "bot name", "x" * 65, ""]


@pytest.mark.parametrize("name", NAMES)
def test_an_a2a_peer_name_is_a_principal_name_on_the_gateway(tmp_path: Path, name: str) -> None:
    cfg = tmp_path / "sentinel.json"
    sentinel = {"data_dir": str(tmp_path / "state"), "http": {"token": "owner-token-0123456789"},
                "a2a": {"task_db": "", "api_keys": {name: KEY}}}
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    with pytest.raises(ConfigError, match="cannot name a principal"):
        http_auth_for(load_config(cfg))


@pytest.mark.parametrize("name", NAMES)
def test_an_a2a_peer_name_is_a_principal_name_on_the_standalone_service(name: str) -> None:
    with pytest.raises(ValidationError, match="cannot name a principal"):
        A2ASettings(api_keys={name: KEY})
    with pytest.raises(ValidationError, match="cannot name a principal|at least 1 character"):
        A2ASettings(token=KEY, token_identity=name)
    kept = A2ASettings(api_keys={"bot": KEY}, token=KEY + "x", token_identity="other-bot")
    assert kept.api_keys == {"bot": KEY} and kept.token_identity == "other-bot"


def test_a_certificate_names_a_principal_whole(tmp_path: Path) -> None:
    ca = LocalCA(tmp_path / "ca")
    ca.create()
    for name in ("alice\n", "alice\r", "../alice"):
        with pytest.raises(AuthorityError):
            ca.issue_client(name)
    with pytest.raises(AuthorityError):
        ca.issue_client("alice", file_stem="alice\n")
    assert not [p for p in (tmp_path / "ca").rglob("*") if "\n" in p.name]


SPEC = {"app_name": "Notes", "package_name": "com.example.notes", "features": ["add a note", "list notes"]}


def test_an_app_name_keeps_no_newline() -> None:
    """(The spec strips the ends of its texts before the name's pattern, which matches from its start.)"""
    assert TaskSpec.model_validate({**SPEC, "app_name": "Notes\n"}).app_name == "Notes"
    with pytest.raises(ValidationError, match="must start with a letter"):
        TaskSpec.model_validate({**SPEC, "app_name": "Notes\nEvil"})


def test_other_names_checked_by_pattern_take_no_newline_either() -> None:
    from sentinel_mcp.core.host_names import is_host
    from sentinel_mcp.swarm.build_service import TASK_ID
    from sentinel_mcp.tls.settings import normalize_sha256

    assert is_host("localhost") and not is_host("localhost\n") and not is_host("local\nhost")
    assert TASK_ID.fullmatch("t20261202-154400-abcdef")
    for task in ("t20261202-154400-abcdef\n", "t20261202-154400-abcdef\n../x"):
        assert not TASK_ID.fullmatch(task)
    assert normalize_sha256(" " + "ab" * 32 + "\n") == "ab" * 32  # the ends are trimmed, as written
    with pytest.raises(ValueError):
        normalize_sha256("ab" * 32 + "\nab")
