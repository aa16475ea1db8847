"""An stdio upstream's stdout fed to its reader as the pipe gives it, not one turn of the event loop later.

asyncio's subprocess transport hands each read of a child's pipe to its protocol through ``call_soon``
(``BaseSubprocessTransport._call``): the bytes wait in the loop's queue for its next turn (one more
``epoll_wait`` and a pass of ``_run_once``) before the reader, and the lean call's answer tap
(``lean_stdio._TappedStdout.at_once``), sees them. Every forwarded stdio call paid that turn (issue 21:
5 loop callbacks a call, one of them this hop).

Once the transport is connected, its queue holds nothing of this pipe ahead of a new read: the bytes of each
read were queued in an earlier turn, and a turn runs what was queued before it polls before the reads that
poll finds (``_run_once``), so they have all been fed when the next read comes. Feeding the read at once
keeps every order the queue kept: the pipe's bytes in order, its bytes before its end and before the process's
exit (both are still queued, after the bytes read before them). Before the transport is connected its own
pending calls hold the order: then the read goes the queued way as before.
"""

from __future__ import annotations

import asyncio
import asyncio.base_subprocess as base_subprocess
import asyncio.subprocess as asyncio_subprocess
from typing import Any, cast

STDOUT = 1
_STREAM_FED = asyncio_subprocess.SubprocessStreamProtocol.pipe_data_received


def feed_stdout_at_once(process: Any) -> bool:
    """Make ``process``'s (anyio's asyncio ``Process``) stdout reads reach its reader at once; False (nothing
    changed) for anything not made of asyncio's own subprocess transport, pipe protocol and stream protocol
    (anyio's subclass of it)."""
    inner = getattr(process, "_process", None)
    if not isinstance(inner, asyncio_subprocess.Process):
        return False
    transport = getattr(inner, "_transport", None)
    if not isinstance(transport, base_subprocess.BaseSubprocessTransport):
        return False
    pipes = getattr(transport, "_pipes", None)
    pipe = pipes.get(STDOUT) if isinstance(pipes, dict) else None
    protocol = getattr(transport, "_protocol", None)
    if (type(pipe) is not base_subprocess.ReadSubprocessPipeProto
            or getattr(pipe, "proc", None) is not transport or getattr(pipe, "fd", None) != STDOUT
            or not isinstance(protocol, asyncio_subprocess.SubprocessStreamProtocol)
            # asyncio's reading of the pipe (anyio's subclass adds only the exit's event)
            or type(protocol).pipe_data_received is not _STREAM_FED
            or not isinstance(protocol.stdout, asyncio.StreamReader)
            or "data_received" in vars(pipe)):
        return False
    queued = pipe.data_received
    fed = protocol.pipe_data_received
    owner = cast(base_subprocess.BaseSubprocessTransport, transport)

    def data_received(data: bytes) -> None:
        if owner._pending_calls is None:  # type: ignore[attr-defined]  # connected: nothing queued ahead
            fed(STDOUT, data)
        else:
            queued(data)

    pipe.data_received = data_received  # type: ignore[method-assign]
    return True
