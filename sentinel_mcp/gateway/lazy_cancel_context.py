"""What Sentinel's own dispatch contexts share (the lean HTTP call's, ``app/one_exchange_context.py``, and a
direct built-in call's, ``builtin_direct.py``): ``cancel_requested`` made when first read and no back channel.

Nothing on those paths sets the event (a call is cancelled by cancelling the task that runs its handler, and a
single exchange carries no cancellation) and most handlers never read it, while making it was four Python
frames a call (issue 21). A subclass sets ``_cancel`` to None."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError

from sentinel_mcp.gateway.quick_event import new_event


class LazyCancelContext:
    __slots__ = ("_cancel",)
    _cancel: anyio.Event | None
    can_send_request = False

    @property
    def cancel_requested(self) -> anyio.Event:
        if self._cancel is None:
            self._cancel = new_event()
        return self._cancel

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)
