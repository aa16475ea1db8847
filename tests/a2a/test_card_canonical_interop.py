"""The bytes Sentinel checks an agent card's signature against are the bytes a2a-sdk signs: its RFC 8785
canonicalizer, on the card as the SDK reads it (run in the a2a-sdk interpreter, ``A2A_SDK_PYTHON``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.a2a.test_sdk_interop import sdk_python

from sentinel_mcp.a2a.card_canonical import NotCanonical, canonical_json, signed_form

pytestmark = pytest.mark.timeout(60)
SCRIPT = Path(__file__).parent / "interop" / "sdk_canonical_card.py"

CARD = {
    "name": "p\u00e9che \U0001f600", "description": "ctl \u0001 tab\t quote\" back\\ sep\u2028 del\u007f",
    "version": "1", "iconUrl": "",
    "capabilities": {"streaming": False, "extensions": [{"uri": "urn:x", "params": {
        "half": 1.5, "big": 1e22, "small": 0.000001, "tiny": 1e-7, "int": 123456789012, "whole": 100.0,
        "neg": -0.5, "third": 1 / 3, "empty": [], "blank": "", "null": None, "\u20ac": 1, "a": 2,
        "\U0001f600": 3, "\ufb00": 4, "nested": {"deep": [{"x": ""}, {"y": [1, 2.25]}]}}}]},
    "supportedInterfaces": [{"url": "http://127.0.0.1:5/a2a", "protocolBinding": "JSONRPC",
                             "protocolVersion": "1.0"}],
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": ["t"], "examples": []}],
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "AA"}],
}


def test_sentinels_signed_form_is_a2a_sdks() -> None:
    done = subprocess.run([sdk_python(), str(SCRIPT)], input=json.dumps(CARD).encode(), capture_output=True,
                          timeout=50, check=True)
    assert signed_form(CARD) == done.stdout


@pytest.mark.parametrize("value", [2**53, float("nan"), "\ud800", {"k": {1, 2}}])
def test_values_with_no_canonical_form_are_refused(value: object) -> None:
    with pytest.raises(NotCanonical):
        canonical_json(value)


@pytest.mark.parametrize("section", [{}, {"api_keys": {"rover": "key-of-rover"}, "token": "a-bearer-token"}])
@pytest.mark.parametrize("tls", [False, True])
def test_sentinels_own_card_is_signed_in_the_form_a2a_sdk_verifies(
        section: dict[str, object], tls: bool) -> None:
    """a2a-sdk's verifier canonicalizes the card as it re-serializes it (proto3: a false plain bool dropped):
    Sentinel's card must read the same both ways, or SDK clients would refuse Sentinel's signature."""
    from sentinel_mcp.a2a.card import build_card
    from sentinel_mcp.a2a.settings import A2ASettings

    status = {"degraded": True, "note": "no responder"}
    settings = A2ASettings(**section).served_over_tls(tls, "optional")  # (with TLS: the mtls scheme too)
    card = build_card(settings, "https://127.0.0.1:5", status, "mark").to_wire()
    done = subprocess.run([sdk_python(), str(SCRIPT)], input=json.dumps(card).encode(), capture_output=True,
                          timeout=50, check=True)
    assert signed_form(card) == done.stdout
