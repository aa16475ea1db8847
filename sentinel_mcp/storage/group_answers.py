"""How the SQLite writer thread answers its async callers: each answer kept until the group it ran in is
done, then handed to the caller's event loop with the rest (one wake-up a loop, not one a job)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

log = logging.getLogger(__name__)


def resolver(
    loop: asyncio.AbstractEventLoop,
    fut: "asyncio.Future[Any]",
    settled: list[tuple[asyncio.AbstractEventLoop, Callable[[], None]]],
) -> Callable[[Any, BaseException | None], None]:
    """How the writer thread answers an async caller: kept in ``settled`` (the writer's own list) and handed
    to the loop with the rest of its group (``_hand_over``)."""

    def settle(value: Any, error: BaseException | None) -> None:
        if fut.done():  # the caller was cancelled meanwhile
            return
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(value)

    def done(value: Any, error: BaseException | None) -> None:
        settled.append((loop, lambda: settle(value, error)))

    return done


def settle_all(settles: list[Callable[[], None]]) -> None:
    for settle in settles:
        try:
            settle()
        except Exception:  # noqa: BLE001 - one caller's trouble must not leave the others waiting
            log.exception("storage: could not hand a result back")
