"""A test upstream with tools that misbehave on purpose (hang, die, ask, change its tool list).

stdio: python toolbox_server.py        HTTP: python toolbox_server.py --http PORT [HOST]
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import os
import sys
import time
import warnings
from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent, ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)

mcp = MCPServer("toolbox", version="1.0")


@mcp.tool(annotations=RO)
def echo(text: str) -> str:
    """Echo text back."""
    return text


@mcp.tool(annotations=RO)
def noop() -> str:
    """Do nothing (for benchmarks)."""
    return "ok"


@mcp.tool(annotations=RO)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


class Sum(BaseModel):
    total: float
    terms: int


@mcp.tool(annotations=RO)
def add(a: float, b: float) -> Sum:
    """Add two numbers (structured output with an output schema)."""
    return Sum(total=a + b, terms=2)


@mcp.tool(annotations=RO)
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress; returns start and end times."""
    start = time.time()
    steps = 4
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await anyio.sleep(seconds / steps)
    return f"{start:.6f} {time.time():.6f}"


@mcp.tool(annotations=RO)
async def held(path: str) -> str:
    """Appends "started" to the file ``path``, then answers "released" once ``path`` + ".go" exists (within
    60 s, else "never released"): a call kept in flight as long as a test needs, not for a guessed time."""
    with open(path, "a", encoding="utf-8") as f:
        f.write("started\n")
    with anyio.move_on_after(60):
        while not os.path.exists(path + ".go"):
            await anyio.sleep(0.01)
        return "released"
    return "never released"


@mcp.tool(annotations=RO)
async def chatty(ctx: Context) -> str:
    """Logs two lines while it works."""
    await ctx.info("chatty: first line")
    await ctx.warning("chatty: second line")
    return "said"


@mcp.tool(annotations=RO)
async def hang_marked(path: str) -> str:
    """Never answers; appends "started" to a file, and "cancelled" when its call is cancelled."""
    with open(path, "a", encoding="utf-8") as f:
        f.write("started\n")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        with open(path, "a", encoding="utf-8") as f:
            f.write("cancelled\n")
        raise
    return "unreachable"


@mcp.tool(annotations=RO)
async def hang() -> str:
    """Never answers."""
    await anyio.sleep(3600)
    return "unreachable"


@mcp.tool(annotations=RO)
def die() -> str:
    """The process exits in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@mcp.tool(annotations=DESTRUCTIVE)
def delete_thing(name: str) -> str:
    """Delete something (destructive)."""
    return f"deleted {name}"


class Ok(BaseModel):
    ok: bool


@mcp.tool(annotations=DESTRUCTIVE)
async def confirm_push(what: str, ctx: Context) -> str:
    """Asks its user by pushed elicitation (handshake-era connections only)."""
    r = await ctx.elicit(f"[toolbox] really {what}?", Ok)
    return f"{what}:{r.action}:{getattr(getattr(r, 'data', None), 'ok', None)}"


class Choice(BaseModel):
    word: str


async def _ask_word(item: str) -> Elicit[Choice]:
    return Elicit(f"[toolbox] a word for {item}", Choice)


@mcp.tool(annotations=RO)
async def ask_word(item: str, answer: Annotated[Choice, Resolve(_ask_word)]) -> str:
    """Asks its user era-portably (2026: InputRequiredResult; handshake: push)."""
    return f"{item}={answer.word}"


@mcp.tool(annotations=DESTRUCTIVE)
def write_marker(path: str, text: str) -> str:
    """Append a line to a file: the side effect tests look for (it must never run unless approved)."""
    with open(path, "a", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text + "\n")
    return f"wrote {path}"


async def _ask_marker_word(path: str) -> Elicit[Choice]:
    return Elicit(f"[toolbox] a word to write into {path}", Choice)


@mcp.tool(annotations=DESTRUCTIVE)
async def write_marker_asking(path: str, answer: Annotated[Choice, Resolve(_ask_marker_word)]) -> str:
    """Asks its user for a word (2026: InputRequiredResult), then appends it to a file (destructive)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(answer.word + "\n")
    return f"wrote {answer.word}"


async def _sample_marker_word(path: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"a word for {path}"))],
                  max_tokens=5)


@mcp.tool(annotations=DESTRUCTIVE)
async def write_marker_sampled(
    path: str, answer: Annotated[CreateMessageResult, Resolve(_sample_marker_word)]
) -> str:
    """Asks the client's model for a word (2026: InputRequiredResult; handshake: push), then appends it."""
    word = getattr(answer.content, "text", "")
    with open(path, "a", encoding="utf-8") as f:
        f.write(word + "\n")
    return f"wrote {word}"


async def _marker_roots(path: str) -> ListRoots:
    return ListRoots()


@mcp.tool(annotations=DESTRUCTIVE)
async def write_marker_rooted(path: str, answer: Annotated[ListRootsResult, Resolve(_marker_roots)]) -> str:
    """Asks the client's roots (2026: InputRequiredResult; handshake: push), then appends the first one."""
    root = str(answer.roots[0].uri) if answer.roots else ""
    with open(path, "a", encoding="utf-8") as f:
        f.write(root + "\n")
    return f"wrote {root}"


@mcp.tool(annotations=RO)
async def add_tool(name: str, ctx: Context) -> str:
    """Registers a new tool and announces the change."""
    mcp.add_tool(lambda: name, name=name, description="added at run time")
    try:
        await ctx.session.send_tool_list_changed()
    except Exception:  # noqa: BLE001 - modern connections have no standalone channel
        pass
    await ctx.notify_tools_changed()
    return "added"


@mcp.resource("toolbox://item/{key}")
async def item(key: str) -> str:
    if key.startswith("slow-"):  # toolbox://item/slow-2.5: answered after 2.5 s
        await anyio.sleep(float(key[5:]))
    return f"item {key}"


@mcp.resource("toolbox://static")
def static() -> str:
    return "static text"


@mcp.prompt()
def review(code: str) -> str:
    return f"Please review: {code}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        # a third argument: the address to listen on (a test's server "beyond loopback")
        host = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"
        mcp.run("streamable-http", port=int(sys.argv[2]), host=host)
    else:
        mcp.run()
