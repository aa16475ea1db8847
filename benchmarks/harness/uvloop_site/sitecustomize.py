"""A gateway's event loop swapped for a benchmark, its code unchanged: on a process's ``PYTHONPATH`` (e.g.
``latency_ab.py --base . --base-env PYTHONPATH=<this dir> --this-env PYTHONPATH=<this dir>:<uvloop's dir>
--this-env BENCH_LOOP=uvloop``) it reads two variables at start-up.

``BENCH_LOOP=uvloop``: every asyncio loop the process makes is uvloop's (``anyio.run`` runs
``asyncio.Runner`` without a factory, which asks the policy). uvloop's ``subprocess_exec`` refuses
``process_group`` (``ValueError: unexpected kwargs``, where the gateway's fallback expects asyncio's
``TypeError``), so a stdio upstream would not start; here the group is made in the child instead
(``preexec_fn=os.setpgrp``: the same group, the upstream kept in the gateway's session as under asyncio, so
the two sides' upstreams cost the same; a child's Python between fork and exec, acceptable in a benchmark,
not in the product). And ``gateway/lean_http.py``'s connection asserts its transport is an
``asyncio.Transport``, which uvloop's TCP transport is not a subclass of (every HTTP upstream call failed:
"went away during the call"): that check is dropped here (the module imported at start-up to patch it).

``BENCH_NO_IDLE=1``: ``loop_is_idle`` always False (``gateway/idle_loop.py`` reads asyncio's selector loop's
internals; under uvloop it is never idle, so every audit row goes through the writer thread): the asyncio side
made to commit the same way, to compare the loops' own cost apart from that one difference.
"""

import os

if os.environ.get("BENCH_LOOP") == "uvloop":
    import asyncio

    import uvloop

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    _exec = uvloop.Loop.subprocess_exec

    async def _subprocess_exec(self, protocol_factory, *args, process_group=None, **kwargs):  # type: ignore[no-untyped-def]
        if process_group == 0:
            kwargs["preexec_fn"] = os.setpgrp
        elif process_group is not None:
            raise ValueError("process_group other than 0")
        return await _exec(self, protocol_factory, *args, **kwargs)

    uvloop.Loop.subprocess_exec = _subprocess_exec  # type: ignore[method-assign]

    import sentinel_mcp.gateway.lean_http as lean_http

    def _connection_made(self, transport):  # type: ignore[no-untyped-def]
        self.transport = transport

    lean_http._Connection.connection_made = _connection_made  # type: ignore[method-assign]

if os.environ.get("BENCH_NO_IDLE") == "1":
    import sentinel_mcp.gateway.idle_loop as idle_loop

    idle_loop.loop_is_idle = lambda: False  # before gateway/core.py imports it by name
