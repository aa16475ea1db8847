"""A decision's proof that the guard keeps compact and renders (readable tree, quoted citations) when read.

An allow does not wait for the text of its proof: the guard answers with a ``LazyProof`` and whoever shows or
stores the proof awaits ``rendered_proof`` (the gateway does it before the decision row is written, so the
audit row is the same rendered proof as before, written ahead and hash-chained as before).
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable


class LazyProof:
    """A proof rendered once, on first request (concurrent requests share the one rendering)."""

    __slots__ = ("_render", "_result")

    def __init__(self, render: Callable[[], Awaitable[Any]]) -> None:
        self._render = render
        self._result: asyncio.Future[Any] | None = None

    async def rendered(self) -> Any:
        if self._result is not None:  # rendered, or being rendered for another reader
            return await asyncio.shield(self._result)
        self._result = asyncio.get_running_loop().create_future()
        self._result.add_done_callback(_retrieved)
        try:
            value = await self._render()  # in this task: no task of its own (a decision's worth of overhead)
        except asyncio.CancelledError:
            self._result.cancel()
            raise
        except BaseException as e:
            self._result.set_exception(e)
            raise
        self._result.set_result(value)
        return value

    def __repr__(self) -> str:
        return "LazyProof(rendered when read)"


async def rendered_proof(proof: Any) -> Any:
    """The proof as stored and shown: a LazyProof rendered, also one wrapped at the top level of a dict."""
    if isinstance(proof, LazyProof):
        return await proof.rendered()
    if isinstance(proof, dict) and any(isinstance(v, LazyProof) for v in proof.values()):
        return {k: (await v.rendered() if isinstance(v, LazyProof) else v) for k, v in proof.items()}
    return proof


def _retrieved(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()  # raised to the reader that rendered it: not "never retrieved"
