"""The owner's token followed from its file, the way the HTTP host follows it, for credential-lapse tests.

Its clock moves a second per reading, so the file is looked at again on every check: a test rotates the token
and the very next check sees it, without sleeping past the once-a-second look.
"""

from __future__ import annotations

from pathlib import Path

from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.resolver import token_digest


class SteppingClock:
    """A clock that moves a second per reading."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def followed_owner_token(keys: Path) -> tuple[FileSecret, str]:
    """The owner's token made (or read) in ``keys`` and a source that follows its file; returns both."""
    token, _ = owner_token.load_or_create(keys)
    path = owner_token.token_path(keys)
    source = FileSecret(path, "the owner's token", token, token_digest, clock=SteppingClock())
    return source, token
