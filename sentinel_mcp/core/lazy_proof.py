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
        if self._result is None:
            self._result = asyncio.ensure_future(self._render())
        return await asyncio.shield(self._result)

    def __repr__(self) -> str:
        return "LazyProof(rendered when read)"


async def rendered_proof(proof: Any) -> Any:
    """The proof as stored and shown: a LazyProof rendered, also one wrapped at the top level of a dict."""
    if isinstance(proof, LazyProof):
        return await proof.rendered()
    if isinstance(proof, dict) and any(isinstance(v, LazyProof) for v in proof.values()):
        return {k: (await v.rendered() if isinstance(v, LazyProof) else v) for k, v in proof.items()}
    return proof
