"""``sentinel.oauth`` URLs are https, or http on this machine's loopback only (red team "identity").

The check read the URL's first characters: ``http://localhost.attacker.example`` and
``http://127.0.0.1@attacker.example`` began like a loopback URL, so a plaintext authorization server on
another host was published in the metadata every client follows to get its token."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sentinel_mcp.app.http_extras import OAuthSettings


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost.attacker.example",
        "http://localhost.attacker.example/authorize",
        "http://127.0.0.1.nip.io",
        "http://127.0.0.1@attacker.example",
        "http://localhost:9000@attacker.example/",
        "http://attacker.example",
        "https://user@auth.example",  # a name before "@" only misleads whoever reads the config
        "https://",
        "http://",
        "ftp://localhost",
        "HTTP://attacker.example",
    ],
)
@pytest.mark.parametrize("key", ["issuer", "resource", "documentation"])
def test_a_url_that_only_begins_like_loopback_is_refused(key, url):
    settings = {"issuer": "https://auth.example", key: url}
    with pytest.raises(ValidationError, match="must be an https:// URL"):
        OAuthSettings.model_validate(settings)


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example",
        "https://auth.example:8443/realms/x",
        "http://localhost:9000",
        "http://127.0.0.1/authorize",
        "http://[::1]:9000",
        "http://127.0.0.2:9000",
    ],
)
def test_https_and_loopback_http_are_kept(url):
    assert OAuthSettings.model_validate({"issuer": url}).issuer == url
