"""The console sign-in secrets: what a person types into the web console's sign-in form, and nothing else.

A client holds its principal's token (the MCP and A2A fronts' bearer); had the token also signed a browser in,
a client (or the model driving it) could post the sign-in form and answer the question its own call waits on.
So the console takes a second secret that clients are never given: the owner's is generated on first start
beside the token (same file rules: a regular file of this user's, 0600, never a link, created whole), or set
as ``sentinel.http.console_secret``; a configured principal's is its ``console_secret`` (or
``console_secret_sha256``). The fronts' resolvers never see these, and a console secret equal to any token is
refused at start (it would make the secret a bearer, and the token a sign-in)."""

from __future__ import annotations

from pathlib import Path

from sentinel_mcp.identity import owner_token

SECRET_FILE = "console-secret"
WHAT = "the owner's console secret"


def secret_path(data_dir: Path) -> Path:
    return Path(data_dir) / SECRET_FILE


def load_or_create(data_dir: Path) -> tuple[str, bool]:
    """The owner's console secret and whether it was created just now (TokenFileError as for the token)."""
    return owner_token.load_or_create(data_dir, SECRET_FILE, WHAT)


def read(path: Path) -> str:
    return owner_token.read(path, WHAT)


def replace(data_dir: Path) -> str:
    """A new console secret for the owner: the old one signs nobody in, and its console sessions end."""
    return owner_token.replace(data_dir, SECRET_FILE, WHAT)
