"""The toolbox over the legacy HTTP+SSE transport (the real SDK server), with a tool ``storm``: ``n`` progress
notices under tokens that name no call of the client's (a string, a float, null, a bool, a list) and ``n``
"updated" of resources nobody subscribed to, written at once on the SSE stream, then its answer; and a tool
``odd_notices_call``: notices of unknown methods or malformed params (odd_notices.py), then its answer.

python -m tests.gateway.sse_storm_upstream PORT
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context

from tests.gateway.odd_notices import odd_notices
from tests.gateway.toolbox_server import RO, mcp

TOKENS = ["nobody", 1.5, None, True, [1]]


@mcp.tool(annotations=RO)
async def storm(n: int, ctx: Context) -> str:
    """Notices to nobody, ``2 n`` of them, then "stormed"."""
    outbound = ctx.session._connection.outbound  # raw: a token of any shape, as a hostile server writes it
    for i in range(n):
        token = TOKENS[i % len(TOKENS)]
        await outbound.notify("notifications/progress", {"progressToken": token, "progress": i})
        await outbound.notify("notifications/resources/updated", {"uri": f"sse://nobody/{i}"})
    return "stormed"


@mcp.tool(annotations=RO)
async def odd_notices_call(ctx: Context) -> str:
    """Notices that reach no one (odd_notices.py: those a session can write), then "hostile ok"."""
    outbound = ctx.session._connection.outbound
    for notice in odd_notices(sdk=True):
        await outbound.notify(notice["method"], notice.get("params"))
    return "hostile ok"


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(mcp.sse_app(host="127.0.0.1"), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
