"""A bad URL or name in ``sentinel.a2a`` stops the load naming the file, the key and the problem, as any other
config error does: a ``bridge_targets`` URL that names no endpoint (a shorthand address, a host that is not
ASCII, a space or backslash, another scheme, a user name and password, a query or fragment, no host, a port
out of range, not a string), a name no peer is taken by, two names for one endpoint, and a ``peer_tokens``
key that names no endpoint or a listed endpoint in another spelling (its token would never be sent). Before,
each loaded and was refused only at the first send to that peer (or never noticed: a token never sent)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.cli import _shown
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.errors import user_message

PEER = "http://127.0.0.1:8001/a2a"


def refusal(tmp_path: Path, a2a: dict[str, Any]) -> str:
    """What ``sentinel-mcp`` prints for a config with this ``sentinel.a2a`` section."""
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": a2a}}, indent=2))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    text = _shown(user_message(caught.value))
    assert f"invalid config {path}" in text, text
    return text


@pytest.mark.parametrize("url, problem", [
    ("http://127.1:8001/a2a", "shorthand address"),
    ("http://2130706433:8001/a2a", "shorthand address"),
    ("http://0x7f.0.0.1:8001/a2a", "shorthand address"),
    ("http://127.000.000.001:8001/a2a", "shorthand address"),
    ("http://b\u043eok.example/a2a", "not ASCII"),
    ("http://book.example/a 2a", "space, control character or backslash"),
    ("http://book.example\\@evil.example/a2a", "space, control character or backslash"),
    ("http://book.example/a2a\t", "space, control character or backslash"),
    ("ftp://book.example/a2a", "is not http(s) or ws(s)"),
    ("ws://book.example/a2a", "not an http(s) URL"),
    ("file:///etc/passwd", "not http(s) or ws(s)"),
    ("http://user:pw@book.example/a2a", "user name or password"),
    ("http://user@book.example/a2a", "user name or password"),
    ("http://book.example/a2a?to=evil", "query or fragment"),
    ("http://book.example/a2a#x", "query or fragment"),
    ("http://book.example/a2a?", "query or fragment"),
    ("http:///a2a", "no host"),
    ("http://:8001/a2a", "no host"),
    ("http://book.example:70000/a2a", "does not parse"),
    ("http://book.example:0/a2a", "port 0"),
    ("http://book.example:-1/a2a", "does not parse"),
    ("book.example/a2a", "scheme"),
    ("", "scheme"),
])
def test_a_listed_url_that_names_no_endpoint_is_a_config_error(tmp_path: Path, url: str,
                                                               problem: str) -> None:
    text = refusal(tmp_path, {"bridge_targets": {"travel": url}})
    assert "sentinel.a2a.bridge_targets.travel: " in text and problem in text, text


@pytest.mark.parametrize("value", [8001, None, ["http://127.0.0.1:8001/a2a"], {"url": PEER}, True])
def test_a_listed_url_that_is_no_string_is_a_config_error(tmp_path: Path, value: Any) -> None:
    text = refusal(tmp_path, {"bridge_targets": {"travel": value}})
    assert "sentinel.a2a.bridge_targets.travel: " in text and "string" in text, text


@pytest.mark.parametrize("name, shown", [
    ("trav\u200bel", "trav⟨U+200B⟩el"),  # hidden
    ("tr\u0430vel", "tr\u0430vel"),  # mixes scripts
    ("", ""),  # (its error: "it is empty")
])
def test_a_listed_name_no_peer_is_taken_by_is_refused_at_its_key(tmp_path: Path, name: str,
                                                                 shown: str) -> None:
    text = refusal(tmp_path, {"bridge_targets": {name: PEER}})
    assert f"sentinel.a2a.bridge_targets.{shown}" in text and "not a name a peer is taken by" in text, text


def test_a_pinned_name_no_peer_is_taken_by_is_refused_at_its_key(tmp_path: Path) -> None:
    text = refusal(tmp_path, {"peer_keys": {"bo\u202eok": "sha256:" + "0" * 64}})
    assert "sentinel.a2a.peer_keys.bo⟨U+202E⟩ok: " in text, text


@pytest.mark.parametrize("other", [
    PEER, "http://127.0.0.1:8001/a2a/", "HTTP://127.0.0.1:8001/a2a", "http://127.0.0.1.:8001/a2a",
])
def test_two_names_for_one_endpoint_are_ambiguous(tmp_path: Path, other: str) -> None:
    text = refusal(tmp_path, {"bridge_targets": {"travel": PEER, "hotel": other}})
    assert "sentinel.a2a.bridge_targets.hotel: " in text and "bridge_targets.travel" in text \
        and "ambiguous" in text, text


@pytest.mark.parametrize("other", ["TRAVEL", "tr\u0430v\u0435l"])
def test_two_listed_names_that_read_alike_are_ambiguous(tmp_path: Path, other: str) -> None:
    text = refusal(tmp_path, {"bridge_targets": {"travel": PEER, other: "http://127.0.0.1:8002/a2a"}})
    assert "sentinel.a2a.bridge_targets." in text and ("ambiguous" in text or "not a name" in text), text


@pytest.mark.parametrize("key, problem", [
    ("travel", "scheme"),
    ("http://127.1:8001", "shorthand address"),
    ("http://user:pw@127.0.0.1:8001", "user name or password"),
    ("http://127.0.0.1:8001/a2a/", "spelled otherwise"),  # the listed URL, another spelling
    ("HTTP://127.0.0.1:8001/a2a", "spelled otherwise"),
    ("http://127.0.0.1:8001/", "spelled otherwise"),  # its origin, another spelling
    ("http://127.0.0.1:8001:8001", "does not parse"),
])
def test_a_token_keyed_so_it_is_never_sent_is_a_config_error(tmp_path: Path, key: str, problem: str) -> None:
    text = refusal(tmp_path, {"bridge_targets": {"travel": PEER}, "peer_tokens": {key: "t0ken-for-it"}})
    assert "sentinel.a2a.peer_tokens." in text and problem in text, text
    assert "t0ken-for-it" not in text  # the secret is never shown


@pytest.mark.parametrize("url, problem", [("http://user:s3cret-pw@127.1:9/a2a?key=s3cret-key", "shorthand"),
                                          ("ws://127.0.0.1:9/a2a?key=s3cret-key", "http(s)")])
def test_an_orchestrator_url_that_names_no_endpoint_is_a_config_error(tmp_path: Path, url: str,
                                                                        problem: str) -> None:
    text = refusal(tmp_path, {"orchestrator_url": url})
    assert "sentinel.a2a.orchestrator_url: " in text and problem in text, text
    assert "s3cret" not in text  # its credentials are never quoted


@pytest.mark.parametrize("url, problem", [("https://user:s3cret-pw@me.example", "user name or password"),
                                          ("https://me.example/?k=s3cret", "query"),
                                          ("https://127.1", "shorthand")])
def test_a_public_url_the_card_cannot_name_is_a_config_error(tmp_path: Path, url: str, problem: str) -> None:
    """The card names its interfaces under ``public_url``: never a credential, a query or a shorthand host."""
    text = refusal(tmp_path, {"public_url": url})
    assert "sentinel.a2a.public_url: " in text and problem in text and "s3cret" not in text, text


@pytest.mark.parametrize("url", ["http://user:s3cret-pw@book.example/a2a", "http://book.example/a2a?k=s3cret",
                                 "http://user:s3cret-pw@127.1/a2a"])
def test_a_refused_listed_url_is_quoted_without_its_credentials(tmp_path: Path, url: str) -> None:
    text = refusal(tmp_path, {"bridge_targets": {"travel": url}})
    assert "sentinel.a2a.bridge_targets.travel: " in text and "s3cret" not in text, text


@pytest.mark.parametrize("a2a", [
    {"bridge_targets": {"travel": PEER, "hotel": "https://hotel.example/a2a"},
     "peer_tokens": {PEER: "t0ken-one", "http://127.0.0.1:8001": "t0ken-two",
                     "https://hotel.example": "t0ken", "https://unlisted.example:8443": "t0ken-three"}},
    {"bridge_targets": {"travel": "http://localhost:8001/a2a", "hotel": PEER}},  # compared as written
    {"orchestrator_url": "http://127.0.0.1:9/a2a", "peer_tokens": {"http://127.0.0.1:9": "t0ken-four"}},
    {"orchestrator_url": "http://svc:pw@127.0.0.1:9/a2a?key=k"},  # its own credentials: what it asks for
    {"public_url": "https://me.example/sentinel/"},  # behind a proxy, under a path
])
def test_sound_listings_still_load(tmp_path: Path, a2a: dict[str, Any]) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": a2a}}))
    load_config(path)


@pytest.mark.parametrize("command", [["config", "show"], ["serve"]])
def test_the_cli_exits_2_with_the_key_and_problem(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "d"),
                                             "a2a": {"bridge_targets": {"travel": "http://127.1/a2a"}}}}))
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), *command],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, (run.returncode, run.stderr)
    assert str(path) in run.stderr and "sentinel.a2a.bridge_targets.travel" in run.stderr \
        and "shorthand address" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("pinned", ["B00K", "\u0412\u041e\u041e\u041a", "\u0432\u043e\u043e\u043a"])
def test_a_pin_that_only_reads_as_a_listed_name_is_a_config_error(tmp_path: Path, pinned: str) -> None:
    """Pinned as a look-alike of the listed name, the listed peer's own card would be refused as imitating
    the pin (``CardKeys.imitated``): it could never be reached."""
    text = refusal(tmp_path, {"bridge_targets": {"book": PEER}, "peer_keys": {pinned: "sha256:" + "0" * 64}})
    assert "sentinel.a2a.peer_keys." in text and "'book'" in text, text


@pytest.mark.parametrize("pinned", ["book", "BOOK", "\uff42\uff4f\uff4f\uff4b"])
def test_a_pin_of_a_listed_name_in_any_folded_spelling_loads(tmp_path: Path, pinned: str) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": {"bridge_targets": {"book": PEER},
                                                     "peer_keys": {pinned: "sha256:" + "0" * 64}}}}))
    load_config(path)


@pytest.mark.parametrize("url", ["http://orch.example/a2a", "http://192.0.2.10:9000/a2a", "http://[2001:db8::1]/a2a",
                                 "http://localhost./a2a", "http://10.0.0.1/a2a", "HTTP://orch.example/a2a",
                                 "http://0.0.0.0:9/a2a", "http://[fe80::1%25eth0]:9/a2a",
                                 "http://user:s3cret-pw@orch.example/a2a?key=s3cret-key"])
def test_a_plaintext_orchestrator_beyond_loopback_is_a_config_error(tmp_path: Path, url: str) -> None:
    """Offers, the orchestrator's token and its answers would travel in the clear, and anyone on the path
    could answer as the orchestrator: refused at load, as a plaintext upstream beyond loopback is (there is
    no ``"tls": "off"`` for a peer: beyond loopback a peer counts only over verified TLS). It loaded."""
    text = refusal(tmp_path, {"orchestrator_url": url})
    # (a zone is no part of an address: such a host names no endpoint, whatever the scheme)
    why = "carries a zone" if "%25" in url else "plaintext beyond loopback"
    assert "sentinel.a2a.orchestrator_url: " in text and why in text, text
    assert "s3cret" not in text  # its credentials are never quoted


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/a2a", "http://localhost:9/a2a", "http://[::1]:9/a2a",
                                 "http://127.8.9.1/a2a", "https://orch.example/a2a",
                                 "https://user:pw@orch.example/a2a?key=k"])
def test_a_loopback_or_https_orchestrator_loads(tmp_path: Path, url: str) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"sentinel": {"a2a": {"orchestrator_url": url}}}))
    from sentinel_mcp.a2a.settings import A2ASettings

    section = load_config(path).sentinel.builtin_settings("a2a")
    assert A2ASettings.from_section(section).orchestrator_url == url
