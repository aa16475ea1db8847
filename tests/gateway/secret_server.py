"""A test upstream whose tools take a password (a secret argument by its name): one that works, one that
fails quoting the password in its error, one that hangs past its timeout, one that writes (asked first),
one that asks the person itself quoting the password."""

from __future__ import annotations

from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.types import ToolAnnotations

RO = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)

mcp = MCPServer("secrets", version="1.0")


@mcp.tool(annotations=RO)
def login(user: str, password: str) -> str:
    """Sign in (the password is never echoed)."""
    return f"welcome {user}"


@mcp.tool(annotations=RO)
def denied_login(user: str, password: str) -> str:
    """On the deny list: never runs."""
    return "ran"


@mcp.tool(annotations=RO)
def failing_login(user: str, password: str) -> str:
    """Fails the way careless servers do: quoting what it was given."""
    raise ValueError(f"wrong password {password!r} for {user} (token={password})")


@mcp.tool(annotations=RO)
async def hanging_login(user: str, password: str) -> str:
    """Never answers within the gateway's timeout."""
    await anyio.sleep(30)
    return "late"


@mcp.tool(annotations=WRITE)
def set_password(user: str, password: str) -> str:
    """A write: the default guard asks first."""
    return f"password of {user} changed"


class Ok(BaseModel):
    ok: bool


async def _ask_password(user: str, password: str) -> Elicit[Ok]:
    return Elicit(f"Really sign {user} in with the password {password}?", Ok)


@mcp.tool(annotations=RO)
async def asking_login(user: str, password: str, answer: Annotated[Ok, Resolve(_ask_password)]) -> str:
    """Asks the person itself, quoting the password in its question."""
    return f"asked: {answer.ok}"


if __name__ == "__main__":
    mcp.run()
